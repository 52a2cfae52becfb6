#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Stock UCX tools over the preloaded ud_mcast transport (UDP wire on lo):
#   stock_tools.sh [<sanitizer runtimes>:]<path to libuct_udmcast.so>
# ucx_info -d lists it, ucx_info -c its UCX_UD_MCAST_* table, ucx_perftest
# runs am_lat/am_bw between two processes, also with injected loss, and
# UCP's tag_lat/tag_bw over ud_mcast alone.
set -euo pipefail
lib=${1:?usage: stock_tools.sh <LD_PRELOAD value ending in the plugin.so>}
fail() { echo "FAIL: $*" >&2; exit 1; }

ucx_info -d | grep >/dev/null "Transport: ud_mcast" && fail "listed without preload"

devices=$(LD_PRELOAD=$lib ucx_info -d -t ud_mcast)
grep -q "Transport: ud_mcast" <<<"$devices" || fail "transport not listed"
grep -q "Device: lo" <<<"$devices" || fail "lo not listed"
grep -q "am_bcopy: <= 8112" <<<"$devices" || fail "am_bcopy cap"
grep -q "connection: to iface" <<<"$devices" || fail "connection cap"

config=$(LD_PRELOAD=$lib ucx_info -c)
for var in MAX_PACKET=0 WINDOW=64 ACK_FANIN=4 TIMEOUT=10000000.00us \
           MAX_GROUP_SIZE=1024 MAX_PEERS=4096 RX_LOSS=0.000; do
    echo "$config" | grep >/dev/null "^UCX_UD_MCAST_$var$" \
        || fail "UCX_UD_MCAST_$var: $(echo "$config" | grep UD_MCAST_ | tr '\n' ' ')"
done
LD_PRELOAD=$lib UCX_UD_MCAST_MAX_PACKET=4096 ucx_info -d -t ud_mcast \
    | grep >/dev/null "am_bcopy: <= 4016" || fail "UCX_UD_MCAST_MAX_PACKET ignored"

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("",0)); print(s.getsockname()[1])'
}

# perftest <args...>: server and client on localhost, both must succeed.
# UCT mode (-d lo -x ud_mcast) unless UCP=1 (UCP over ud_mcast alone).
perftest() {
    local port out tl_args=(-d lo -x ud_mcast)
    [[ ${UCP:-0} == 1 ]] && tl_args=()
    port=$(free_port)
    LD_PRELOAD=$lib UCX_TLS=ud_mcast UCX_NET_DEVICES=lo timeout 60 \
        ucx_perftest "${tl_args[@]}" -p "$port" "$@" >/dev/null 2>&1 &
    local server=$!
    for _ in $(seq 50); do
        out=$(LD_PRELOAD=$lib UCX_TLS=ud_mcast UCX_NET_DEVICES=lo timeout 60 \
              ucx_perftest "${tl_args[@]}" -p "$port" "$@" localhost 2>&1) \
            && break
        sleep 0.1
    done
    wait "$server" || fail "server: ucx_perftest $*"
    grep -q "^Final:" <<<"$out" || fail "client: ucx_perftest $*: $out"
    echo "ok: ucx_perftest $* : $(echo "$out" | grep '^Final:')"
}

perftest -t am_lat -n 1000
perftest -t am_bw -D bcopy -s 8000 -n 5000
# Loss on both sides: the protocol repairs it under the stock tool.
UCX_UD_MCAST_RX_LOSS=0.05 perftest -t am_bw -D bcopy -s 8000 -n 2000
UCX_UD_MCAST_RX_LOSS=0.05 UCX_UD_MCAST_RTO_MIN=1ms perftest -t am_lat -n 200
# UCP over ud_mcast alone: its iface address travels in the worker
# address, and wireup reaches a receiver that has no endpoint yet.
UCP=1 perftest -t tag_lat -n 300
UCP=1 perftest -t tag_bw -s 100000 -n 50
echo "PASS"
