#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The build compiles through ccache, hashing paths relative to the source
# tree, where ccache is installed (cmake/UcgCcache.cmake).
#   build_cache.sh BUILD_DIR SOURCE_DIR      (exit 77: skipped)
set -euo pipefail
build=$1 source=$2
rules=$build/CMakeFiles/rules.ninja
cache=$build/CMakeCache.txt
# The ccache this build found (cmake/UcgCcache.cmake), not the one on PATH.
ccache=$(sed -n 's/^UCG_CCACHE_PROGRAM:FILEPATH=//p' "$cache")
if grep -q '^UCG_CCACHE:BOOL=OFF$' "$cache"; then
    echo "build_cache: skipped: configured with UCG_CCACHE=OFF"
    exit 77
fi
if grep -q '^CMAKE_CXX_COMPILER_LAUNCHER:[A-Z]*=.' "$cache"; then
    echo "build_cache: skipped: the user set CMAKE_CXX_COMPILER_LAUNCHER"
    exit 77
fi
if [ -z "$ccache" ] || [ "${ccache%-NOTFOUND}" != "$ccache" ]; then
    echo "build_cache: skipped: ccache is not installed"
    exit 77
fi
if [ ! -f "$rules" ]; then
    echo "build_cache: skipped: not a Ninja build (no $rules)"
    exit 77
fi
# Every C and C++ compile rule (Ninja's rules.ninja) starts with the launcher.
launcher="env CCACHE_BASEDIR=$source CCACHE_NOHASHDIR=1 $ccache"
compiles=$(grep -c '^ *command = .* -o \$out -c \$in' "$rules" || true)
launched=$(grep -c "^ *command = $launcher .* -o \\\$out -c \\\$in" \
    "$rules" || true)
echo "build_cache: $launched of $compiles compile rules go through '$launcher'"
[ "$compiles" -gt 0 ] && [ "$launched" -eq "$compiles" ]
