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
"$venv/bin/squawk" --config .squawk.toml "${added[@]}"
