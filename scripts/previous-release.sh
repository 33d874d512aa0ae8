#!/usr/bin/env bash
# previous-release.sh test|build: the release `releases` names last, checked out beside this one (a git
# worktree building into the same target directory, so the dependencies compile once).
#   test   Its black-box suite (tests/api) on this release's pre-deploy schema (expand and contract,
#          docs/upgrading.md): the template its suite clones databases from is migrated by its own
#          migrations, then by this release's `opsd migrate`. Every test must pass but the one that
#          reverts every migration: an older binary cannot revert a newer schema's.
#   build  Its binary, as target/previous-release/opsd, for `just upgrade-test`: a debug build, which
#          shares what `test` compiled (a release build of it alone costs CI 7 minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
read -r version commit < <(awk '!/^#/ && NF { v = $1; c = $2 } END { print v, c }' releases)
tree="$root/.data/previous-release"
cleanup() { cd "$root"; git worktree remove --force "$tree" >/dev/null 2>&1 || rm -rf "$tree"; git worktree prune; }
cleanup
trap cleanup EXIT
git worktree add --detach --quiet "$tree" "$commit"
echo "previous release: $version ($commit)"
export CARGO_TARGET_DIR="$root/target"
# Cargo names a workspace crate's artifacts by its name, version and profile, not by where its
# sources are, and judges them fresh by the times of the files at the same relative paths: sharing
# one target directory, each release's crates would be taken for the other's (an old binary built
# from new crates). A profile setting of their own, which changes no behaviour, gives the previous
# release's crates artifacts of their own; the dependencies, the same in both, still compile once.
mkdir -p "$tree/.cargo"
(cd "$tree" && cargo metadata --no-deps --format-version 1) | python3 -c '
import json, sys
for package in json.load(sys.stdin)["packages"]:
    for profile in ("dev", "test"):
        print("\n[profile.%s.package.%s]\ncodegen-units = 255" % (profile, package["name"]))
' >> "$tree/.cargo/config.toml"

build() {
  (cd "$tree" && cargo build --quiet --bin opsd)
  mkdir -p target/previous-release
  cp target/debug/opsd target/previous-release/opsd
  # The shared target directory's target/debug/opsd is this release's again.
  cargo build --quiet --bin opsd
  cmp -s target/debug/opsd target/previous-release/opsd && { echo "the two builds are the same binary" >&2; exit 1; }
  echo "target/previous-release/opsd: $version (debug build)"
}

test_suite() {
  export TEST_DATABASE_URL="$(scripts/pg-up.sh test)"
  cargo build --quiet --bin opsd
  local opsd="$root/target/debug/opsd"
  for dir in tests/sdk tests/browser clients/typescript; do
    [ -f "$tree/$dir/package-lock.json" ] && npm ci --prefix "$tree/$dir" --no-audit --no-fund --loglevel=error
  done
  command -v chromium >/dev/null || scripts/install-chromium.sh
  # The template's name, as the previous release's crates/test-db derives it from its migrations.
  local template
  template="opsd_tpl_$(python3 - "$tree/migrations" <<'PY'
import hashlib, pathlib, sys
root = pathlib.Path(sys.argv[1])
digest = hashlib.sha256()
for path in sorted((p for p in root.rglob("*") if p.is_file()), key=lambda p: p.parts):
    digest.update(str(path.relative_to(root)).encode())
    digest.update(path.read_bytes())
print(digest.hexdigest()[:12])
PY
)"
  local server="${TEST_DATABASE_URL%/*}"
  psql "$TEST_DATABASE_URL" -qc "DROP DATABASE IF EXISTS $template WITH (FORCE)" 2>/dev/null
  cd "$tree"
  # One short test of its suite builds the suite and creates its template with its own migrations.
  cargo test --quiet -p opsd-tests --test api -- --exact setup::a_member_cannot_create_a_location
  psql "$TEST_DATABASE_URL" -tAc "SELECT 1 FROM pg_database WHERE datname = '$template'" | grep -qx 1 \
    || { echo "the previous release's test template $template was not created" >&2; exit 1; }
  DATABASE_URL="$server/$template" "$opsd" migrate
  DATABASE_URL="$server/$template" "$opsd" migrate --status | grep -v '^applied' || true
  local skip=maintenance::every_migration_reverts_and_applies_again_under_the_demo_data
  if cargo nextest --version >/dev/null 2>&1; then
    cargo nextest run -p opsd-tests --test api --no-fail-fast --test-threads 6 -E "not test(=$skip)"
  else
    cargo test --quiet -p opsd-tests --test api --no-fail-fast -- --skip "$skip"
  fi
  echo "previous release $version: its black-box suite passes on this release's pre-deploy schema"
}

case "${1:-}" in
  test) test_suite ;;
  build) build ;;
  *) echo "usage: $0 test|build" >&2; exit 2 ;;
esac
