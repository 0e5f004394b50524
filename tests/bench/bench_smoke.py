#!/usr/bin/env python3
"""bench_smoke.py: mlallreduce_bench runs every algorithm it is given at
every size with validation on, and its JSON file parses, holds a row for each
algorithm at each size and counts no wrong value, and each size's rows carry
the node's memory bound and vs_bound (benchmarks/CMakeLists.txt).

    bench_smoke.py JSON ALGOS COMMAND...   (COMMAND runs the benchmark with -J JSON -a ALGOS)"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from e2e import check, log, run_shown  # noqa: E402

path, algos, cmd = sys.argv[1], sys.argv[2].split(","), sys.argv[3:]
if os.path.exists(path):
    os.remove(path)
p = run_shown(cmd, "bench_smoke")
check(p.returncode == 0, "mlallreduce_bench exited with status %d" % p.returncode)
with open(path) as f:
    doc = json.load(f)
rows = doc["results"]
sizes = sorted({r["size"] for r in rows})
check(sizes == [1024, 8192, 65536], "sizes %s" % sizes)
for s in sizes:
    for a in algos:
        check(any(r["size"] == s and r["algo"] == a for r in rows), "no row for %s at %d B" % (a, s))
bad = [r for r in rows if r["wrong"] != 0]
check(not bad, "wrong values: %s" % bad)
check(doc["summary"]["out_of_bounds"] == 0, "out_of_bounds %s" % doc["summary"]["out_of_bounds"])
# Host buffers: each size's rows share one measured node bound (bound_us > 0),
# and vs_bound is that bound's time over the row's.
for s in sizes:
    bounds = {r["bound_us"] for r in rows if r["size"] == s}
    check(len(bounds) == 1 and all(b is not None and b > 0 for b in bounds), "bound_us at %d B: %s" % (s, bounds))
off = [r for r in rows if r["time_us"] and abs(r["vs_bound"] - r["bound_us"] / r["time_us"]) > 1e-6 * r["vs_bound"]]
check(not off, "vs_bound is not bound_us / time_us: %s" % off)
log("bench_smoke: %d rows, %d algorithms, no wrong value" % (len(rows), len(algos)))
