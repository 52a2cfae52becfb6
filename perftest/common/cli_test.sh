#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# cli_test.sh STATUS REGEX COMMAND [ARG...]: COMMAND exits STATUS; with
# STATUS 0 its stdout matches the extended REGEX, otherwise its stderr is
# one line matching REGEX (a refusal names the flag in one line).
exp=$1
re=$2
shift 2
out=$(mktemp) || exit 1
err=$("$@" 2>&1 >"$out")
rc=$?
text=$(cat "$out")
rm -f "$out"
printf '%s\n' "$text"
printf '%s\n' "$err"
if [ "$rc" -ne "$exp" ]; then
    echo "cli_test: exit status $rc, expected $exp"
    exit 1
fi
if [ "$exp" -ne 0 ]; then
    text=$err
    if [ "$(printf '%s\n' "$err" | wc -l)" -ne 1 ]; then
        echo "cli_test: expected one line on stderr"
        exit 1
    fi
fi
if ! printf '%s\n' "$text" | grep -Eq -- "$re"; then
    echo "cli_test: no line matches '$re'"
    exit 1
fi
