#!/usr/bin/env python3
"""sweep.py: the scaling sweep of docs/scale.md.  For every platform, node
count, ranks per node and SMPI allreduce selector of the chosen set it runs
mlsim_bench once (simrun.py) on the sizes that fit the memory cap, and writes
  OUT/results.csv  one row per (platform, nodes, ppn, selector, size, algo)
  OUT/tables.md    per platform: the system MPI's time and each multilane
                   algorithm's ratio (selector's time / algorithm's time, > 1
                   is faster) for every selector.

Memory: the benchmark's buffers are shared between ranks (SMPI shared malloc,
so results are not validated here: check_reduction.py does that), but SMPI's
collectives allocate their own temporaries, about one message per rank: a
run keeps ranks x size <= --cap-bytes (default 2 GiB), larger sizes are left
out and listed.  Runs that take longer than --run-timeout are killed and
listed.

Usage: sweep.py --build BUILD_DIR [--set default|full] [--out DIR]
"""
import argparse
import csv
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import simrun  # noqa: E402

SELECTORS = ["ompi", "mpich", "mvapich2"]
ALGOS = ["mpi", "lane", "hier", "split"]
KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB

# (nodes, ranks per node) of each set: every node count, the ranks per node
# subsampled so that a run stays within a few thousand simulated ranks.
SETS = {
    # A few minutes on a 2-core machine: 2 to 256 nodes of 4 ranks, 64 KiB
    # and 1 MiB.  1024 nodes (4096 simulated ranks) take over 5 minutes per
    # run there: in the full set only.
    "default": dict(platforms=["ndr8"], selectors=["ompi"],
                    layouts=[(2, 4), (8, 4), (64, 4), (256, 4)],
                    sizes=[64 * KIB, 1 * MIB], cap=256 * MIB),
    # docs/scale.md: every node count, 4 to 64 ranks per node where the
    # rank count stays <= 4096, sizes x16 from 64 KiB up to the memory cap.
    "full": dict(platforms=["ndr8", "gpu-staged", "local-tcp"], selectors=SELECTORS,
                 layouts=[(2, 4), (2, 16), (2, 64), (8, 4), (8, 16), (64, 4), (256, 4), (1024, 4)],
                 sizes=[64 * KIB, 1 * MIB, 16 * MIB, 256 * MIB], cap=512 * MIB),
}


