#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# reap_mpirun.sh MPIRUN ARGS...: runs a job that is expected to abort and
# exits with mpirun's status, unless every rank has exited and mpirun
# stays (its PMIx server can deadlock in its own finalize after a rank's
# MPI_Abort: Open MPI 4.1.4 with PMIx 3, about 1 job in 35 beside a
# build; every thread of mpirun then waits on a libpmix mutex). Then,
# after 5 s with only zombie children, it says so in one line, kills
# mpirun and exits 1: the job ended (its ranks did), mpirun did not.
"$@" &
pid=$!
quiet=0
while kill -0 "$pid" 2>/dev/null; do
    sleep 0.5
    kids=$(ps -o stat= --ppid "$pid" 2>/dev/null)
    if [ -n "$kids" ] && ! printf '%s\n' "$kids" | grep -qv '^Z'; then
        quiet=$((quiet + 1))
    else
        quiet=0
    fi
    if [ "$quiet" -ge 10 ]; then
        echo "reap_mpirun: every rank exited 5 s ago and mpirun stays" \
            "(Open MPI's own finalize): killed"
        kill -9 "$pid"
        wait "$pid"
        exit 1
    fi
done
wait "$pid"
