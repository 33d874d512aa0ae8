#!/usr/bin/env bash
# What building opsd needs from Debian beyond Rust: OpenSSL's headers, and for HiGHS (the rostering
# engine's solver, C++ built by highs-sys) cmake, a C++ compiler, libclang for bindgen, and ccache to
# build it once for every profile. Installs what is missing (as root), quietly; says what to install
# otherwise.
set -euo pipefail
need=()
command -v cmake >/dev/null 2>&1 || need+=(cmake)
command -v c++ >/dev/null 2>&1 || need+=(g++)
command -v ccache >/dev/null 2>&1 || need+=(ccache)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
dpkg -s libssl-dev >/dev/null 2>&1 || need+=(libssl-dev)
dpkg -s libclang-dev >/dev/null 2>&1 || need+=(libclang-dev)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "opsd needs these Debian packages to build: ${need[*]} (sudo apt-get install ${need[*]})" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