def human(n):
    """1048576 -> '1 MiB'."""
    for unit, f in (("GiB", GIB), ("MiB", MIB), ("KiB", KIB)):
        if n >= f and n % f == 0:
            return "%d %s" % (n // f, unit)
    return "%d B" % n


def run_layout(a, plat, nodes, ppn, sel, sizes, skipped):
    """Runs one layout on the sizes that fit; returns the result rows."""
    ranks = nodes * ppn
    fit = [s for s in sizes if s * ranks <= a.cap_bytes]
    for s in sizes:
        if s not in fit:
            skipped.append("%s %d x %d %s %s: ranks x size over the memory cap" % (plat, nodes, ppn, sel, human(s)))
    if not fit:
        return []
    # One run: the sizes of a set are a geometric series (x16).
    factor = sizes[1] // sizes[0] if len(sizes) > 1 else 2
    rows = []
    try:
        doc, wall = simrun.run(a.smpirun, a.bench, os.path.join(a.out, "runs"), plat, nodes, ppn, sel,
                               (fit[0], fit[-1], factor), ALGOS, check=False, shared_malloc_bytes=64 * KIB,
                               timeout=a.run_timeout)
    except RuntimeError as e:
        skipped.append("%s %d x %d %s: %s" % (plat, nodes, ppn, sel, str(e).splitlines()[0]))
        print("  skipped: " + str(e).splitlines()[0], flush=True)
        return rows
    print("  %s %5d nodes x %2d  %-8s up to %8s  %.1f s" % (plat, nodes, ppn, sel, human(fit[-1]), wall), flush=True)
    for r in doc["results"]:
        rows.append(dict(platform=plat, nodes=nodes, ppn=ppn, selector=sel, size=r["size"], algo=r["algo"],
                         time_us=r["time_us"], wall_s=round(wall, 2)))
    return rows


def tables(rows, platforms, selectors):
    """Returns the Markdown tables: per platform and selector, the selector's
    time and the ratio selector / algorithm for each multilane algorithm."""
    out = []
    t = {(r["platform"], r["nodes"], r["ppn"], r["selector"], r["size"], r["algo"]): r["time_us"] for r in rows}
    for plat in platforms:
        out.append("### Platform `%s`\n" % plat)
        out.append("Time of SMPI's selector in µs; then selector time / multilane time (> 1: multilane faster), "
                   "each multilane algorithm running its inner collectives with the same selector.\n")
        head = "| nodes | ranks/node | size |"
        sep = "| ---: | ---: | ---: |"
        for sel in selectors:
            head += " %s (µs) | lane | hier | split |" % sel
            sep += " ---: | ---: | ---: | ---: |"
        out.append(head)
        out.append(sep)
        keys = sorted({(n, p, s) for (pl, n, p, _, s, _) in t if pl == plat})
        for n, p, s in keys:
            line = "| %d | %d | %s |" % (n, p, human(s))
            for sel in selectors:
                base = t.get((plat, n, p, sel, s, "mpi"))
                if base is None:
                    line += " – | – | – | – |"
                    continue
                line += " %.1f |" % base
                for algo in ("lane", "hier", "split"):
                    v = t.get((plat, n, p, sel, s, algo))
                    line += " %.2f |" % (base / v) if v else " – |"
            out.append(line)
        out.append("")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description="Runs the SMPI scaling sweep (docs/scale.md).")
    ap.add_argument("--build", required=True, help="the simulation build (preset simulation)")
    ap.add_argument("--set", choices=sorted(SETS), default="default")
    ap.add_argument("--out", default="scale-sweep")
    ap.add_argument("--platforms", help="comma list, overrides the set's")
    ap.add_argument("--selectors", help="comma list, overrides the set's")
    ap.add_argument("--cap-bytes", type=int, help="largest ranks x size of a run (memory)")
    ap.add_argument("--run-timeout", type=int, default=300, help="seconds before one run is killed")
    ap.add_argument("--smpirun", default="smpirun")
    ap.add_argument("--tables-only", action="store_true",
                    help="write OUT/tables.md from OUT/results.csv (of a finished or stopped sweep) and exit")
    a = ap.parse_args()
    conf = SETS[a.set]
    platforms = a.platforms.split(",") if a.platforms else conf["platforms"]
    selectors = a.selectors.split(",") if a.selectors else conf["selectors"]
    a.cap_bytes = a.cap_bytes or conf["cap"]
    if a.tables_only:
        with open(os.path.join(a.out, "results.csv")) as f:
            rows = [dict(r, nodes=int(r["nodes"]), ppn=int(r["ppn"]), size=int(r["size"]), time_us=float(r["time_us"]))
                    for r in csv.DictReader(f)]
        with open(os.path.join(a.out, "tables.md"), "w") as f:
            f.write(tables(rows, platforms, selectors))
        return 0
    a.bench = os.path.join(a.build, "simulation", "mlsim_bench")
    if not os.access(a.bench, os.X_OK):
        ap.error("no %s: cmake --preset simulation && cmake --build --preset simulation" % a.bench)
    os.makedirs(a.out, exist_ok=True)
    rows, skipped = [], []
    t0 = time.time()
    for plat in platforms:
        for nodes, ppn in conf["layouts"]:
            for sel in selectors:
                rows += run_layout(a, plat, nodes, ppn, sel, conf["sizes"], skipped)
                with open(os.path.join(a.out, "results.csv"), "w", newline="") as f:
                    w = csv.DictWriter(f, fieldnames=["platform", "nodes", "ppn", "selector", "size", "algo",
                                                      "time_us", "wall_s"])
                    w.writeheader()
                    w.writerows(rows)
    with open(os.path.join(a.out, "tables.md"), "w") as f:
        f.write(tables(rows, platforms, selectors))
        f.write("\nLeft out:\n\n" + "".join("- %s\n" % s for s in skipped) if skipped else "")
    print("sweep: %d rows, %d left out, %.0f s; %s" % (len(rows), len(skipped), time.time() - t0,
                                                       os.path.join(a.out, "tables.md")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
