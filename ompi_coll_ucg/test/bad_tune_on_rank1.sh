#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Runs "$@" with a coll_ucg_tune that UCG rejects on rank 1 only: its group
# creation fails while the other members' succeeds.
if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then
    export OMPI_MCA_coll_ucg_tune="bad rule"
fi
exec "$@"
