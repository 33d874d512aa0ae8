#!/usr/bin/env bash
# scripts/api-diff.sh RELEASED CURRENT: non-zero when CURRENT breaks a client of RELEASED (a removed
# operation, field or enum value, a new required parameter, a narrowed type: Optic's breaking-change
# rules) unless CURRENT's info.version raises RELEASED's as semver asks (the major, or the minor
# while the major is 0). Prints Optic's findings either way.
set -euo pipefail
released="$(realpath "$1")" current="$(realpath "$2")"
cd "$(dirname "$0")/.."
tool=tools/api-contract
[ -x "$tool/node_modules/.bin/optic" ] || npm ci --prefix "$tool" --no-audit --no-fund --loglevel=error >/dev/null
version() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["info"]["version"])' "$1"; }
from="$(version "$released")" to="$(version "$current")"
# Whether `to` may break clients of `from`: 1.x -> 2.x, or 0.1.x -> 0.2.x.
breaking_allowed="$(python3 - "$from" "$to" <<'PY'
import sys
(a, b) = ([int(p) for p in v.split("-")[0].split(".")[:3]] for v in sys.argv[1:3])
print("yes" if (b[0] > a[0]) or (a[0] == 0 and b[0] == 0 and b[1] > a[1]) else "no")
PY
)"
if (cd "$tool" && OPTIC_TELEMETRY_LEVEL=off ./node_modules/.bin/optic diff "$released" "$current" --check); then
  echo "api-diff: no breaking change from $from to $to"
elif [ "$breaking_allowed" = yes ]; then
  echo "api-diff: breaking changes, allowed by the version raise from $from to $to"
else
  echo "api-diff: breaking changes from $released ($from) to $current ($to): raise info.version's major (minor while 0.x) or keep the old shape" >&2
  exit 1
fi
