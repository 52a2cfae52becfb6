#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# load_test.sh: `cluster load` puts RATE on every uplink, each way, and
# no more (the loaders are paced); `load off` stops it; `down` leaves no
# loader, link or state. Exits 77 where namespaces are not permitted.
set -u
here=$(dirname "$(readlink -f "$0")")
cluster="$here/cluster"
state=${UCG_CLUSTER_STATE:-/run/ucg-cluster}
exec 9>"$state.lock" # one cluster on the machine at a time (on_cluster.sh)
if ! flock -w 900 9; then
    echo "load_test: the cluster lock is still held after 900 s"
    exit 1
fi
"$cluster" up --hosts 2 --racks 2 --uplink-rate 200mbit 9>&- || exit $?
trap '"$cluster" down 9>&-' EXIT
rc=0
# Bytes each rack's uplink carried into it and out of it, one
# "NAME BYTES" line per direction (`cluster uplink-bytes`).
uplinks() {
    for r in 1 2; do
        "$cluster" uplink-bytes "$r" | awk -v r="$r" \
            '{ print "rack" r "-in", $1; print "rack" r "-out", $2 }'
    done
}
# Checks that each uplink carried LOW to HIGH bytes over 2 s.
expect_rate() {
    uplinks > /tmp/ucg-load-test.$$
    sleep 2
    uplinks | while read -r name bytes; do
        before=$(awk -v n="$name" '$1 == n { print $2 }' /tmp/ucg-load-test.$$)
        moved=$((bytes - before))
        echo "load_test: $name carried $moved bytes in 2 s ($3)"
        if [ "$moved" -lt "$1" ] || [ "$moved" -gt "$2" ]; then
            echo "load_test: $name: expected $1 to $2 bytes"
            echo failed >> /tmp/ucg-load-test.$$.failed
        fi
    done
    rm -f /tmp/ucg-load-test.$$
}
"$cluster" load 100mbit 9>&- || rc=1
sleep 0.5
# 100 Mbit/s for 2 s is 25 MB; the uplinks would carry 50 unpaced.
expect_rate 17500000 31250000 "100mbit"
"$cluster" load off 9>&- || rc=1
expect_rate 0 100000 "off"
[ -e /tmp/ucg-load-test.$$.failed ] && rc=1
rm -f /tmp/ucg-load-test.$$.failed
"$cluster" load 100mbit 9>&- >/dev/null || rc=1 # taken down with the cluster
"$cluster" down
trap - EXIT
left=$(ip -o link show | grep -c ': ucg' || true)
if [ "$left" -ne 0 ] || [ -e "$state" ]; then
    echo "load_test: the cluster left links or state behind"
    rc=1
fi
if pgrep -f 'b = bytes\(8972\)' >/dev/null; then
    echo "load_test: a loader outlived the cluster"
    rc=1
fi
[ "$rc" -eq 0 ] && echo "load_test: passed"
exit $rc
