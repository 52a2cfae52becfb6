# SPDX-License-Identifier: BSD-3-Clause
"""What the results pages' generators share: sizes and numbers as the
pages print them, a ratio cell, a page written or checked, and a gnuplot
figure of ratios against size (perftest/results/make-page,
perftest/mm/results/make-page, perftest/mcast/results/make-page)."""
import os
import shutil
import statistics
import subprocess

SIZE_TICS = ("set xtics ('8 B' 8, '64 B' 64, '512 B' 512, '4 KiB' 4096, "
             "'32 KiB' 32768, '256 KiB' 262144, '2 MiB' 2097152, "
             "'16 MiB' 16777216)")


def size_name(b):
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if b >= 1 << shift and b % (1 << shift) == 0:
            return f"{b >> shift} {unit}"
    return f"{b} B"


def fmt(x):
    return f"{x:.2f}" if x < 100 else f"{x:.0f}"


def ratio_cell(rs):
    """median [min-max] of ratios, bold when the median is above 1."""
    m = statistics.median(rs)
    cell = f"{m:.2f} [{min(rs):.2f}-{max(rs):.2f}]"
    return f"**{cell}**" if round(m, 2) > 1.0 else cell


def quoted(text):
    """`text` as a gnuplot single-quoted string (a quote written twice)."""
    return "'" + str(text).replace("'", "''") + "'"


def plot(png, title, ylabel, series, xlabel="message size", xtics=SIZE_TICS,
         logx=True):
    """Draws `series` (name -> [(x, ratio)]) into `png` with a dashed line
    at 1; False when gnuplot is missing."""
    if shutil.which("gnuplot") is None:
        return False
    data = png + ".dat"
    plots = []
    with open(data, "w") as f:
        for name, pts in series.items():
            if not pts:
                continue
            f.write(f"# {name}\n")
            for x, y in pts:
                f.write(f"{x} {y}\n")
            f.write("\n\n")
            plots.append(f"{quoted(data)} index {len(plots)} with "
                         f"linespoints title {quoted(name)}")
    script = "\n".join([
        "set terminal pngcairo size 900,500 noenhanced",
        f"set output {quoted(png)}", f"set title {quoted(title)}",
        "set logscale x 2" if logx else "", "set logscale y 2", xtics,
        f"set xlabel {quoted(xlabel)}", f"set ylabel {quoted(ylabel)}",
        "set grid",
        "set key outside right", "set arrow from graph 0, first 1 to "
        "graph 1, first 1 nohead lw 2 dt 2",
        "plot " + ", ".join(plots)])
    subprocess.run(["gnuplot"], input=script, text=True, check=True)
    os.unlink(data)
    return True


def write_or_check(path, text, check, maker):
    """Writes the page, or with `check` says whether it is stale (exit 1)."""
    if check:
        with open(path) as f:
            if f.read() != text:
                print(f"{os.path.relpath(path)} is stale: run {maker}")
                return 1
        return 0
    with open(path, "w") as f:
        f.write(text)
    return 0
