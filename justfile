# opsd: `just run` serves a demo, `just test` runs the whole suite.

set shell := ["bash", "-euo", "pipefail", "-c"]

default:
    @just --list

# Serve on BIND_ADDR (default 127.0.0.1:8080) with a demo team; uses DATABASE_URL or a private cluster.
run:
    @scripts/run-demo.sh

# The whole suite: architecture check, unit tests, adapters and HTTP against a real PostgreSQL.
test *args:
    #!/usr/bin/env bash
    set -euo pipefail
    scripts/install-build-deps.sh
    export TEST_DATABASE_URL="$(scripts/pg-up.sh test)"
    scripts/check-architecture.py
    # The AI SDK that parses the assistant's stream in a test, pinned by tests/sdk/package-lock.json.
    [ -d tests/sdk/node_modules/ai ] || npm ci --prefix tests/sdk --no-audit --no-fund --loglevel=error
    # The console's browser test: the pinned playwright-core drives Debian's chromium (no browser download), with axe-core.
    [ -d tests/browser/node_modules/axe-core ] || npm ci --prefix tests/browser --no-audit --no-fund --loglevel=error
    # The typed client's contract test (tsc, openapi-fetch and the AI SDK), pinned by its lockfile.
    [ -d clients/typescript/node_modules/ai ] || npm ci --prefix clients/typescript --no-audit --no-fund --loglevel=error
    command -v chromium >/dev/null || scripts/install-chromium.sh
    # Databases left behind by killed test runs.
    psql "$TEST_DATABASE_URL" -tAc "SELECT datname FROM pg_database WHERE datname LIKE 'opsd_t_%'" \
      | while read -r db; do [ -n "$db" ] && psql "$TEST_DATABASE_URL" -qc "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" >/dev/null || true; done
    if cargo nextest --version >/dev/null 2>&1; then
      cargo nextest run --workspace --no-fail-fast --test-threads 6 {{args}}
    else
      cargo test --workspace --no-fail-fast {{args}}
    fi

# Stop the private PostgreSQL clusters (run and test).
db-down:
    scripts/pg-down.sh all

# Formatting (rustfmt.toml, 120 columns), clippy with warnings as errors, squawk on the migrations
# added since the last release (.squawk.toml), and the links of the README and the manual; CI runs it.
lint:
    cargo fmt --all -- --check
    cargo clippy --workspace --all-targets -- -D warnings
    scripts/lint-migrations.sh
    scripts/check-links.sh

# Licenses, bans and sources of every dependency (deny.toml); installs cargo-deny when missing.
deny:
    command -v cargo-deny >/dev/null 2>&1 || cargo install cargo-deny --locked
    cargo deny check licenses bans sources

# The served API document against the last release's (openapi/released.json): fails on a breaking
# change unless info.version was raised as semver asks. `just api-release` takes a new baseline.
api-check:
    cargo run -q -p opsd -- openapi > target/openapi.json
    scripts/api-diff.sh openapi/released.json target/openapi.json

# Regenerate the TypeScript client's types (clients/typescript/src/schema.d.ts) from the served document.
client:
    cargo run -q -p opsd -- openapi > target/openapi.json
    [ -x clients/typescript/node_modules/.bin/openapi-typescript ] || npm ci --prefix clients/typescript --no-audit --no-fund --loglevel=error
    cd clients/typescript && ./node_modules/.bin/openapi-typescript ../../target/openapi.json --output src/schema.d.ts

# Fails when the committed client differs from what the served document generates, or does not type-check (strict).
client-check:
    cargo run -q -p opsd -- openapi > target/openapi.json
    [ -x clients/typescript/node_modules/.bin/openapi-typescript ] || npm ci --prefix clients/typescript --no-audit --no-fund --loglevel=error
    cd clients/typescript && ./node_modules/.bin/openapi-typescript ../../target/openapi.json --output ../../target/schema.d.ts >/dev/null
    diff -u clients/typescript/src/schema.d.ts target/schema.d.ts || { echo "the committed client is stale: run just client" >&2; exit 1; }
    cd clients/typescript && ./node_modules/.bin/tsc --noEmit --strict -p .

# Record the served API document as the released one (at a release, after raising info.version).
api-release:
    cargo run -q -p opsd -- openapi > openapi/released.json

# Fuzz the HTTP surface with schemathesis against /openapi.json of a running server.
fuzz-api:
    scripts/fuzz-api.sh

