#!/usr/bin/env python3
"""Summarises the `small` step of scripts/gpu-run.sh (the flag path of small
device messages, docs/gpu.md) as Markdown tables: per ranks-per-GPU value,
algorithm and size, the median time per call over the interleaved repeats of
the host-synchronised path (flag path off) and the flag path under either
stream rule, with the ratios to the first.

Usage: small_summary.py OUTDIR   (reads OUTDIR/small-ppg*-mps-*-r*.json)
"""
import glob
import json
import os
import re
import statistics
import sys

MODES = [("mps-flagoff", "host-synchronised (flag path off)"), ("mps-device", "flag path, device rule"),
         ("mps-stream", "flag path, stream rule")]


def human(n):
    return "%d MiB" % (n >> 20) if n >= 1 << 20 else "%d KiB" % (n >> 10)


def main(folder):
    times = {}
    for path in sorted(glob.glob(os.path.join(folder, "small-*.json"))):
        m = re.match(r"small-(ppg\d+)-(.*?)(?:-r\d+)?\.json$", os.path.basename(path))
        if not m:
            continue
        ppg, mode = m.groups()
        with open(path) as f:
            for r in json.load(f)["results"]:
                times.setdefault((ppg, mode, r["algo"], r["size"]), []).append(r["time_us"])
    for ppg in sorted({k[0] for k in times}):
        sizes = sorted({k[3] for k in times if k[0] == ppg})
        print("\n%s, under MPS: median µs per call over the repeats (least–most)\n" % ppg)
        print("| size | algo | " + " | ".join(title for _, title in MODES) + " | device / off | stream / off |")
        print("| ---: | --- | ---: | ---: | ---: | ---: | ---: |")
        for size in sizes:
            for algo in ("hier", "lane"):
                cells, medians = [], []
                for mode, _ in MODES:
                    v = times.get((ppg, mode, algo, size))
                    if not v:
                        cells.append("-")
                        medians.append(None)
                        continue
                    medians.append(statistics.median(v))
                    cells.append("%.1f (%.1f–%.1f)" % (medians[-1], min(v), max(v)))
                ratios = ["%.2f" % (m / medians[0]) if m and medians[0] else "-" for m in medians[1:]]
                print("| %s | %s | %s | %s |" % (human(size), algo, " | ".join(cells), " | ".join(ratios)))


if __name__ == "__main__":
    main(sys.argv[1])
