#!/usr/bin/env bash
# `just deploy-check`: the operator's files in deploy/ checked with their own tools. The alerting
# rules pass `promtool check rules` and their unit tests; the systemd unit passes `systemd-analyze
# verify` (against the release binary, shown at the unit's path in a private mount namespace:
# nothing outside it changes) and keeps its exposure at most 1.5. (The dashboard's metrics are
# checked against a running server's /metrics by tests/api/operations.rs.)
set -euo pipefail
cd "$(dirname "$0")/.."
binary="${1:-target/release/opsd}"
if ! command -v promtool >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends prometheus >/dev/null
fi
(cd deploy/monitoring && promtool check rules alerts.yml && promtool test rules alerts_test.yml)
unit=deploy/systemd/opsd.service
unshare --mount sh -c "mount -t tmpfs tmpfs /usr/local/bin && cp '$binary' /usr/local/bin/opsd \
  && systemd-analyze verify --man=no '$unit'"
echo "$unit: systemd-analyze verify passed"
# --threshold is in tenths: 15 is an exposure of 1.5.
exposure="$(systemd-analyze security --offline=true --threshold=15 "$unit" | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')" \
  || { systemd-analyze security --offline=true "$unit" | grep -v '^✓'; echo "$unit: exposure above 1.5" >&2; exit 1; }
echo "$unit: systemd-analyze security exposure $exposure (at most 1.5)"
