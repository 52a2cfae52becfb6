#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The install test: cmake --install (Runtime, Development) into a temporary
# prefix, build cmake/test/install_consumer against it and run it (two
# forked ranks, one bcast). Leaves nothing behind. Needs what those
# components install built (libucg and the three transports), as a full
# build does.
#
#   install_test.sh pkgconfig|cmake <build dir> <libdir> <consumer dir>
#                   <cmake> <C compiler>
# UCG_TEST_PRELOAD: sanitizer runtimes the installed libucg needs first.
set -euo pipefail
how=$1 build=$2 libdir=$3 src=$4 cmake=$5 cc=$6

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ucg-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
for comp in Runtime Development; do
    "$cmake" --install "$build" --prefix "$prefix" --component "$comp" >/dev/null
done

case $how in
pkgconfig)
    export PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig
    [ "$(pkg-config --modversion ucg)" ] || exit 1
    # shellcheck disable=SC2046 # word splitting of the flags is intended
    "$cc" -std=c11 -Wall -Wextra -Werror -o "$tmp/consumer" "$src/consumer.c" \
        $(pkg-config --cflags ucg) $(pkg-config --libs ucg) \
        -Wl,-rpath,"$(pkg-config --variable=libdir ucg)"
    consumer=$tmp/consumer
    ;;
cmake)
    "$cmake" -S "$src" -B "$tmp/build" -DCMAKE_C_COMPILER="$cc" \
        -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_C_FLAGS="-Wall -Wextra -Werror" >"$tmp/configure.log" 2>&1 || {
        cat "$tmp/configure.log"; exit 1; }
    "$cmake" --build "$tmp/build" >"$tmp/build.log" 2>&1 || {
        cat "$tmp/build.log"; exit 1; }
    consumer=$tmp/build/consumer
    ;;
*)
    echo "install_test.sh: unknown mode '$how'" >&2
    exit 2
    ;;
esac

# Only the install prefix: the build tree's libraries must not be needed.
LD_PRELOAD=${UCG_TEST_PRELOAD:-} "$consumer"

# The installed transports, as README "Install" tells stock tools to load
# them.
if [ "$how" = pkgconfig ] && command -v ucx_info >/dev/null; then
    plugins=$(pkg-config --variable=plugindir ucg)
    for tl in mmbcast:mm_bcast mmincast:mm_incast; do
        LD_PRELOAD=${UCG_TEST_PRELOAD:-}$plugins/libuct_${tl%%:*}.so.0 \
            ucx_info -d -t "${tl#*:}" | grep >/dev/null "Transport: ${tl#*:}" || {
            echo "FAIL: installed ${tl#*:} not listed by ucx_info" >&2
            exit 1
        }
    done
fi
