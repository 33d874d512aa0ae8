#!/usr/bin/env bash
# `just deploy-check`: the operator's files in deploy/ checked with their own tools. The systemd unit
# passes `systemd-analyze verify` (against the release binary, shown at the unit's path in a private
# mount namespace: nothing outside it changes) and keeps its exposure at most 1.5.
set -euo pipefail
cd "$(dirname "$0")/.."
binary="${1:-target/release/opsd}"
unit=deploy/systemd/opsd.service
unshare --mount sh -c "mount -t tmpfs tmpfs /usr/local/bin && cp '$binary' /usr/local/bin/opsd \
  && systemd-analyze verify --man=no '$unit'"
echo "$unit: systemd-analyze verify passed"
# --threshold is in tenths: 15 is an exposure of 1.5.
exposure="$(systemd-analyze security --offline=true --threshold=15 "$unit" | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')" \
  || { systemd-analyze security --offline=true "$unit" | grep -v '^✓'; echo "$unit: exposure above 1.5" >&2; exit 1; }
echo "$unit: systemd-analyze security exposure $exposure (at most 1.5)"
