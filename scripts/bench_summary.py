#!/usr/bin/env python3
"""Summarises the JSON files of scripts/gpu-run.sh as Markdown tables.

Ratios compare times at the same message size (equivalently algbw): busbw
scales with 2(n-1)/n, and runs with several ranks per GPU have more ranks
than NCCL's one per GPU, so their busbw is not comparable across layouts.
"""
import glob
import json
import os
import sys

LIB_BASELINES = {"mpi", "mpi-1pg", "nccl"}


def load(folder):
    runs = {}
    for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
        with open(path) as f:
            doc = json.load(f)
        runs[os.path.basename(path)[:-5]] = doc
    return runs


def human(n):
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return "%d%s" % (n >> shift, unit)
    return str(n)


def rows(doc, algo):
    return {r["size"]: r for r in doc["results"] if r["algo"] == algo}


def best_library(runs, prefix):
    """size -> (time_us, run, algo, row) of the fastest library configuration."""
    best = {}
    for name, doc in runs.items():
        if not name.startswith(prefix):
            continue
        for r in doc["results"]:
            if r["algo"] in LIB_BASELINES or r.get("wrong"):
                continue
            cur = best.get(r["size"])
            if cur is None or r["time_us"] < cur[0]:
                best[r["size"]] = (r["time_us"], name, r["algo"], r)
    return best


def single_node(runs):
    base = runs.get("single-ppg1")
    if not base:
        return
    nccl, staged = rows(base, "nccl"), rows(base, "mpi")
    best = best_library(runs, "single-")
    print("## One node, %d GPUs: best multilane configuration against NCCL and the staged system MPI\n"
          % base["ranks"])
    print("| size | NCCL busbw (GB/s) | staged MPI busbw (GB/s) | best multilane | its time (us) | its algbw (GB/s) "
          "| vs NCCL (time) | vs staged MPI (time) |")
    print("| ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |")
    for size in sorted(best):
        t, run, algo, r = best[size]
        n, s = nccl.get(size), staged.get(size)
        print("| %s | %s | %s | %s %s | %.1f | %.2f | %s | %s |" % (
            human(size), "%.1f" % n["busbw"] if n else "-", "%.2f" % s["busbw"] if s else "-", run, algo, t,
            r["algbw"], "%.2fx" % (n["time_us"] / t) if n else "-", "%.1fx" % (s["time_us"] / t) if s else "-"))
    print()


def virtual_nodes(runs):
    base = runs.get("vnodes-ppg1")
    if not base:
        return
    staged = rows(base, "mpi")
    names = sorted((n for n in runs if n.startswith("vnodes-")),
                   key=lambda n: (int(n.split("ppg")[1].split("-")[0]), n))
    print("## Two virtual nodes of one GPU each: time of the staged system MPI at one rank per GPU "
          "divided by each configuration's time\n")
    configs = []
    for name in names:
        for algo in runs[name]["parameters"]["algos"]:
            if algo not in LIB_BASELINES:
                configs.append((name, algo))
    print("| size | staged MPI, 1 rank/GPU (us) | NCCL (us) | " + " | ".join("%s %s" % c for c in configs) + " | best |")
    print("| ---: | ---: | ---: |" + " ---: |" * len(configs) + " --- |")
    nccl = rows(base, "nccl")
    for size in sorted(staged):
        s = staged[size]["time_us"]
        cells, best = [], None
        for name, algo in configs:
            r = rows(runs[name], algo).get(size)
            if not r or r.get("wrong"):
                cells.append("-")
                continue
            ratio = s / r["time_us"]
            cells.append("%.2fx" % ratio)
            if best is None or ratio > best[0]:
                best = (ratio, "%s %s" % (name, algo))
        print("| %s | %.1f | %s | %s | %s |" % (human(size), s, "%.1f" % nccl[size]["time_us"] if size in nccl else "-",
                                               " | ".join(cells), "%.2fx %s" % best if best else "-"))
    print()


def full_tables(runs):
    print("## Every run\n")
    for name, doc in runs.items():
        wrong = doc["summary"]["out_of_bounds"]
        print("### %s: %d ranks, %s; #wrong %s\n" % (name, doc["ranks"], ", ".join(
            "%s=%s" % kv for kv in sorted(doc["variables"].items())) or "no variables", wrong))
        print("`%s`\n" % doc["command_line"])
        print("| size | algo | time_us | algbw | busbw | #wrong | vs_mpi |")
        print("| ---: | --- | ---: | ---: | ---: | ---: | ---: |")
        for r in doc["results"]:
            print("| %s | %s | %.1f | %.2f | %.2f | %s | %s |" % (
                human(r["size"]), r["algo"], r["time_us"], r["algbw"], r["busbw"], r["wrong"],
                "%.2f" % r["vs_mpi"] if r["vs_mpi"] is not None else "-"))
        print()


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: bench_summary.py FOLDER_WITH_JSON")
    runs = load(sys.argv[1])
    if not runs:
        sys.exit("bench_summary.py: no JSON files in %s" % sys.argv[1])
    total_wrong = sum(doc["summary"]["out_of_bounds"] or 0 for doc in runs.values())
    print("# multilane GPU benchmark summary\n")
    print("Out-of-bounds values over all runs: %d\n" % total_wrong)
    single_node(runs)
    virtual_nodes(runs)
    full_tables(runs)


if __name__ == "__main__":
    main()
