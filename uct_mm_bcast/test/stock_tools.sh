#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Stock UCX tools over the preloaded mm_bcast transport:
#   stock_tools.sh [<sanitizer runtimes>:]<path to libuct_mmbcast.so>
# ucx_info -d lists it with its caps, ucx_info -c its UCX_MM_BCAST_* table,
# ucx_perftest runs am_lat/am_bw (short, bcopy, zcopy) between 2 processes.
set -euo pipefail
# The argument is an LD_PRELOAD value: the plugin, after the sanitizer
# runtimes in sanitized builds (cmake/UcgSanitizers.cmake).
lib=${1:?usage: stock_tools.sh <LD_PRELOAD value ending in the plugin.so>}
fail() { echo "FAIL: $*" >&2; exit 1; }

ucx_info -d | grep >/dev/null "Transport: mm_bcast" && fail "listed without preload"

devices=$(LD_PRELOAD=$lib ucx_info -d -t mm_bcast)
grep -q "Transport: mm_bcast" <<<"$devices" || fail "transport not listed"
grep -q "am_short: <= 256" <<<"$devices" || fail "am_short cap"
grep -q "am_bcopy: <= 8240" <<<"$devices" || fail "am_bcopy cap"
# zcopy is advertised from UCX_MM_BCAST_MIN_ZCOPY (32M): below, CMA lost to
# bcopy fragments (perftest/mm/RESULTS.md).
grep -q "am_zcopy: 32M..64M, up to 8 iov" <<<"$devices" || fail "am_zcopy cap"
grep -q "connection: to iface" <<<"$devices" || fail "connection cap"
grep -q "error handling: peer failure, ep_check" <<<"$devices" \
    || fail "peer failure caps"

config=$(LD_PRELOAD=$lib ucx_info -c)
for var in FIFO_SIZE=64 SEG_SIZE=8256 MAX_SHORT=256 MAX_GROUP_SIZE=64 \
           MAX_OUTSTANDING=16 GROUP_RING_SIZE=64 \
           MIN_ZCOPY=32M MAX_ZCOPY=64M STREAM_THRESH=16K; do
    grep -q "^UCX_MM_BCAST_$var$" <<<"$config" || fail "UCX_MM_BCAST_$var"
done
LD_PRELOAD=$lib UCX_MM_BCAST_SEG_SIZE=4160 ucx_info -d -t mm_bcast \
    | grep >/dev/null "am_bcopy: <= 4144" || fail "UCX_MM_BCAST_SEG_SIZE ignored"
LD_PRELOAD=$lib UCX_MM_BCAST_MIN_ZCOPY=64k ucx_info -d -t mm_bcast \
    | grep >/dev/null "am_zcopy: 64K..64M" || fail "UCX_MM_BCAST_MIN_ZCOPY ignored"

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("",0)); print(s.getsockname()[1])'
}

# perftest <args...>: server and client on localhost, both must succeed.
# UCT mode (-d memory -x mm_bcast) unless UCP=1 (UCX_TLS=mm_bcast only).
perftest() {
    local port out tl_args=(-d memory -x mm_bcast)
    [[ ${UCP:-0} == 1 ]] && tl_args=()
    port=$(free_port)
    LD_PRELOAD=$lib UCX_TLS=mm_bcast timeout 60 ucx_perftest "${tl_args[@]}" \
        -p "$port" "$@" >/dev/null 2>&1 &
    local server=$!
    for _ in $(seq 50); do
        out=$(LD_PRELOAD=$lib UCX_TLS=mm_bcast timeout 60 ucx_perftest \
              "${tl_args[@]}" -p "$port" "$@" localhost 2>&1) && break
        sleep 0.1
    done
    wait "$server" || fail "server: ucx_perftest $*"
    grep -q "^Final:" <<<"$out" || fail "client: ucx_perftest $*: $out"
    echo "ok: ucx_perftest $* : $(echo "$out" | grep '^Final:')"
}

perftest -t am_lat -n 300
perftest -t am_lat -D bcopy -s 4096 -n 300
perftest -t am_bw -n 3000
perftest -t am_bw -D bcopy -s 8000 -n 500
export UCX_MM_BCAST_MIN_ZCOPY=64k # ucx_perftest refuses zcopy below it
perftest -t am_lat -D zcopy -s 65536 -n 100
perftest -t am_bw -D zcopy -s 262144 -n 100
unset UCX_MM_BCAST_MIN_ZCOPY
# UCP over mm_bcast alone: wireup reaches a receiver with no ep yet.
UCP=1 perftest -t tag_lat -n 300
UCP=1 perftest -t tag_bw -s 1000000 -n 20
# Endpoints in peer error mode (-e): mm_bcast is still selected.
UCP=1 perftest -e -t tag_lat -n 300
echo "PASS"
