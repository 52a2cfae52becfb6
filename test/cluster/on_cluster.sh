#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# on_cluster.sh [--net-min BYTES] [--tx-max HOST:BYTES] [--racks R]
# [--order HOST,HOST...] [--rack-max RACK:IN:OUT]
# [--tune-file FILE] [--fault KIND:HOST] HOSTS
# RANKS_PER_HOST PROGRAM [ARGS...]: brings up an emulated cluster of HOSTS hosts on R racks
# (test/cluster/cluster; with R > 1 UCG reads the racks from the cluster's
# switch file, UCG_TOPO_FILE), runs PROGRAM on
# HOSTS x RANKS_PER_HOST ranks with mpirun (ranks by node) through
# coll/ucg (MCA_COMPONENT_PATH: the component's folder first), takes the
# cluster down, and checks nothing is left (links, state, /dev/shm entries
# die with each host's mount namespace). With --net-min, every host must
# have received at least BYTES on its network interface during the run
# (traffic between hosts crossed the network, not shared memory). Exits
# with mpirun's status, or 77 where namespaces are not permitted (ctest:
# skipped). --fault strikes HOST once PROGRAM's rank 0 creates the file
# UCG_FAULT_READY names (test_fault.c): KIND `kill` kills its ranks,
# `link-down` sets its link down for 8 s (then up again, so that mpirun
# reaches that host's daemon: Open MPI's own wire, not UCG's). No host may
# be left with a ucg-* entry in its /dev/shm. --order lists the hosts in
# the order ranks fill them, each host's ranks consecutive (`--map-by
# slot`; default: h1..hN, ranks by node); --rack-max says how many bytes
# may cross RACK's uplink into it and out of it during the run.
set -u
here=$(dirname "$(readlink -f "$0")")
net_min=0
tx_max=""
tune_env=""
racks=1
fault=""
order=""
rack_max=""
while [ $# -gt 0 ]; do
    case $1 in
    --net-min) net_min=$2; shift 2 ;;
    --tx-max) tx_max=$2; shift 2 ;;
    --tune-file)
        UCG_TUNE=$(cat "$2") || exit 1
        export UCG_TUNE
        tune_env="-x UCG_TUNE"
        shift 2 ;;
    --racks) racks=$2; shift 2 ;;
    --order) order=$2; shift 2 ;;
    --rack-max) rack_max=$2; shift 2 ;;
    --fault) fault=$2; shift 2 ;;
    *) break ;;
    esac
done
hosts=$1
per=$2
shift 2
cluster="$here/cluster"
# One cluster on the machine at a time (its bridges and addresses are
# fixed): runs of several build trees wait for each other here.
# The hosts must not inherit the lock (9>&-): one left behind by a killed
# run would hold it for ever; the next `up` takes such a cluster down.
exec 9>"${UCG_CLUSTER_STATE:-/run/ucg-cluster}.lock"
if ! flock -w 900 9; then
    echo "on_cluster: the cluster lock is still held after 900 s"
    exit 1
fi
"$cluster" up --hosts "$hosts" --racks "$racks" 9>&- || exit $?
trap '"$cluster" down 9>&-' EXIT
trap '"$cluster" down 9>&-; exit 143' INT TERM HUP PIPE
list=$(seq -f "h%g:$per" -s, 1 "$hosts")
map="--map-by node"
if [ -n "$order" ]; then
    list=$(echo "$order" | sed "s/,/:$per,/g; s/\$/:$per/")
    map="--map-by slot"
fi
# /proc/net is the host's network namespace (/sys is the root's mount).
rx_bytes() {
    "$cluster" exec "$1" awk '$1 == "eth0:" { print $2 }' /proc/net/dev
}
tx_bytes() {
    "$cluster" exec "$1" awk '$1 == "eth0:" { print $10 }' /proc/net/dev
}
rack=${rack_max%%:*}
[ -n "$rack_max" ] && uplink_before=$("$cluster" uplink-bytes "$rack")
for h in $("$cluster" hosts); do
    eval "rx_$h=$(rx_bytes "$h")"
    eval "tx_$h=$(tx_bytes "$h")"
done
fault_env=""
striker=""
prog="" # the program's name: the first executable file of the arguments
for a in "$@"; do
    if [ -z "$prog" ] && [ -f "$a" ] && [ -x "$a" ]; then
        prog=$(basename "$a")
    fi
