#!/usr/bin/env python3
"""model_check.py: checks multilane report's strong-scaling model against the
simulation (docs/scale.md, "The report's scaling model").

The report (report/report_scaling.cc, docs/report.md) predicts that on k
times the ranks each allreduce's time grows by
  g = (1 - s) f(n, k) + s f(N, k),   f(n, k) = [2(kn-1)/kn] / [2(n-1)/n]
(n the job's ranks, N its nodes, the message size unchanged), with s the
share of the step between nodes: 1 - (the time of the same call inside one
machine, as a profile tuned on virtual nodes prices it) / (the job's time).
This script simulates a job of N nodes, the same ranks on one machine as N
virtual nodes (MULTILANE_RANKS_PER_NODE: the profile's price), and the job on
2N and 4N nodes (same ranks per node, same sizes), and prints per size and
algorithm the simulated growth T(kN)/T(N) next to g and the model's error
(g / simulated - 1; negative: the model predicts too little growth, i.e. an
optimistic speedup), beside the rank-count model f(n, k) of before.

Usage: model_check.py --build BUILD_DIR [--out DIR] [--platforms ndr8,local-tcp] [--jobs 2x4,64x4]
"""
import argparse
import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import simrun  # noqa: E402

KIB, MIB = 1024, 1024 * 1024
JOBS = "2x4,64x4"  # the jobs' nodes x ranks per node
FACTORS = [2, 4]
SIZES = (64 * KIB, 16 * MIB, 16)
ALGOS = ["mpi", "lane", "hier"]


def ring_factor(n, k):
    """The report's ring factor (docs/report.md, "The scaling model")."""
    return (2.0 * (k * n - 1) / (k * n)) / (2.0 * (n - 1) / n)


def cap_last(ranks, cap_bytes):
    """The largest size of the sweep that keeps ranks x size within the cap."""
    last = SIZES[1]
    while last > SIZES[0] and last * ranks > cap_bytes:
        last //= SIZES[2]
    return last


def main():
    ap = argparse.ArgumentParser(description="Checks the report's scaling model against SMPI.")
    ap.add_argument("--build", required=True)
    ap.add_argument("--out", default="scale-model")
    ap.add_argument("--platforms", default="ndr8,local-tcp")
    ap.add_argument("--jobs", default=JOBS, help="the jobs, NODESxRANKS_PER_NODE, comma-separated (default %(default)s)")
    ap.add_argument("--selector", default="ompi")
    ap.add_argument("--smpirun", default="smpirun")
    ap.add_argument("--cap-bytes", type=int, default=512 * MIB)
    a = ap.parse_args()
    # The docs' worked example: 8 -> 16 GPUs gives 15/14.
    assert abs(ring_factor(8, 2) - 15.0 / 14.0) < 1e-12
    bench = os.path.join(a.build, "simulation", "mlsim_bench")
    rows = []
    for plat in a.platforms.split(","):
        for nodes, ppn in [tuple(int(x) for x in j.split("x")) for j in a.jobs.split(",")]:
            t = {}
            # The profile's price: the same ranks on one machine, as N virtual nodes.
            doc, wall = simrun.run(a.smpirun, bench, os.path.join(a.out, "runs"), plat, 1, nodes * ppn, a.selector,
                                   (SIZES[0], cap_last(nodes * ppn, a.cap_bytes), SIZES[2]), ALGOS, check=False,
                                   shared_malloc_bytes=64 * KIB, timeout=600,
                                   extra_env={"MULTILANE_RANKS_PER_NODE": str(ppn)})
            print("  %s 1 x %d as %d virtual nodes: %.1f s" % (plat, nodes * ppn, nodes, wall), flush=True)
            for r in doc["results"]:
                t[("one", r["size"], r["algo"])] = r["time_us"]
            for k in [1] + FACTORS:
                n = nodes * k
                last = cap_last(n * ppn, a.cap_bytes)
                doc, wall = simrun.run(a.smpirun, bench, os.path.join(a.out, "runs"), plat, n, ppn, a.selector,
                                       (SIZES[0], last, SIZES[2]), ALGOS, check=False, shared_malloc_bytes=64 * KIB,
                                       timeout=600)
                print("  %s %d x %d: %.1f s" % (plat, n, ppn, wall), flush=True)
                for r in doc["results"]:
                    t[(k, r["size"], r["algo"])] = r["time_us"]
            for (k, size, algo), v in sorted(t.items(), key=lambda kv: str(kv[0])):
                if k in (1, "one") or (1, size, algo) not in t:
                    continue
                base = t[(1, size, algo)]
                f = ring_factor(nodes * ppn, k)
                one = t.get(("one", size, algo))
                share = min(1.0, max(0.0, 1 - one / base)) if one else 1.0
                g = (1 - share) * f + share * ring_factor(nodes, k)
                rows.append(dict(platform=plat, nodes=nodes, ppn=ppn, k=k, size=size, algo=algo, t1_us=base,
                                 tk_us=v, simulated=round(v / base, 3), model=round(f, 3),
                                 error=round(f / (v / base) - 1, 3), one_machine_us=one,
                                 between_share=round(share, 3), model_nodes=round(g, 3),
                                 error_nodes=round(g / (v / base) - 1, 3)))
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "model.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    print("| platform | job | k | size | algo | T(N) µs | one machine µs | s | T(kN) µs | simulated growth "
          "| model g | error | rank-count f | error |")
    print("| --- | --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        print("| %s | %d x %d | %d | %d KiB | %s | %.1f | %s | %.2f | %.1f | %.2f | %.2f | %+.0f %% | %.2f | %+.0f %% |" % (
            r["platform"], r["nodes"], r["ppn"], r["k"], r["size"] // KIB, r["algo"], r["t1_us"],
            "%.1f" % r["one_machine_us"] if r["one_machine_us"] else "–", r["between_share"], r["tk_us"],
            r["simulated"], r["model_nodes"], 100 * r["error_nodes"], r["model"], 100 * r["error"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
