#!/usr/bin/env bash
# Makes sure a PostgreSQL server is there and prints its URL (no database in the path) on stdout.
# With DATABASE_URL set, that server is used as it is. Otherwise a private cluster of the project's
# own lives in .data/pg (port OPSD_PG_PORT, default 54329), started with the system's initdb/pg_ctl;
# Debian's postgresql package is installed when those are missing.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -n "${DATABASE_URL:-}" ]; then
  echo "${DATABASE_URL%/*}/postgres"
  exit 0
fi

data="$PWD/.data/pg"
# The cluster keeps the port it first got; another checkout's cluster may hold the default.
port="${OPSD_PG_PORT:-$(cat "$data/opsd.port" 2>/dev/null || echo 54329)}"
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

find_bindir() {
  if command -v pg_config >/dev/null 2>&1 && [ -x "$(pg_config --bindir)/initdb" ]; then
    pg_config --bindir; return
  fi
  ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1
}

bindir="$(find_bindir || true)"
if [ -z "$bindir" ] || [ ! -x "$bindir/initdb" ]; then
  echo "installing PostgreSQL (Debian's postgresql package)..." >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2 && apt-get install -y -qq postgresql >&2
  bindir="$(find_bindir)"
fi

# initdb refuses to run as root: the cluster belongs to the postgres system user then.
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    id postgres >/dev/null 2>&1 || useradd --system --home-dir /var/lib/postgresql --shell /bin/bash postgres
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

if [ ! -s "$data/PG_VERSION" ]; then
  echo "creating a private PostgreSQL cluster in $data" >&2
  mkdir -p "$data"
  [ "$(id -u)" -eq 0 ] && chown -R postgres "$PWD/.data" 2>/dev/null || true
  [ "$(id -u)" -eq 0 ] && chown -R postgres "$data"
  as_owner "$bindir/initdb" -D "$data" -U postgres --auth=trust -E UTF8 >&2
fi

if ! as_owner "$bindir/pg_ctl" -D "$data" status >/dev/null 2>&1; then
  for _ in $(seq 1 50); do
    port_busy "$port" || break
    port=$((port + 1))
  done
  echo "$port" > "$data/opsd.port.tmp" && mv "$data/opsd.port.tmp" "$data/opsd.port"
  as_owner "$bindir/pg_ctl" -D "$data" -l "$data/server.log" -w -t 60 \
    -o "-p $port -c listen_addresses=127.0.0.1 -c unix_socket_directories=$data -c max_connections=400 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
    start >&2
fi

for _ in $(seq 1 60); do
  "$bindir/pg_isready" -q -h 127.0.0.1 -p "$port" && break
  sleep 0.5
done
"$bindir/pg_isready" -q -h 127.0.0.1 -p "$port" || { echo "PostgreSQL did not come up; see $data/server.log" >&2; exit 1; }
echo "postgres://postgres@127.0.0.1:$port/postgres"
