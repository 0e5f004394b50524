#!/usr/bin/python3
"""mlprobe measures the system MPI's own algorithms (passthrough mpi=NAME), seen
from inside Open MPI: coll_base_counter.so (preloaded) counts coll/tuned's
calls of each allreduce function on communicators other than MPI_COMM_WORLD,
where the probe runs a system algorithm (its copy of MPI_COMM_WORLD).

An exhaustive plan with the candidates `passthrough mpi=ring` and
`passthrough mpi=recursive_doubling` makes a known number of calls of each:
per size, one to validate and rounds x reps x (warmup + iterations) timed.
Every rank must count exactly that many rings and recursive doublings, and
the result must list both as probed and valid.  With --memory device (skipped,
status 77, where no GPU is visible) the buffers are on the GPU and the staged
path's host collective must run the algorithms.  With the user's
OMPI_MCA_coll_tuned_use_dynamic_rules=0 their setting wins: both are invalid
(not probed, the result says why), none runs, the system's default still does.

    probe_choice_observed.py [--memory device] SHIM MPIEXEC [FLAGS...] -- MLPROBE
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from coll_counts import take_counts

RANKS = 4
SYSTEM = {"passthrough mpi=ring": "ring", "passthrough mpi=recursive_doubling": "recursivedoubling"}
PLAN = {"sizes": ["64K", "1M"], "candidates": list(SYSTEM), "max_rounds": 2, "reps_per_round": 2, "warmup": 1,
        "iterations": {"bytes": "1M", "min": 2, "max": 3}}


def run(shim, launcher, probe, extra=()):
    work = tempfile.mkdtemp(prefix="probe-choice-")
    folder = os.path.join(work, "counts")
    os.mkdir(folder)
    plan, out = os.path.join(work, "plan.json"), os.path.join(work, "result.json")
    with open(plan, "w") as f:
        json.dump(PLAN, f)
    cmd = launcher[:1] + ["-n", str(RANKS)] + launcher[1:] + [
        "-x", f"LD_PRELOAD={shim}", "-x", f"COLL_BASE_COUNTS_DIR={folder}", "-x", "MULTILANE_RANKS_PER_NODE=2"]
    for kv in extra:
        cmd += ["-x", kv]
    cmd += [probe, "--plan", plan, "--out", out, "--exhaustive"]
    print(" ".join(cmd), flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    print(p.stdout[-3000:], p.stderr[-3000:], sep="\n")
    assert p.returncode == 0, f"mlprobe exited with status {p.returncode}"
    with open(out) as f:
        result = json.load(f)
    return result, take_counts(folder, RANKS)


def expected_calls(result, candidate):
    """Calls of `candidate` per rank: per size where it was measured, one to
    validate and rounds x reps x (warmup + iterations)."""
    calls = 0
    for s in result["sizes"]:
        c = {x["candidate"]: x for x in s["candidates"]}[candidate]
        assert c["valid"] and c["reps"] == s["rounds"] * PLAN["reps_per_round"], c
        calls += 1 + s["rounds"] * PLAN["reps_per_round"] * (PLAN["warmup"] + s["iterations"])
    return calls


def gpu_visible():
    if shutil.which("nvidia-smi") is None:
        return False
    p = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True)
    return p.returncode == 0 and "GPU" in p.stdout


def main():
    args = sys.argv[1:]
    if args[:2] == ["--memory", "device"]:
        if not gpu_visible():
            print("probe_choice_observed.py: SKIPPED: no GPU visible")
            sys.exit(77)
        PLAN["memory"] = "device"
        args = args[2:]
    shim, rest = args[0], args[1:]
    sep = rest.index("--")
    launcher, probe = rest[:sep], rest[sep + 1]

    result, counts = run(shim, launcher, probe)
    described = result["system_algorithms"]
    assert described["mechanism"] == "Open MPI coll/tuned" and "why_none" not in described, described
    assert described["probed"] == ["ring", "recursive_doubling"], described
    for candidate, function in SYSTEM.items():
        want = expected_calls(result, candidate)
        seen = [c[function] for c in counts]
        assert seen == [want] * RANKS, f"{candidate}: expected {want} calls of {function} per rank, counted {seen}"
        print(f"{candidate}: {want} calls of {function} per rank, as measured")

    result, counts = run(shim, launcher, probe, ["OMPI_MCA_coll_tuned_use_dynamic_rules=0"])
    described = result["system_algorithms"]
    assert "OMPI_MCA_coll_tuned_use_dynamic_rules" in described.get("why_none", ""), described
    assert described["probed"] == [], described
    for s in result["sizes"]:
        for c in s["candidates"]:
            if c["candidate"] == "passthrough":
                assert c["valid"] and c["reps"] > 0, c
            else:
                assert not c["valid"] and c["error"].startswith("not probed: "), c
    seen = [{f: c[f] for f in SYSTEM.values()} for c in counts]
    assert all(v == 0 for c in seen for v in c.values()), f"the user's dynamic rules off must win, counted {seen}"
    print("probe_choice_observed: ok")


if __name__ == "__main__":
    main()
