#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# tcp_cc_test.sh: each emulated host runs the TCP congestion control that
# `cluster up` gives it (cubic unless --tcp-cc says otherwise), whatever
# the machine's own, which stays as it was, as does the list of those a
# namespace may choose (decision 0038). Exits 77 where namespaces are not
# permitted.
set -u
here=$(dirname "$(readlink -f "$0")")
cluster="$here/cluster"
state=${UCG_CLUSTER_STATE:-/run/ucg-cluster}
cc=/proc/sys/net/ipv4/tcp_congestion_control
exec 9>"$state.lock" # one cluster on the machine at a time (on_cluster.sh)
if ! flock -w 900 9; then
    echo "tcp_cc_test: the cluster lock is still held after 900 s"
    exit 1
fi
machine=$(cat "$cc")
allowed_file=/proc/sys/net/ipv4/tcp_allowed_congestion_control
machine_allowed=$(cat "$allowed_file")
# `down` puts back a list that `up` had to add cubic to: start from a list
# without it (unless it is the machine's own), whatever an earlier run
# left, and give the machine its own list back at the end.
if [ "$machine" != cubic ]; then
    echo "$machine_allowed" | tr ' ' '\n' | grep -vx cubic | tr '\n' ' ' \
        > "$allowed_file"
fi
allowed=$(cat "$allowed_file")
trap 'echo "$machine_allowed" > "$allowed_file"' EXIT
rc=0
# Checks that every host of the cluster runs $1.
expect_hosts() {
    for h in $("$cluster" hosts); do
        got=$("$cluster" exec "$h" cat "$cc")
        echo "tcp_cc_test: $h runs $got ($2)"
        if [ "$got" != "$1" ]; then
            echo "tcp_cc_test: $h: expected $1"
            rc=1
        fi
    done
}
"$cluster" up --hosts 2 9>&- >/dev/null || exit $?
trap '"$cluster" down 9>&-; echo "$machine_allowed" > "$allowed_file"' EXIT
expect_hosts cubic "the default"
"$cluster" up --hosts 2 --tcp-cc reno 9>&- >/dev/null || rc=1
expect_hosts reno "--tcp-cc reno"
"$cluster" up --hosts 2 --tcp-cc machine 9>&- >/dev/null || rc=1
expect_hosts "$machine" "--tcp-cc machine"
if "$cluster" up --hosts 2 --tcp-cc no-such-cc 9>&- 2>/dev/null; then
    echo "tcp_cc_test: an unknown congestion control was accepted"
    rc=1
fi
if [ "$(cat "$cc")" != "$machine" ]; then
    echo "tcp_cc_test: the machine's congestion control changed to $(cat "$cc")"
    rc=1
fi
"$cluster" down
trap - EXIT
if [ "$(cat "$allowed_file")" != "$allowed" ]; then
    echo "tcp_cc_test: the machine's allowed congestion controls changed" \
        "from '$allowed' to '$(cat "$allowed_file")'"
    rc=1
fi
echo "$machine_allowed" > "$allowed_file"
exit $rc
