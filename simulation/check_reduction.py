#!/usr/bin/env python3
"""check_reduction.py: the CI case of the simulation build (CTest
sim_reduction).  Runs mlsim_bench on 4 simulated nodes of 4 ranks with real
buffers and validation on, under SMPI's Open MPI and MPICH selectors, and
fails unless every algorithm ran at every size and every rank's result was
the real reduction (the benchmark's check: #wrong 0, no out-of-bounds value).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import simrun  # noqa: E402

ALGOS = ["mpi", "lane", "hier", "split"]
SIZES = (1024, 262144, 16)  # 1 KiB, 16 KiB, 256 KiB


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--smpirun", required=True)
    ap.add_argument("--bench", required=True)
    ap.add_argument("--workdir", required=True)
    a = ap.parse_args()
    failures = []
    for selector in ("ompi", "mpich"):
        doc, wall = simrun.run(a.smpirun, a.bench, a.workdir, "local-tcp", 4, 4, selector, SIZES, ALGOS, check=True)
        rows = doc["results"]
        want = [1024, 16384, 262144]
        for size in want:
            for algo in ALGOS:
                r = [x for x in rows if x["size"] == size and x["algo"] == algo]
                if not r:
                    failures.append("%s: no row for %s at %d B" % (selector, algo, size))
                elif r[0]["wrong"] != 0:
                    failures.append("%s: %s at %d B: %d wrong values" % (selector, algo, size, r[0]["wrong"]))
                elif algo != "mpi" and r[0].get("ran_as") != algo:
                    failures.append("%s: %s at %d B ran as %s" % (selector, algo, size, r[0].get("ran_as")))
        if doc["summary"]["out_of_bounds"] != 0:
            failures.append("%s: %d out-of-bounds values" % (selector, doc["summary"]["out_of_bounds"]))
        if doc["layout"] is None or doc["layout"]["nodes"] != 4 or doc["layout"]["ranks_per_node"] != 4:
            failures.append("%s: layout %s, want 4 nodes of 4 ranks" % (selector, doc["layout"]))
        print("sim_reduction: %s: %d rows in %.1f s" % (selector, len(rows), wall))
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
