#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# calibrate_test.sh TOOL [ARG...]: `TOOL --calibrate ARG...` exits 0, every
# line it prints is a `#` comment or `export UCX_MM_<NAME>=<bytes|inf|auto|n>`,
# all ten settings are there once, and a shell takes the lines as they are.
out=$("$@") || { echo "calibrate_test: exit status $?"; exit 1; }
printf '%s\n' "$out"
bad=$(printf '%s\n' "$out" | grep -Ev '^(#|export UCX_MM_[A-Z_]+=(inf|auto|[0-9]+)$)')
if [ -n "$bad" ]; then
    echo "calibrate_test: unparseable lines: $bad"
    exit 1
fi
for name in INCAST_AUTO_ATOMIC_MAX INCAST_AUTO_LOCKED_MIN \
    INCAST_AUTO_LOCKED_MIN_GROUP INCAST_AUTO_PAIR_GROUP \
    INCAST_AUTO_PAIR_LOCKED_MIN \
    INCAST_AUTO_GATHER_BATCHED_MAX_GROUP BCAST_CMA_THRESH \
    BCAST_GROUP_SEG_SIZE BCAST_MIN_ZCOPY INCAST_GROUP_SEG_SIZE; do
    n=$(printf '%s\n' "$out" | grep -c "^export UCX_MM_${name}=")
    if [ "$n" -ne 1 ]; then
        echo "calibrate_test: UCX_MM_${name}: $n lines, expected 1"
        exit 1
    fi
done
exports=$(printf '%s\n' "$out" | grep '^export')
sh -c "set -e; $exports; test -n \"\$UCX_MM_BCAST_CMA_THRESH\"" || {
    echo "calibrate_test: the shell refused the export lines"
    exit 1
}
