#!/usr/bin/env bash
# CMake's compiler launcher for the C and C++ that crates build (HiGHS): ccache when installed,
# otherwise the compiler itself. Paths under the build script's OUT_DIR are hashed relative to it and
# the sources (in cargo's registry) stay absolute, so the same sources built under another profile,
# feature set or clone of the repository hit the cache.
if command -v ccache >/dev/null 2>&1; then
  case "$PWD" in
    */out/*) export CCACHE_BASEDIR="${PWD%/out/*}/out" ;;
    */out) export CCACHE_BASEDIR="$PWD" ;;
  esac
  export CCACHE_NOHASHDIR=1
  exec ccache "$@"
fi
exec "$@"
