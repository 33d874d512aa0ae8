#!/usr/bin/env bash
# Installs Debian's chromium for the console's browser test (the machines reach package
# registries only, so no browser is downloaded from elsewhere). Needs root or sudo.
set -euo pipefail
if command -v chromium >/dev/null; then exit 0; fi
run() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
export DEBIAN_FRONTEND=noninteractive
run apt-get update -qq
run apt-get install -y -qq --no-install-recommends chromium >/dev/null
chromium --version
