#!/usr/bin/env bash
# The migrations added since the last release (the `releases` file's last commit), linted by squawk
# (pinned; PyPI's squawk-cli ships its binary) with `.squawk.toml`. Older migrations are history.
set -euo pipefail
cd "$(dirname "$0")/.."
version=2.70.0
venv=.venv/squawk
if [ "$("$venv/bin/squawk" --version 2>/dev/null)" != "squawk $version" ]; then
  python3 -m venv "$venv" && "$venv/bin/pip" install -q "squawk-cli==$version"
fi
release="$(awk '!/^#/ && NF { commit = $2 } END { print commit }' releases)"
mapfile -t added < <(
  { git diff --name-only --diff-filter=A "$release" -- 'migrations/*/up.sql'; git ls-files --others --exclude-standard -- 'migrations/*/up.sql'; } | sort -u
)
if [ ${#added[@]} -eq 0 ]; then
  echo "squawk: no migration since $release"
  exit 0
fi
"$venv/bin/squawk" --config .squawk.toml "${added[@]}"
