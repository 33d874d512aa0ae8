#!/usr/bin/env bash
# The body of `just run`: builds opsd (release), makes sure a database is there (DATABASE_URL, else
# the durable private cluster), migrates, seeds the demo team, gives the demo a local identity and
# web push keys, serves, runs each job once, and prints ready lines to try every kind of route.
# OPSD_BIN names a prebuilt opsd to serve instead of building one (the quick-start test uses it).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .data
log="$PWD/.data/run.log"
: >"$log"
step() { printf '%-12s %s\n' "$1" "$2"; }
fail() { echo "$1 failed; see $log" >&2; exit 1; }

export API_KEY="${API_KEY:-dev-api-key}" CRON_SECRET="${CRON_SECRET:-dev-cron-secret}"
export BIND_ADDR="${BIND_ADDR:-127.0.0.1:8080}"
port="${BIND_ADDR##*:}"
base="http://localhost:$port"

if [ -n "${OPSD_BIN:-}" ]; then
  bin="$OPSD_BIN"
else
  scripts/install-build-deps.sh
  cargo build --release --bin opsd
  bin="$PWD/target/release/opsd"
fi

if [ -z "${DATABASE_URL:-}" ]; then
  server="$(scripts/pg-up.sh run)"
  export DATABASE_URL="$(scripts/ensure-database.sh "$server" opsd)"
fi
step database "$DATABASE_URL"
# The demo runs one release only: the post-deploy steps too.
"$bin" migrate --post-deploy >>"$log" 2>&1 || fail "migrating"
step migrations "up to date"
"$bin" seed-demo >.data/demo.env 2>>"$log" || fail "seeding"
source <(sed 's/^/DEMO_/' .data/demo.env)
step "demo data" "team $DEMO_team_id, location $DEMO_location_slug ($DEMO_location_id)"

# A local identity, unless one is configured: its public key is trusted by this server only.
if [ -z "${IDENTITY_JWT_PUBLIC_KEY:-}" ] && [ -z "${IDENTITY_JWKS_URL:-}" ]; then
  "$bin" dev-keys .data/dev-identity >>"$log" 2>&1 || fail "creating the dev identity key"
  export IDENTITY_JWT_PUBLIC_KEY="$(cat .data/dev-identity/public.pem)"
  export OPSD_DEV_SIGNING_KEY="$PWD/.data/dev-identity/private.pem"
  step identity "dev key in .data/dev-identity (tokens: opsd dev-token)"
fi
if [ -z "${VAPID_PRIVATE_KEY:-}" ]; then
  if [ ! -s .data/vapid.env ]; then
    (umask 077 && "$bin" vapid-keys >.data/vapid.env)
  fi
  set -a && source .data/vapid.env && set +a
  step "web push" "VAPID keys in .data/vapid.env"
fi
export APP_ORIGIN="${APP_ORIGIN:-$base}"
# The demo's admin is also an operator, so every console page opens for them.
export OPERATOR_USER_IDS="${OPERATOR_USER_IDS:-user_demo}"

token="" console="$base/console   (sign in with the identity provider first)"
if [ -n "${OPSD_DEV_SIGNING_KEY:-}" ]; then
  token="$("$bin" dev-token --user user_demo --team "$DEMO_team_id" --role admin 2>>"$log")" || fail "signing a dev token"
  # One-time: it sets the console's session cookie and is spent; the ticket is printed here only.
  link="$("$bin" dev-sign-in-link --user user_demo --team "$DEMO_team_id" --role admin 2>>"$log")" || fail "making a sign-in link"
  console="$base$link   (the console, signed in as the demo's admin and operator; works once, within 15 minutes)"
fi
# Served in the background until the demo's jobs have run once (the console's jobs page shows
# their history); SIGINT or SIGTERM reach the server, and this script ends when it does.
"$bin" serve &
server=$!
trap 'kill -TERM "$server" 2>/dev/null || true' INT TERM
for _ in $(seq 1 300); do
  curl -fs "$base/health/ready" >/dev/null 2>&1 && break
  kill -0 "$server" 2>/dev/null || fail "starting the server"
  sleep 0.1
done
for job in $("$bin" jobs | grep -o '/cron/[a-z0-9-]*'); do
  curl -s -o /dev/null -H "Authorization: Bearer $CRON_SECRET" "$base$job" || true
done
step jobs "each ran once (the console's Jobs page)"

json="-H 'content-type: application/json'"
auth="-H \"Authorization: Bearer \$OPSD_TOKEN\""
cat <<EOF

opsd on $base  (API key $API_KEY, cron secret $CRON_SECRET; log of the steps: .data/run.log)
Try it: open the console, or paste the export line first (an admin of the demo team for 12 hours), then any line.
  open $console
  export OPSD_TOKEN=$token
  open $base/docs   (the API reference; set a token under Authentication to try routes)
  curl -s $base/health/ready
  curl -s -H 'Authorization: Bearer $API_KEY' '$base/api/analytics/optimization?teamId=$DEMO_team_id&weekOf=$DEMO_week_of'
  curl -s -H 'Authorization: Bearer $API_KEY' '$base/api/analytics/variance?teamId=$DEMO_team_id&weekOf=$DEMO_week_of'
  curl -s -H 'Authorization: Bearer $API_KEY' '$base/api/analytics/forecast?teamId=$DEMO_team_id&weekOf=$DEMO_this_week_of'
  curl -s $auth $json -d '{"locationId":"$DEMO_location_id","type":"Maintenance","severity":"low","notes":"Walk-in door sticks"}' $base/api/incidents
  curl -s $auth $json -d '{"locationId":"$DEMO_location_id","date":"$(date -u +%F)","shift":"evening","actualSales":2450.5,"goalSales":2300,"hero":"Maria"}' $base/api/reports/shift
  curl -sN $auth $json -d '{"messages":[{"role":"user","content":"How did last week go?"}]}' $base/api/assistant/chat
  curl -s $auth $json -d '{"title":"Hello","body":"From opsd"}' $base/api/push/send
  curl -s -H 'Authorization: Bearer $CRON_SECRET' $base/cron/prune-soft-deleted-contacts
Another user: OPSD_DEV_SIGNING_KEY=.data/dev-identity/private.pem $bin dev-token --user user_2 --team $DEMO_team_id --role member

EOF
# Until the server has stopped (a signal interrupts `wait`; the trap passed it on).
while kill -0 "$server" 2>/dev/null; do wait "$server" || true; done
