#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The build compiles through ccache, hashing paths relative to the source
# tree, where ccache is installed (cmake/UcgCcache.cmake).
#   build_cache.sh BUILD_DIR SOURCE_DIR      (exit 77: skipped)
set -euo pipefail
build=$1 source=$2
rules=$build/CMakeFiles/rules.ninja
if ! command -v ccache >/dev/null; then
    echo "build_cache: skipped: ccache is not installed"
    exit 77
fi
if grep -q '^UCG_CCACHE:BOOL=OFF$' "$build/CMakeCache.txt"; then
    echo "build_cache: skipped: configured with UCG_CCACHE=OFF"
    exit 77
fi
if [ ! -f "$rules" ]; then
    echo "build_cache: skipped: not a Ninja build (no $rules)"
    exit 77
fi
# Every C and C++ compile rule (Ninja's rules.ninja) starts with the launcher.
launcher="env CCACHE_BASEDIR=$source CCACHE_NOHASHDIR=1 $(command -v ccache)"
compiles=$(grep -c '^ *command = .* -o \$out -c \$in' "$rules" || true)
launched=$(grep -c "^ *command = $launcher .* -o \\\$out -c \\\$in" \
    "$rules" || true)
echo "build_cache: $launched of $compiles compile rules go through '$launcher'"
[ "$compiles" -gt 0 ] && [ "$launched" -eq "$compiles" ]