done
if [ -n "$fault" ]; then
    kind=${fault%%:*}
    victim=${fault#*:}
    ready=$(mktemp -u /tmp/ucg-fault-ready.XXXXXX)
    fault_env="-x UCG_FAULT_READY=$ready"
    (
        for _ in $(seq 1200); do
            [ -e "$ready" ] && break
            [ -e "$ready.stop" ] && exit 0 # the job ended first
            sleep 0.1
        done
        rm -f "$ready" "$ready.stop"
        echo "on_cluster: $kind on $victim"
        case $kind in
        kill) "$cluster" kill "$victim" "$prog" ;;
        link-down)
            "$cluster" exec "$victim" ip link set eth0 down
            sleep 8
            "$cluster" exec "$victim" ip link set eth0 up ;;
        *) echo "on_cluster: --fault: unknown kind $kind" ;;
        esac
    ) 9>&- &
    striker=$!
fi
# shellcheck disable=SC2086 # fault_env, tune_env, map: empty or words
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    "$cluster" mpirun --host "$list" -np $((hosts * per)) $map \
    --mca btl self,vader,tcp \
    --mca mca_base_component_path "$MCA_COMPONENT_PATH" \
    --mca coll_ucg_priority 90 --mca coll_ucg_verbose 10 $fault_env \
    $tune_env "$@" 9>&- &
mpirun=$!
# With recovery on (the fault tests), mpirun and its daemons stay after
# every rank exited (Open MPI 4.1.4 across daemons): 10 s after the last
# rank and the fault's end (a host's daemon forwards its ranks' output
# once its link is back), say so and end it.
# Counted only once a rank ran: a slow start is not an end.
seen=0
gone=0
while kill -0 "$mpirun" 2>/dev/null; do
    sleep 0.5
    if [ -n "$prog" ] && pgrep -x "$(echo "$prog" | cut -c1-15)" >/dev/null; then
        seen=1
        gone=0
    elif [ "$seen" -eq 1 ] &&
        ! { [ -n "$striker" ] && kill -0 "$striker" 2>/dev/null; }; then
        gone=$((gone + 1))
    fi
    if [ "$gone" -ge 20 ]; then
        echo "on_cluster: every rank exited 10 s ago and mpirun stays: killed"
        kill -9 "$mpirun" 2>/dev/null
        break
    fi
done
wait "$mpirun"
rc=$?
if [ -n "$striker" ]; then
    touch "$ready.stop" # a fault under way finishes (the link comes up)
    wait "$striker"
    rm -f "$ready" "$ready.stop"
fi
for h in $("$cluster" hosts); do
    left=$("$cluster" exec "$h" sh -c 'ls /dev/shm | grep "^ucg-"' || true)
    if [ -n "$left" ]; then
        echo "on_cluster: $h left /dev/shm entries: $left"
        rc=1
    fi
done
for h in $("$cluster" hosts); do
    got=$(( $(rx_bytes "$h") - $(eval echo "\$rx_$h") ))
    sent=$(( $(tx_bytes "$h") - $(eval echo "\$tx_$h") ))
    echo "on_cluster: $h received $got bytes and sent $sent over its" \
        "network interface"
    if [ "$rc" -eq 0 ] && [ "$got" -lt "$net_min" ]; then
        echo "on_cluster: $h received under $net_min bytes: the traffic" \
            "between hosts did not cross the network"
        rc=1
    fi
    if [ "$rc" -eq 0 ] && [ "$h" = "${tx_max%%:*}" ] &&
        [ "$sent" -gt "${tx_max#*:}" ]; then
        echo "on_cluster: $h sent over ${tx_max#*:} bytes"
        rc=1
    fi
done
if [ -n "$rack_max" ]; then
    read -r in0 out0 <<EOF
$uplink_before
EOF
    read -r in1 out1 <<EOF
$("$cluster" uplink-bytes "$rack")
EOF
    limits=${rack_max#*:}
    echo "on_cluster: rack $rack's uplink carried $((in1 - in0)) bytes into" \
        "it and $((out1 - out0)) out of it"
    if [ "$rc" -eq 0 ] && { [ $((in1 - in0)) -gt "${limits%%:*}" ] ||
        [ $((out1 - out0)) -gt "${limits#*:}" ]; }; then
        echo "on_cluster: rack $rack's uplink carried over" \
            "${limits%%:*} bytes in or ${limits#*:} out"
        rc=1
    fi
fi
"$cluster" down
trap - EXIT INT TERM HUP PIPE
left=$(ip -o link show | grep -c ': ucg' || true)
if [ "$left" -ne 0 ] || [ -e "${UCG_CLUSTER_STATE:-/run/ucg-cluster}" ]; then
    echo "on_cluster: the cluster left links or state behind"
    exit 1
fi
exit $rc
