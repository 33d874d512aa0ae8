#!/usr/bin/env bash
# pg-down.sh [run|test|all]: stops the private clusters of scripts/pg-up.sh that run (default all).
# With --purge as the second argument, their data is deleted too.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/pg-cluster.sh

which="${1:-all}"
[ "$which" = all ] && names="run test" || names="$which"
bindir="$(find_bindir || true)"
for name in $names; do
  cluster_paths "$name"
  [ -s "$data/PG_VERSION" ] || continue
  as_owner "$bindir/pg_ctl" -D "$data" -m fast -w stop >/dev/null 2>&1 || true
  if [ "${2:-}" = "--purge" ]; then
    rm -rf "$data"
    rmdir "$(dirname "$data")" 2>/dev/null || true
  fi
done
