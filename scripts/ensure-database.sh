#!/usr/bin/env bash
# ensure-database.sh SERVER_URL NAME: creates database NAME on the server when it is missing.
set -euo pipefail
server="$1"; name="$2"
exists="$(psql "$server" -tAc "SELECT 1 FROM pg_database WHERE datname = '$name'")"
[ "$exists" = "1" ] || psql "$server" -qc "CREATE DATABASE \"$name\"" >/dev/null
echo "${server%/*}/$name"
