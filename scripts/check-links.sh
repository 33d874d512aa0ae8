#!/usr/bin/env bash
# Every relative link of the README, the manual (docs/), ARCHITECTURE.md and CHANGELOG.md, and every
# heading anchor they name, points at a file and a heading that exist: remark-validate-links, pinned
# in tools/doc-links (its lockfile). Links to the web are not followed (this machine has no internet).
set -euo pipefail
cd "$(dirname "$0")/.."
tool=tools/doc-links
if [ ! -x "$tool/node_modules/.bin/remark" ]; then
  (cd "$tool" && npm ci --silent --no-audit --no-fund)
fi
"$tool/node_modules/.bin/remark" --no-config --no-stdout --frail --quiet \
  --use "$PWD/$tool/node_modules/remark-validate-links/index.js=repository:false" README.md ARCHITECTURE.md CHANGELOG.md docs/
