#!/usr/bin/env bash
# pg-up.sh [run|test]: makes sure a PostgreSQL server is there and prints its URL (no database in
# the path) on stdout. With DATABASE_URL set, that server is used as it is. Otherwise a private
# cluster of the project's own is started with the system's initdb/pg_ctl (Debian's postgresql
# package is installed when they are missing):
#   run   durable settings, for `just run`, where a newcomer keeps what they try;
#   test  fsync, synchronous commits and full-page writes off, for `just test` (default).
# Each keeps the port it first got (default 54329 for run, 54339 for test, else the next free one).
# initdb's and pg_ctl's output goes to .data/pg-<name>.log; only the URL reaches stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/pg-cluster.sh

name="${1:-test}"
if [ -n "${DATABASE_URL:-}" ]; then
  echo "${DATABASE_URL%/*}/postgres"
  exit 0
fi

cluster_paths "$name"
mkdir -p .data
log="$PWD/.data/pg-$name.log"
case "$name" in
  run) default_port=54329; settings="" ;;
  test) default_port=54339; settings="-c max_connections=400 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" ;;
esac
port="${OPSD_PG_PORT:-$(cat "$data/opsd.port" 2>/dev/null || echo "$default_port")}"
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

bindir="$(find_bindir || true)"
if [ -z "$bindir" ] || [ ! -x "$bindir/initdb" ]; then
  echo "installing PostgreSQL (Debian's postgresql package; log in $log)..." >&2
  export DEBIAN_FRONTEND=noninteractive
  { apt-get update -qq && apt-get install -y -qq postgresql; } >>"$log" 2>&1
  bindir="$(find_bindir)"
fi

if [ ! -s "$data/PG_VERSION" ]; then
  echo "creating the private PostgreSQL cluster ($name) in $data" >&2
  mkdir -p "$data"
  if [ "$(id -u)" -eq 0 ]; then
    as_owner true # creates the postgres user when missing
    chown postgres "$data" "$(dirname "$data")"
    chmod 0700 "$data"
  fi
  as_owner "$bindir/initdb" -D "$data" -U postgres --auth=trust -E UTF8 >>"$log" 2>&1 \
    || { echo "initdb failed; see $log" >&2; exit 1; }
fi

# TLS, as against a managed database: a private root (root.crt beside the server's certificate,
# which `SHOW ssl_cert_file` names) signs a certificate for `localhost`. The TLS tests verify it.
if [ ! -s "$data/server.crt" ] && command -v openssl >/dev/null 2>&1; then
  (
    cd "$data"
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=opsd private test root" -keyout root.key -out root.crt
    openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout server.key -out server.csr
    printf 'subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n' > server.ext
    openssl x509 -req -in server.csr -CA root.crt -CAkey root.key -CAcreateserial -days 3650 -extfile server.ext -out server.crt
    rm -f root.key server.csr server.ext root.srl
    chmod 0600 server.key
    if [ "$(id -u)" -eq 0 ]; then chown postgres server.key server.crt root.crt; fi
  ) >>"$log" 2>&1
fi
[ -s "$data/server.crt" ] && settings="$settings -c ssl=on -c ssl_cert_file=$data/server.crt -c ssl_key_file=$data/server.key"

# A port can look free to a connect() and still refuse a bind(): an outgoing connection (a busy test
# suite makes thousands) may hold it as its ephemeral local end. So a start that fails to bind moves
# on to the next port.
start_on() {
  # The server's own log lives with its data, where its owner can write.
  as_owner "$bindir/pg_ctl" -D "$data" -l "$data/server.log" -w -t 60 \
    -o "-p $1 -c listen_addresses=127.0.0.1 -c unix_socket_directories=$data $settings" \
    start >>"$log" 2>&1
}
server_log_tail() { as_owner tail -n "$1" "$data/server.log" 2>/dev/null || true; }

if ! as_owner "$bindir/pg_ctl" -D "$data" status >/dev/null 2>&1; then
  started=""
  for _ in $(seq 1 50); do
    if port_busy "$port"; then port=$((port + 1)); continue; fi
    echo "$port" > "$data/opsd.port"
    if start_on "$port"; then started=1; break; fi
    server_log_tail 5 | grep -q "could not create any TCP/IP sockets" || break
    port=$((port + 1))
  done
  if [ -z "$started" ]; then
    { echo "PostgreSQL did not start; the end of $data/server.log:"; server_log_tail 20; } >&2
    exit 1
  fi
fi

for _ in $(seq 1 60); do
  "$bindir/pg_isready" -q -h 127.0.0.1 -p "$port" && break
  sleep 0.5
done
"$bindir/pg_isready" -q -h 127.0.0.1 -p "$port" || { echo "PostgreSQL did not come up; see $data/server.log" >&2; exit 1; }
echo "postgres://postgres@127.0.0.1:$port/postgres"
