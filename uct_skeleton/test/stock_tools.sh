#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Stock UCX tools see an LD_PRELOADed out-of-tree transport:
#   stock_tools.sh [<sanitizer runtimes>:]<path to libuct_ucgskel.so>
set -euo pipefail
# The argument is an LD_PRELOAD value: the plugin, after the sanitizer
# runtimes in sanitized builds (cmake/UcgSanitizers.cmake).
lib=${1:?usage: stock_tools.sh <LD_PRELOAD value ending in the plugin.so>}
fail() { echo "FAIL: $*" >&2; exit 1; }

# Without the plugin UCX does not know the transport (the test is not vacuous).
ucx_info -d | grep >/dev/null "Transport: ucg_skel" && fail "listed without preload"

devices=$(LD_PRELOAD=$lib ucx_info -d)
grep -q "Component: ucg_skel" <<<"$devices" || fail "component not listed"
echo "$devices" | grep -A12 "Transport: ucg_skel" | grep >/dev/null "am_short: <= 64" \
    || fail "transport or its am_short capability not listed"

config=$(LD_PRELOAD=$lib ucx_info -c)
grep -q "^UCX_UCG_SKEL_MAX_SHORT=64$" <<<"$config" || fail "config not listed"
# The config table is live: a setting changes the advertised capability.
LD_PRELOAD=$lib UCX_UCG_SKEL_MAX_SHORT=128 ucx_info -d -t ucg_skel \
    | grep >/dev/null "am_short: <= 128" || fail "UCX_UCG_SKEL_MAX_SHORT ignored"
echo "PASS"
