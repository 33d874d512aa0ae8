#!/usr/bin/env bash
# check-quick-start.sh OPSD_BIN: the README's quick start, as a newcomer meets it. A fresh clone of
# this repository in a private (0700) temporary directory runs `just run` (serving OPSD_BIN, so no
# second release build) until /health/ready answers, and the incident `curl` line it printed creates
# an incident. As root it also starts `just cluster` (Patroni, etcd, HAProxy, PgBouncer, three
# instances) from that 0700 clone, and the private cluster as an ordinary user in that user's own
# 0700 directory. Everything it starts is stopped and deleted at the end.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
bin="$(realpath "$1")"
tmp="$(mktemp -d)"
chmod 0700 "$tmp"
clone="$tmp/opsd"
server=""
newcomer_clone=""
cluster_home=""

cleanup() {
  [ -n "$server" ] && kill -- "-$server" 2>/dev/null || true
  if [ -n "$cluster_home" ]; then
    (cd "$clone" && OPSD_CLUSTER_HOME="$cluster_home" tools/cluster/cluster.py down) >/dev/null 2>&1 || true
    rm -rf "$cluster_home"
  fi
  [ -d "$clone" ] && (cd "$clone" && scripts/pg-down.sh all --purge) || true
  if [ -n "$newcomer_clone" ]; then
    runuser -u opsd-newcomer -- bash -c "cd '$newcomer_clone' && scripts/pg-down.sh all --purge" || true
    rm -rf "$(dirname "$newcomer_clone")"
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

git clone -q "$repo" "$clone"
port="$("$repo/scripts/free-port.sh")"
# Its own process group, so the whole of `just run` can be stopped at the end.
(cd "$clone" && exec setsid env -u DATABASE_URL -u TEST_DATABASE_URL BIND_ADDR="127.0.0.1:$port" OPSD_BIN="$bin" \
  RUST_LOG=warn just run) >"$tmp/run.out" 2>&1 &
server=$!

ready=""
for _ in $(seq 1 300); do
  # Ready, and the block of lines to try printed (after the jobs' first runs).
  if grep -q '^Another user:' "$tmp/run.out" && curl -fs "http://127.0.0.1:$port/health/ready" >/dev/null 2>&1; then
    ready=1; break
  fi
  kill -0 "$server" 2>/dev/null || break
  sleep 0.2
done
if [ -z "$ready" ]; then
  echo "FAIL: just run in a 0700 clone never became ready:"; cat "$tmp/run.out"; exit 1
fi
grep -q "postgres://postgres@127.0.0.1" "$tmp/run.out" || { echo "FAIL: no database step printed"; cat "$tmp/run.out"; exit 1; }

export_line="$(grep -m1 '^  export OPSD_TOKEN=' "$tmp/run.out")"
incident_line="$(grep -m1 '/api/incidents$' "$tmp/run.out")"
[ -n "$export_line" ] && [ -n "$incident_line" ] || { echo "FAIL: the ready block lacks its lines:"; cat "$tmp/run.out"; exit 1; }
created="$(bash -c "$export_line; $incident_line -w ' HTTP %{http_code}'")"
case "$created" in
  *'"status":"reported"'*' HTTP 201') echo "ok: just run in a 0700 clone is ready and its incident line created an incident" ;;
  *) echo "FAIL: the incident line answered: $created"; exit 1 ;;
esac
# The demo's year of sales and punches: last week's variance has worked hours, this week has a forecast.
variance="$(bash -c "$(grep -m1 '/api/analytics/variance' "$tmp/run.out")")"
echo "$variance" | grep -q '"actualHours":[1-9]' || { echo "FAIL: the variance line shows no worked hours: $variance"; exit 1; }
forecast="$(bash -c "$(grep -m1 '/api/analytics/forecast' "$tmp/run.out")")"
echo "$forecast" | grep -q '"backtest":{"weeks":8' || { echo "FAIL: the forecast line has no backtest: $forecast"; exit 1; }
echo "ok: the demo's variance shows worked hours and its forecast is backtested"
# The console line: a one-time link that signs the demo's admin in and opens the week page.
link="$(grep -m1 -o 'http://[^ ]*/dev/sign-in?ticket=[^ ]*' "$tmp/run.out")" || { echo "FAIL: no console line"; cat "$tmp/run.out"; exit 1; }
cookie="$(curl -s -o /dev/null -D - "$link" | sed -n 's/^set-cookie: \(__session=[^;]*\).*/\1/ip')"
[ -n "$cookie" ] || { echo "FAIL: the console line set no session"; exit 1; }
week="$(curl -s -w ' HTTP %{http_code}' -H "Cookie: $cookie" "http://127.0.0.1:$port/console/week")"
case "$week" in
  *'Demo Downtown'*' HTTP 200') ;;
  *) echo "FAIL: the week page after signing in: ${week: -300}"; exit 1 ;;
esac
again="$(curl -s -o /dev/null -w '%{http_code}' "$link")"
[ "$again" = 403 ] || { echo "FAIL: the console link worked twice ($again)"; exit 1; }
echo "ok: the console line signs the demo's admin in once and opens the week page"
grep -q "initdb\|The files belonging" "$tmp/run.out" && { echo "FAIL: initdb's chatter reached the terminal"; exit 1; }

if [ "$(id -u)" -eq 0 ]; then
  # `just cluster` from the same 0700 clone: every process started as another user (Patroni and
  # PgBouncer run as postgres) must get a working directory it can enter.
  cluster_home="/var/lib/opsd/quick-start-cluster-$$"
  (cd "$clone" && OPSD_CLUSTER_HOME="$cluster_home" tools/cluster/cluster.py up "$bin") >"$tmp/cluster.out" 2>&1 \
    || { echo "FAIL: just cluster in a 0700 clone:"; tail -30 "$tmp/cluster.out"; exit 1; }
  ready_line="$(grep -m1 'curl -s http://[0-9.]*:8080/health/ready' "$tmp/cluster.out")"
  through_balancer="$(bash -c "$ready_line -o /dev/null -w '%{http_code}'")"
  [ "$through_balancer" = 200 ] || { echo "FAIL: the cluster's balancer answered $through_balancer"; exit 1; }
  echo "ok: just cluster in a 0700 clone elects a leader and serves through its balancer"

  id opsd-newcomer >/dev/null 2>&1 || useradd --create-home --shell /bin/bash opsd-newcomer
  home="$(runuser -u opsd-newcomer -- mktemp -d)"
  newcomer_clone="$home/opsd"
  git clone -q "$repo" "$newcomer_clone"
  chown -R opsd-newcomer "$newcomer_clone"
  url="$(runuser -u opsd-newcomer -- bash -c "cd '$newcomer_clone' && scripts/pg-up.sh run")"
  [ "$(psql "$url" -tAc 'SELECT 1')" = 1 ] || { echo "FAIL: the ordinary user's cluster does not answer"; exit 1; }
  owner="$(stat -c %U "$newcomer_clone/.data/pg")"
  [ "$owner" = opsd-newcomer ] || { echo "FAIL: the ordinary user's cluster is owned by $owner"; exit 1; }
  echo "ok: an ordinary user's private cluster runs from their own 0700 directory"
fi
