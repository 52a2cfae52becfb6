#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# on_cluster.sh HOSTS RANKS_PER_HOST PROGRAM [ARGS...]: brings up an
# emulated cluster of HOSTS hosts (test/cluster/cluster), runs PROGRAM on
# HOSTS x RANKS_PER_HOST ranks with mpirun (ranks by node) through
# coll/ucg (MCA_COMPONENT_PATH: the component's folder first), takes the
# cluster down, and checks nothing is left (links, state, /dev/shm entries
# die with each host's mount namespace). Exits with mpirun's status, or 77
# where namespaces are not permitted (ctest: skipped).
set -u
here=$(dirname "$(readlink -f "$0")")
hosts=$1
per=$2
shift 2
cluster="$here/cluster"
# One cluster on the machine at a time (its bridges and addresses are
# fixed): runs of several build trees wait for each other here.
exec 9>"${UCG_CLUSTER_STATE:-/run/ucg-cluster}.lock"
flock 9
"$cluster" up --hosts "$hosts" || exit $?
trap '"$cluster" down' EXIT INT TERM
list=$(seq -f "h%g:$per" -s, 1 "$hosts")
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    "$cluster" mpirun --host "$list" -np $((hosts * per)) --map-by node \
    --mca btl self,vader,tcp \
    --mca mca_base_component_path "$MCA_COMPONENT_PATH" \
    --mca coll_ucg_priority 90 --mca coll_ucg_verbose 10 "$@"
rc=$?
"$cluster" down
trap - EXIT INT TERM
left=$(ip -o link show | grep -c ': ucg' || true)
if [ "$left" -ne 0 ] || [ -e "${UCG_CLUSTER_STATE:-/run/ucg-cluster}" ]; then
    echo "on_cluster: the cluster left links or state behind"
    exit 1
fi
exit $rc
