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
# Checks that each uplink carried LOW to HIGH bytes a second, give or
# take SLACK bytes, over about 2 s. The window is timed, not assumed: on
# a loaded machine reading the counters took long enough that a paced
# uplink seemed to carry 131 Mbit/s of 100. Its bytes came in at most
# the time from before the first reading to after the second, and in at
# least the time from after the first to before the second.
now() { date +%s%N; }
expect_rate() {
    t0=$(now)
    uplinks > /tmp/ucg-load-test.$$
    t1=$(now)
    sleep 2
    t2=$(now)
    uplinks > /tmp/ucg-load-test.$$.after
    t3=$(now)
    while read -r name bytes; do
        before=$(awk -v n="$name" '$1 == n { print $2 }' /tmp/ucg-load-test.$$)
        moved=$((bytes - before))
        echo "load_test: $name carried $moved bytes in $(( (t2 - t1) / 1000000 ))-$(( (t3 - t0) / 1000000 )) ms ($4)"
        if ! awk -v m="$moved" -v lo="$1" -v hi="$2" -v s="$3" \
                -v short=$((t2 - t1)) -v long=$((t3 - t0)) \
                'BEGIN { exit !(m >= lo * short / 1e9 - s && m <= hi * long / 1e9 + s) }'; then
            echo "load_test: $name: expected $1 to $2 bytes a second, $3 either side"
            echo failed >> /tmp/ucg-load-test.$$.failed
        fi
    done < /tmp/ucg-load-test.$$.after
    rm -f /tmp/ucg-load-test.$$ /tmp/ucg-load-test.$$.after
}
"$cluster" load 100mbit 9>&- || rc=1
# 100 Mbit/s is 12.5 MB a second; the uplinks would carry 25 unpaced.
expect_rate 8750000 15625000 100000 "100mbit"
"$cluster" load off 9>&- || rc=1
expect_rate 0 0 100000 "off"
[ -e /tmp/ucg-load-test.$$.failed ] && rc=1
rm -f /tmp/ucg-load-test.$$.failed
# `load` returns once every loader sends, even loaders whose python
# takes 2 s to start: each uplink has carried load each way by then.
# This load is also taken down with the cluster.
slow=$(mktemp -d)
real_python=$(command -v python3)
printf '#!/bin/sh\nsleep 2\nexec %s "$@"\n' "$real_python" > "$slow/python3"
chmod +x "$slow/python3"
uplinks > /tmp/ucg-load-test.$$
PATH="$slow:$PATH" "$cluster" load 100mbit 9>&- >/dev/null || rc=1
uplinks | while read -r name bytes; do
    before=$(awk -v n="$name" '$1 == n { print $2 }' /tmp/ucg-load-test.$$)
    if [ $((bytes - before)) -lt 8972 ]; then
        echo "load_test: $name carried $((bytes - before)) bytes when load returned"
        echo failed >> /tmp/ucg-load-test.$$.failed
    fi
done
rm -rf "$slow" /tmp/ucg-load-test.$$
[ -e /tmp/ucg-load-test.$$.failed ] && rc=1
rm -f /tmp/ucg-load-test.$$.failed
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
