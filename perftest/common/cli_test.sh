#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# cli_test.sh STATUS REGEX REJECT STREAM COMMAND [ARG...]: COMMAND exits
# STATUS and a line of STREAM matches the extended REGEX; no line of
# either stream matches REJECT (unless it is empty). STREAM "auto": stdout
# with STATUS 0, otherwise stderr, which must be one line (a refusal names
# the flag in one line); "stdout" (a report, such as a checker's FAILED):
# stdout whatever the status; "both": either stream.
exp=$1
re=$2
reject=$3
stream=$4
shift 4
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
if [ -n "$reject" ] &&
    printf '%s\n%s\n' "$text" "$err" | grep -Eq -- "$reject"; then
    echo "cli_test: a line matches '$reject'"
    exit 1
fi
case $stream in
auto)
    if [ "$exp" -ne 0 ]; then
        text=$err
        if [ "$(printf '%s\n' "$err" | wc -l)" -ne 1 ]; then
            echo "cli_test: expected one line on stderr"
            exit 1
        fi
    fi
    ;;
stdout) ;;
both) text=$(printf '%s\n%s\n' "$text" "$err") ;;
*)
    echo "cli_test: STREAM '$stream' is not auto, stdout or both"
    exit 1
    ;;
esac
if ! printf '%s\n' "$text" | grep -Eq -- "$re"; then
    echo "cli_test: no line matches '$re'"
    exit 1
fi
