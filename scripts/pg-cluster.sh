# Sourced by pg-up.sh and pg-down.sh: where a private cluster lives and who runs it.
# `cluster_paths NAME` sets: data (the data directory), owner_note, and the functions as_owner and
# find_bindir. NAME is `run` (durable, for `just run`) or `test` (fast, for `just test`).
#
# initdb refuses to run as root, so as root the cluster belongs to the postgres system user, who may
# not be able to enter the checkout (a clone under /root or in a `mktemp -d` directory is 0700).
# Its data then lives under /var/lib/opsd, in a directory named after the checkout's path; an
# ordinary user's cluster stays in the checkout's .data/.

find_bindir() {
  if command -v pg_config >/dev/null 2>&1 && [ -x "$(pg_config --bindir)/initdb" ]; then
    pg_config --bindir; return
  fi
  ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1
}

as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    id postgres >/dev/null 2>&1 || useradd --system --home-dir /var/lib/postgresql --shell /bin/bash postgres
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

cluster_paths() {
  local name="$1" checkout="$PWD"
  case "$name" in run) local dir=pg ;; test) local dir=pg-test ;; *) echo "unknown cluster $name" >&2; return 1 ;; esac
  if [ "$(id -u)" -eq 0 ]; then
    local key
    key="$(basename "$checkout")-$(printf '%s' "$checkout" | sha256sum | cut -c1-12)"
    data="/var/lib/opsd/$key/$dir"
  else
    data="$checkout/.data/$dir"
  fi
}