# The release binaries the checks run (opsd, the chaos suite, the soak's fakes), built in one
# invocation every recipe shares: one feature resolution, so no recipe rebuilds what another built.
release-bins:
    cargo build -q --release -p opsd --bin opsd -p opsd-tests --bin opsd-chaos --bin opsd-soak-fakes

# Fault injection against the release binary: one line per scenario, non-zero when one does not hold.
chaos:
    #!/usr/bin/env bash
    set -euo pipefail
    export TEST_DATABASE_URL="$(scripts/pg-up.sh test)"
    just release-bins
    ./target/release/opsd-chaos ./target/release/opsd

# The operator's files checked with their own tools: the systemd unit (verify, security exposure).
deploy-check:
    just release-bins
    scripts/check-deploy.sh target/release/opsd

# The release binary with its dependency tree embedded (cargo auditable: `cargo audit bin` reads it)
# and a CycloneDX SBOM of the service, in target/release/.
release:
    command -v cargo-auditable >/dev/null 2>&1 || cargo install cargo-auditable --locked
    command -v cargo-cyclonedx >/dev/null 2>&1 || cargo install cargo-cyclonedx --locked
    cargo auditable build --release --locked -p opsd --bin opsd
    # cargo cyclonedx writes one SBOM into every workspace member's folder: opsd's is kept, the rest removed.
    cargo cyclonedx --manifest-path bins/opsd/Cargo.toml --format json --spec-version 1.5 --override-filename opsd.cdx
    mv bins/opsd/opsd.cdx.json target/release/opsd.cdx.json
    find crates tests bins -name opsd.cdx.json -delete
    @echo "target/release/opsd (auditable) and target/release/opsd.cdx.json (CycloneDX 1.5)"

# opsd's image from deploy/container/Containerfile's runtime stage, built and run with podman on a
# Debian base made here (no registry is reachable); several minutes the first time.
container:
    just release-bins
    scripts/container.sh target/release/opsd "$(scripts/pg-up.sh test)"

# A local HA cluster (root): etcd, three PostgreSQL nodes under Patroni, HAProxy, PgBouncer in
# transaction mode and three opsd instances, each host its own network namespace; prints lines to try.
cluster:
    just release-bins
    tools/cluster/cluster.py up target/release/opsd

# Stop every process of the cluster and remove its namespaces.
cluster-down:
    tools/cluster/cluster.py down

# The cluster's scenarios (failover, replicas, pooler restart, ...): one line each, non-zero when one does not hold.
cluster-test:
    just release-bins
    tools/cluster/cluster_test.py target/release/opsd

# A rolling upgrade from the previous release (the last in `releases`) to this one under the soak's
# whole workload: pre-deploy migrations, each instance drained and replaced, post-deploy, a rollback
# (tools/soak/upgrade.py; root, like the cluster).
upgrade-test seconds="120":
    just release-bins
    scripts/previous-release.sh build
    tools/soak/upgrade.py {{seconds}} target/previous-release/opsd target/release/opsd

# The previous release's black-box suite on this release's pre-deploy schema (scripts/previous-release.sh).
previous-release-test:
    scripts/previous-release.sh test

# A Jepsen-style soak over the cluster: concurrent clients, faults from a seeded schedule, a checker
# (lost, twice, stuck, 500s, p99); `just soak 1800 42` reruns seed 42 for 30 minutes. Results in target/soak/.
soak seconds="180" seed="":
    just release-bins
    tools/soak/soak.py {{seconds}} "{{seed}}" target/release/opsd

# What only needs to run before a release, kept out of CI's 50 minutes: a soak on a random seed (printed;
# `just soak SECONDS SEED` reruns it), the rostering benchmark, and the auditable release with its SBOM.
nightly seconds="600":
    just fuzz-api
    just soak {{seconds}}
    just bench-roster --largest
    just release

# The rostering engine on the Shift Scheduling Benchmark: instances 1 to 4 of ../shared/research/rostering
# and every FILE[=BEST_KNOWN] given, 60 s each on 2 threads; one row per instance (objective, bound, gap).
bench-roster *instances:
    just release-bins
    tools/bench-roster/bench_roster.py target/release/opsd {{instances}}

# Throughput and latency figures (release build; installs wrk when missing).
bench:
    TEST_DATABASE_URL="$(scripts/pg-up.sh test)" scripts/bench.sh
