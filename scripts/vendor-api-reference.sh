#!/usr/bin/env bash
# Vendors the API reference's script (RapiDoc, MIT) from its pinned npm package into
# bins/opsd/assets, gzipped, so `GET /docs` works with no internet and from this origin only.
# The package is checked against the registry's published sha512 before anything is copied.
set -euo pipefail
cd "$(dirname "$0")/.."
version="9.3.8"
expected="sha512-eCYEbr1Xr8OJZvVCw8SXl9zBCRoLJbhNGuG5IZTHq/RWAOq/O4MafUCuFEyZHsrhLrlUcGZMa64pyhpib8fQKQ=="
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack "rapidoc@$version" --silent >/dev/null)
actual="sha512-$(openssl dgst -sha512 -binary "$work/rapidoc-$version.tgz" | base64 -w0)"
[ "$actual" = "$expected" ] || { echo "rapidoc@$version does not match its pinned sha512" >&2; exit 1; }
tar xzf "$work/rapidoc-$version.tgz" -C "$work"
cp "$work/package/dist/rapidoc-min.js.gz" "bins/opsd/assets/rapidoc-$version.min.js.gz"
cp "$work/package/dist/rapidoc-min.js.LICENSE.txt" "bins/opsd/assets/rapidoc-$version.LICENSE.txt"
cp "$work/package/LICENSE" "bins/opsd/assets/rapidoc-LICENSE.txt" 2>/dev/null || true
echo "vendored rapidoc@$version"
