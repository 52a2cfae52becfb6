#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""pagelib.plot draws a figure whose title, labels and series names hold a
quote (gnuplot's single-quoted strings write one as two)."""
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pagelib import plot  # noqa: E402


def main():
    if shutil.which("gnuplot") is None:
        print("skipped: no gnuplot")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        png = os.path.join(tmp, "it's.png")
        drawn = plot(png, "OSU's own programs", "UCG's ratio",
                     {"rank's bcast": [(8, 0.5), (64, 1.5)]},
                     xlabel="message's size")
        ok = drawn and os.path.getsize(png) > 0
        print("passed" if ok else f"FAILED: no figure at {png}")
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
