#!/usr/bin/env bash
# CMake's compiler launcher for the C and C++ that crates build (HiGHS): ccache when installed,
# otherwise the compiler itself. Paths are hashed relative to the build directory, so the same
# sources built under another profile's or feature set's OUT_DIR (same depth) hit the cache.
if command -v ccache >/dev/null 2>&1; then
  export CCACHE_BASEDIR=/ CCACHE_NOHASHDIR=1
  exec ccache "$@"
fi
exec "$@"
