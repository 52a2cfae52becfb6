#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""osu-compare against a fake mpirun (and ompi_info) that log each call and
print OSU's full listing: 2.0 us a call where stock Open MPI runs, 1.5
where the coll/ucg component is on the path."""
import csv
import os
import stat
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(HERE, "osu-compare")

FAKE_MPIRUN = r'''#!/usr/bin/env python3
import os, sys
argv = sys.argv[1:]
ucg = "mca_base_component_path" in argv
prog = os.path.basename(next(a for a in argv if "osu_" in a))
with open(os.environ["FAKE_LOG"], "a") as f:
    f.write(("ucg " if ucg else "stock ") + prog + " " + " ".join(argv) + "\n")
if ucg and not os.environ.get("FAKE_DECLINE"):
    print("[vm:1] coll:ucg: enabled on MPI_COMM_WORLD (cid 0, size 2)")
print("# OSU MPI Fake Test v7.0")
print("# Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations")
base = 1.5 if ucg else 2.0
for size in (8, 1024):
    avg = base * (size // 8)
    print(f"{size:<10d}{avg:18.2f}{avg - 0.5:18.2f}{avg + 0.5:18.2f}{1000:12d}")
'''
FAKE_OMPI_INFO = '''#!/bin/sh
echo "path:pkglibdir:/fake/openmpi3"
'''


def executable(path, text):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)


def main():
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)
            print("FAILED:", what)

    with tempfile.TemporaryDirectory() as tmp:
        bindir = os.path.join(tmp, "bin")
        osu = os.path.join(tmp, "osu")
        comp = os.path.join(tmp, "component")
        out = os.path.join(tmp, "out")
        for d in (bindir, osu, comp):
            os.makedirs(d)
        executable(os.path.join(bindir, "mpirun"), FAKE_MPIRUN)
        executable(os.path.join(bindir, "ompi_info"), FAKE_OMPI_INFO)
        for b in ("bcast", "allreduce"):
            executable(os.path.join(osu, f"osu_{b}"), "#!/bin/sh\n")
        open(os.path.join(comp, "mca_coll_ucg.so"), "w").close()
        log = os.path.join(tmp, "log")
        env = dict(os.environ, PATH=bindir + ":" + os.environ["PATH"],
                   FAKE_LOG=log)
        cmd = [sys.executable, TOOL, "--osu", osu, "--out", out,
               "--runs", "2", "--benchmarks", "bcast,allreduce",
               "--component", comp, "--sizes", "8:1024", "--",
               "-np", "2", "--mca", "btl", "self,vader"]

        # Two runs, each program stock and through coll/ucg, in turns.
        p = subprocess.run(cmd, env=env, capture_output=True, text=True)
        check(p.returncode == 0, f"exit 0 (got {p.returncode}: {p.stderr})")
        calls = [line.split()[:2] for line in open(log)]
        check(calls == [["stock", "osu_bcast"], ["ucg", "osu_bcast"],
                        ["stock", "osu_allreduce"], ["ucg", "osu_allreduce"],
                        ["ucg", "osu_bcast"], ["stock", "osu_bcast"],
                        ["ucg", "osu_allreduce"], ["stock", "osu_allreduce"]],
              f"stock and coll/ucg in turns, run 2 the other way: {calls}")
        for line in open(log):
            words = line.split()
            check("-np 2 --mca btl self,vader" in line,
                  f"mpirun's options passed on: {line}")
            check(words[-3:] == ["-f", "-m", "8:1024"],
                  f"OSU's full listing over the sizes asked: {line}")
            if words[0] == "ucg":
                check(f"{comp}:/fake/openmpi3" in line,
                      f"the component before Open MPI's own: {line}")
            else:
                check("mca_base_component_path" not in line
                      and "coll_ucg" not in line,
                      f"the stock run as Open MPI is installed: {line}")
        for n in (1, 2):
            path = os.path.join(out, f"run_{n}.csv")
            check(os.path.exists(path), f"{path} written")
            if not os.path.exists(path):
                continue
            rows = list(csv.DictReader(open(path)))
            got = {(r["collective"], r["bytes"]):
                   (r["avg_us"], r["min_us"], r["max_us"], r["iterations"],
                    r["mpi_avg_us"], r["ratio"]) for r in rows}
            check(got[("bcast", "8")] ==
                  ("1.500", "1.000", "2.000", "1000", "2.000", "0.750"),
                  f"run {n}: coll/ucg's row beside stock's: {got}")
            check(got[("allreduce", "1024")][0] == "192.000" and
                  got[("allreduce", "1024")][4] == "256.000",
                  f"run {n}: each program's own rows: {got}")
            check(len(rows) == 4, f"run {n}: 2 programs x 2 sizes")
        check("0.75 [0.75-0.75]" in p.stdout,
              f"the summary's ratio, median [min-max]: {p.stdout}")

        # A component that is not enabled: its figures would be stock's.
        os.remove(log)
        p = subprocess.run(cmd, env=dict(env, FAKE_DECLINE="1"),
                           capture_output=True, text=True)
        err = p.stderr.strip().splitlines()
        check(p.returncode == 1, f"exit 1 when UCG is not enabled "
                                 f"(got {p.returncode})")
        check(len(err) == 1 and "not enabled" in err[0],
              f"one line names it: {err}")

        # Bad command lines exit 2.
        for bad in (["--runs", "0"], ["--benchmarks", "nosuch"],
                    ["--component", tmp]):
            cut = cmd.index("--")  # the last of an option counts
            p = subprocess.run(cmd[:cut] + bad + cmd[cut:], env=env,
                               capture_output=True, text=True)
            check(p.returncode == 2, f"{bad}: exit 2 (got {p.returncode})")
    print(f"{'FAILED' if failures else 'passed'}: {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
