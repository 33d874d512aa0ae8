#!/usr/bin/env bash
# `just container`: opsd's image with podman on a machine that reaches no image registry. The
# runtime stage of deploy/container/Containerfile is built as written, on a Debian bookworm base
# made here with debootstrap from the machine's own apt source, with the release binary built on
# the host in place of the build stage (whose Rust image cannot be pulled here). Then the image
# runs against a new database on SERVER_URL: /health/ready must answer 200 and the image's health
# check (`opsd probe`) pass.
set -euo pipefail
cd "$(dirname "$0")/.."
binary="${1:-target/release/opsd}"
server="${2:?usage: container.sh BINARY SERVER_URL}"
missing=()
for tool in podman buildah debootstrap runc; do command -v "$tool" >/dev/null || missing+=("$tool"); done
if (( ${#missing[@]} )); then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null && apt-get install -y -qq "${missing[@]}" >/dev/null
fi
base=localhost/opsd-base:bookworm
work="$(mktemp -d)"
name="opsd-container-check-$$"
database="opsd_container_$$"
psql "$server" -qc "CREATE DATABASE $database"
database_url="${server%/*}/$database"
trap 'podman --runtime runc rm -f "$name" >/dev/null 2>&1 || true; rm -rf "$work"; psql "$server" -qc "DROP DATABASE IF EXISTS $database WITH (FORCE)"' EXIT
if ! podman image exists "$base"; then
  mirror="$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)"
  mirror="${mirror:-$(awk '/^deb / {print $2; exit}' /etc/apt/sources.list)}"
  echo "making $base with debootstrap (minbase) from $mirror"
  debootstrap --variant=minbase bookworm "$work/rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 \
    || { tail -20 "$work/debootstrap.log"; exit 1; }
  tar -C "$work/rootfs" -c . | podman import - "$base" >/dev/null
  rm -rf "$work/rootfs"
fi
# The runtime stage as written, its COPY from the build stage taking the host's binary instead.
{
  grep '^ARG RUNTIME_IMAGE=' deploy/container/Containerfile
  sed -n '/^FROM .* AS runtime$/,$p' deploy/container/Containerfile | sed 's#^COPY --from=build /out/opsd #COPY opsd #'
} >"$work/Containerfile"
grep -q '^COPY opsd /usr/local/bin/opsd' "$work/Containerfile" || { echo "the runtime stage's COPY changed" >&2; exit 1; }
cp "$binary" "$work/opsd"
podman build --quiet --network=host --isolation=chroot --format docker --build-arg RUNTIME_IMAGE="$base" -t localhost/opsd:check \
  -f "$work/Containerfile" "$work" >/dev/null
echo "built localhost/opsd:check ($(podman image inspect localhost/opsd:check --format '{{.Size}}' | awk '{printf "%.0f MB", $1 / 1e6}'))"
echo "user: $(podman image inspect localhost/opsd:check --format '{{.Config.User}}'); health check: $(podman image inspect localhost/opsd:check --format '{{json .Config.Healthcheck.Test}}')"
port="$(scripts/free-port.sh)"
# Here crun refuses this machine's hybrid cgroups (no systemd manages them), and the sandbox lets
# no process raise its process or file limits: runc, with limits within this shell's.
podman --runtime runc run -d --name "$name" --network=host --ulimit nofile=4096:4096 --ulimit nproc=4096:4096 \
  -e DATABASE_URL="$database_url" -e BIND_ADDR="127.0.0.1:$port" \
  localhost/opsd:check >/dev/null
for _ in $(seq 1 100); do curl -fs "http://127.0.0.1:$port/health/ready" >/dev/null && break; sleep 0.2; done
curl -fs "http://127.0.0.1:$port/health/ready" >/dev/null || { podman logs "$name" | tail -20; echo "not ready" >&2; exit 1; }
podman --runtime runc healthcheck run "$name" >/dev/null || { echo "the image's health check failed" >&2; exit 1; }
echo "the container serves: /health/ready 200 on port $port, its health check passes, as uid $(podman --runtime runc exec "$name" id -u)"
