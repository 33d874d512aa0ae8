# opsd: `just run` serves a demo, `just test` runs the whole suite.

set shell := ["bash", "-euo", "pipefail", "-c"]

dev_api_key := env_var_or_default("API_KEY", "dev-api-key")
dev_cron_secret := env_var_or_default("CRON_SECRET", "dev-cron-secret")
bind_addr := env_var_or_default("BIND_ADDR", "127.0.0.1:8080")

default:
    @just --list

# Serve on BIND_ADDR (default 127.0.0.1:8080) with a demo team; uses DATABASE_URL or a private cluster.
run:
    #!/usr/bin/env bash
    set -euo pipefail
    server="$(scripts/pg-up.sh)"
    export DATABASE_URL="${DATABASE_URL:-$(scripts/ensure-database.sh "$server" opsd)}"
    export API_KEY="{{dev_api_key}}" CRON_SECRET="{{dev_cron_secret}}" BIND_ADDR="{{bind_addr}}"
    cargo build --release --bin opsd
    ./target/release/opsd migrate
    ./target/release/opsd seed-demo > .data/demo.env
    source <(sed 's/^/export DEMO_/' .data/demo.env)
    echo
    echo "opsd on http://{{bind_addr}}  database: $DATABASE_URL"
    echo "  API key:     $API_KEY"
    echo "  cron secret: $CRON_SECRET"
    echo "  demo team:   $DEMO_team_id, location $DEMO_location_slug ($DEMO_location_id)"
    echo "try:"
    echo "  curl -s localhost:${BIND_ADDR##*:}/health/ready"
    echo "  curl -s -H 'Authorization: Bearer $API_KEY' 'localhost:${BIND_ADDR##*:}/api/analytics/optimization?teamId=$DEMO_team_id&weekOf=$DEMO_week_of'"
    echo
    exec ./target/release/opsd serve

# The whole suite: architecture check, unit tests, adapters and HTTP against a real PostgreSQL.
test *args:
    #!/usr/bin/env bash
    set -euo pipefail
    export TEST_DATABASE_URL="$(scripts/pg-up.sh)"
    scripts/check-architecture.py
    # The AI SDK that parses the assistant's stream in a test, pinned by tests/sdk/package-lock.json.
    [ -d tests/sdk/node_modules/ai ] || npm ci --prefix tests/sdk --no-audit --no-fund --loglevel=error
    # Databases left behind by killed test runs.
    psql "$TEST_DATABASE_URL" -tAc "SELECT datname FROM pg_database WHERE datname LIKE 'opsd_t_%'" \
      | while read -r db; do [ -n "$db" ] && psql "$TEST_DATABASE_URL" -qc "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" >/dev/null || true; done
    if cargo nextest --version >/dev/null 2>&1; then
      cargo nextest run --workspace --no-fail-fast --test-threads 6 {{args}}
    else
      cargo test --workspace --no-fail-fast {{args}}
    fi

# Stop the private PostgreSQL cluster.
db-down:
    scripts/pg-down.sh

lint:
    cargo clippy --workspace --all-targets -- -D warnings

# Fuzz the HTTP surface with schemathesis against /openapi.json of a running server.
fuzz-api:
    scripts/fuzz-api.sh

# Throughput and latency figures (release build; installs wrk when missing).
bench:
    TEST_DATABASE_URL="$(scripts/pg-up.sh)" scripts/bench.sh
