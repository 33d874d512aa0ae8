#!/usr/bin/env bash
# Stops the private cluster of scripts/pg-up.sh, if it runs.
set -euo pipefail
cd "$(dirname "$0")/.."
data="$PWD/.data/pg"
[ -s "$data/PG_VERSION" ] || exit 0
bindir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$bindir/pg_ctl" -D "$data" -m fast stop || true
else "$bindir/pg_ctl" -D "$data" -m fast stop || true; fi
