#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# plan_round_trip.sh UCG_PLAN TOPO PRINT-ARGS...: the plan `ucg_plan print`
# writes for TOPO passes `check --plan` and `simulate --plan` on TOPO.
set -e
tool=$1
topo=$2
shift 2
file=$(mktemp) || exit 1
trap 'rm -f "$file"' EXIT
"$tool" print --topo "$topo" "$@" >"$file"
"$tool" check --plan "$file" --topo "$topo"
"$tool" simulate --plan "$file" --topo "$topo"
