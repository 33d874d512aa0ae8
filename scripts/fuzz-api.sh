#!/usr/bin/env bash
# Runs schemathesis against /openapi.json of a real server on a scratch database, with valid
# credentials for each group of routes. Fails on any 5xx and on any answer that breaks the document.
set -euo pipefail
cd "$(dirname "$0")/.."
examples="${FUZZ_MAX_EXAMPLES:-40}"
# A free port, as the tests take: a fixed one fails whenever anything else holds it.
port="${FUZZ_PORT:-$(scripts/free-port.sh)}"
base="http://127.0.0.1:$port"

if [ ! -x .venv/bin/st ]; then
  python3 -m venv .venv
  .venv/bin/pip install -q "schemathesis==4.32.5" "pyjwt[crypto]==2.10.1"
fi

server="$(scripts/pg-up.sh test)"
psql "$server" -qc "DROP DATABASE IF EXISTS opsd_fuzz WITH (FORCE)" >/dev/null
psql "$server" -qc "CREATE DATABASE opsd_fuzz" >/dev/null
cargo build -q --bin opsd

export DATABASE_URL="${server%/*}/opsd_fuzz" BIND_ADDR="127.0.0.1:$port" \
  API_KEY="fuzz-api-key" CRON_SECRET="fuzz-cron-secret" APP_ORIGIN="https://app.fuzz.example" \
  IDENTITY_JWT_PUBLIC_KEY="$(cat tests/fixtures/jwt-signing-key.pub.pem)" RUST_LOG="${RUST_LOG:-warn}" \
  IDENTITY_WEBHOOK_SECRET="whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" COUPON_WEBHOOK_SECRET="whsec_dGVzdC1jb3Vwb24tc2VjcmV0LWZvci1vcHNk" \
  COUPON_EXPIRY_ENABLED=true VAPID_SUBJECT="mailto:fuzz@example.com" ASSISTANT_RATE_LIMIT_PER_MINUTE=1000000 \
  VAPID_PRIVATE_KEY="$(sed -n 's/^pub const VAPID_PRIVATE_KEY: &str = "\(.*\)";/\1/p' tests/support/push_fake.rs)"
./target/debug/opsd serve > .data/fuzz-server.log 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do curl -fs "$base/health/ready" >/dev/null 2>&1 && break; sleep 0.2; done
./target/debug/opsd seed-demo >/dev/null
# A reservation of the demo location, which only the coupon producer's signed events could make: its
# id goes to the two operations that read and redeem reservations.
reservation="$(cat /proc/sys/kernel/random/uuid)"
psql "$DATABASE_URL" -q -v ON_ERROR_STOP=1 >/dev/null <<SQL
WITH offer AS (
  INSERT INTO coupon_offers (id, team_id, location_id, name, capacity, held, created_at)
  VALUES (gen_random_uuid(), 'org_demo', '00000000-0000-7000-8000-00000000d000', 'Fuzz offer', 10, 1, now())
  RETURNING id)
INSERT INTO coupon_reservations (id, offer_id, guest_id, state, expires_at, created_at)
SELECT '$reservation', id, 'guest-fuzz', 'active', now() + interval '1 day', now() FROM offer;
SQL
# Each generated request gets a fresh Idempotency-Key, as a client's would (scripts/fuzz_hooks.py).
export SCHEMATHESIS_HOOKS="$PWD/scripts/fuzz_hooks.py"
config=".data/schemathesis.toml"
cat >"$config" <<TOML
# Written by scripts/fuzz-api.sh. The run fails when an operation never got past validation or never
# found its data: the document's rules and examples must let a client reach every operation.
[warnings]
fail-on = ["missing_test_data", "validation_mismatch"]

# This machine resolves no public name, so the push-service host of every subscription is refused
# here ("the host does not resolve"); where DNS works the documented example is accepted.
[[operations]]
include-name = "POST /api/push/subscribe"
warnings = false

# A page's cursor is opaque: only one this service issued passes, which no generator can make, so
# most generated cursors are refused (400 validation_failed, as they should be). tests/api/paging.rs
# walks every paged list by its Link headers.
[[operations]]
include-name = "GET /api/contacts"
warnings = false

[[operations]]
include-name = "GET /api/locations"
warnings = false

[[operations]]
include-name = "GET /api/announcements"
warnings = false

[[operations]]
include-name = "GET /api/coupons/reservations/{id}"
parameters = { id = "$reservation" }

[[operations]]
include-name = "POST /api/coupons/reservations/{id}/redeem"
parameters = { id = "$reservation" }
TOML

jwt="$(.venv/bin/python - <<'PY'
import time, jwt
key = open("tests/fixtures/jwt-signing-key.pem").read()
now = int(time.time())
print(jwt.encode({"sub": "user_fuzz", "o": {"id": "org_demo", "rol": "admin"}, "iat": now, "nbf": now, "exp": now + 3600},
                 key, algorithm="RS256", headers={"kid": "ins_test"}))
PY
)"

checks="not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance"
run() { # header path-regex phases
  local header="$1" regex="$2" phases="$3"; shift 3
  # A group whose routes are not built yet has nothing to fuzz.
  if ! curl -fs "$base/openapi.json" | .venv/bin/python -c "import json,re,sys; sys.exit(0 if any(re.search(sys.argv[1], p) for p in json.load(sys.stdin)['paths']) else 1)" "$regex"; then
    echo "fuzz-api: no route matches $regex yet"; return 0
  fi
  # The stateful phase follows the document's links (a created incident to its comments and status,
  # a location to its reports, an offer and a contact to their reads and deletion): the links are all
  # between the routes of the first group.
  .venv/bin/st --config-file "$config" run "$base/openapi.json" --include-path-regex "$regex" --url "$base" \
    --checks "$checks" --max-examples "$examples" --phases "$phases" \
    --header "$header" --header "Origin: https://app.fuzz.example" --header "Cookie: __session=$jwt" --seed 7 "$@"
}
status=0
run "Authorization: Bearer $jwt" '^/(api/(locations|team|incidents|contacts|reports|announcements|push|assistant|coupons|webhooks|automation)|health|metrics|openapi)' \
  examples,coverage,fuzzing,stateful || status=1
run "Authorization: Bearer fuzz-api-key" '^/api/(analytics|schedule)' examples,coverage,fuzzing || status=1
run "Authorization: Bearer fuzz-cron-secret" '^/cron/' examples,coverage,fuzzing || status=1
if grep -q '"status":5\|status=5' .data/fuzz-server.log 2>/dev/null; then echo "server logged 5xx answers; see .data/fuzz-server.log"; fi
exit $status
