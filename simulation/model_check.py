#!/usr/bin/env python3
"""model_check.py: checks multilane report's strong-scaling model against the
simulation (docs/scale.md, "The report's scaling model").

The report (report/report_analysis.cc, docs/report.md) predicts that on k
times the ranks each allreduce's time grows by the ring factor
  f(n, k) = [2(kn-1)/kn] / [2(n-1)/n]
(n the job's ranks, the message size unchanged).  This script simulates a
job of N nodes and the same job on 2N and 4N nodes (same ranks per node,
same sizes), and prints per size and algorithm the simulated growth
T(kN)/T(N) next to f and the model's error (f / simulated - 1; negative: the
model predicts too little growth, i.e. an optimistic speedup).

Usage: model_check.py --build BUILD_DIR [--out DIR] [--platforms ndr8,local-tcp]
"""
import argparse
import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import simrun  # noqa: E402

KIB, MIB = 1024, 1024 * 1024
JOBS = [(2, 4), (64, 4)]  # the job's (nodes, ranks per node)
FACTORS = [2, 4]
SIZES = (64 * KIB, 16 * MIB, 16)
ALGOS = ["mpi", "lane", "hier"]


def ring_factor(n, k):
    """The report's ring factor (docs/report.md, "The scaling model")."""
    return (2.0 * (k * n - 1) / (k * n)) / (2.0 * (n - 1) / n)


def main():
    ap = argparse.ArgumentParser(description="Checks the report's scaling model against SMPI.")
    ap.add_argument("--build", required=True)
    ap.add_argument("--out", default="scale-model")
    ap.add_argument("--platforms", default="ndr8,local-tcp")
    ap.add_argument("--selector", default="ompi")
    ap.add_argument("--smpirun", default="smpirun")
    ap.add_argument("--cap-bytes", type=int, default=512 * MIB)
    a = ap.parse_args()
    # The docs' worked example: 8 -> 16 GPUs gives 15/14.
    assert abs(ring_factor(8, 2) - 15.0 / 14.0) < 1e-12
    bench = os.path.join(a.build, "simulation", "mlsim_bench")
    rows = []
    for plat in a.platforms.split(","):
        for nodes, ppn in JOBS:
            t = {}
            for k in [1] + FACTORS:
                n = nodes * k
                last = SIZES[1]
                while last > SIZES[0] and last * n * ppn > a.cap_bytes:
                    last //= SIZES[2]
                doc, wall = simrun.run(a.smpirun, bench, os.path.join(a.out, "runs"), plat, n, ppn, a.selector,
                                       (SIZES[0], last, SIZES[2]), ALGOS, check=False, shared_malloc_bytes=64 * KIB,
                                       timeout=600)
                print("  %s %d x %d: %.1f s" % (plat, n, ppn, wall), flush=True)
                for r in doc["results"]:
                    t[(k, r["size"], r["algo"])] = r["time_us"]
            for (k, size, algo), v in sorted(t.items()):
                if k == 1 or (1, size, algo) not in t:
                    continue
                base = t[(1, size, algo)]
                f = ring_factor(nodes * ppn, k)
                rows.append(dict(platform=plat, nodes=nodes, ppn=ppn, k=k, size=size, algo=algo, t1_us=base,
                                 tk_us=v, simulated=round(v / base, 3), model=round(f, 3),
                                 error=round(f / (v / base) - 1, 3)))
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "model.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    print("| platform | job | k | size | algo | T(N) µs | T(kN) µs | simulated growth | model f | model error |")
    print("| --- | --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        print("| %s | %d x %d | %d | %d KiB | %s | %.1f | %.1f | %.2f | %.2f | %+.0f %% |" % (
            r["platform"], r["nodes"], r["ppn"], r["k"], r["size"] // KIB, r["algo"], r["t1_us"], r["tk_us"],
            r["simulated"], r["model"], 100 * r["error"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
