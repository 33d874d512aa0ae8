#!/usr/bin/env bash
# The migrations newer than the last release's (the `releases` file's last line names it), linted by
# squawk (pinned; PyPI's squawk-cli ships its binary) with `.squawk.toml`. Older ones are history.
set -euo pipefail
cd "$(dirname "$0")/.."
version=2.70.0
venv=.venv/squawk
if [ "$("$venv/bin/squawk" --version 2>/dev/null)" != "squawk $version" ]; then
  python3 -m venv "$venv" && "$venv/bin/pip" install -q "squawk-cli==$version"
fi
released="$(awk '!/^#/ && NF { last = $4 } END { print last }' releases)"
[[ "$released" =~ ^[0-9]{6}$ ]] || { echo "releases: the last release names no last migration (NNNNNN)" >&2; exit 1; }
added=()
for migration in migrations/*/up.sql; do
  number="$(basename "$(dirname "$migration")" | sed -E 's/^[0-9-]+-([0-9]{6})_.*/\1/')"
  [ "$((10#$number))" -gt "$((10#$released))" ] && added+=("$migration")
done
if [ ${#added[@]} -eq 0 ]; then
  echo "squawk: no migration after $released, the last release's"
  exit 0
fi
# diesel runs a migration in a transaction (.squawk.toml assumes one) unless its metadata.toml says
# run_in_transaction = false, as a CREATE INDEX CONCURRENTLY's must.
in_transaction=() alone=()
for migration in "${added[@]}"; do
  if grep -qsx 'run_in_transaction = false' "$(dirname "$migration")/metadata.toml"; then
    alone+=("$migration")
  else
    in_transaction+=("$migration")
  fi
done
[ ${#in_transaction[@]} -eq 0 ] || "$venv/bin/squawk" --config .squawk.toml "${in_transaction[@]}"
[ ${#alone[@]} -eq 0 ] || "$venv/bin/squawk" --config .squawk.toml --no-assume-in-transaction "${alone[@]}"
