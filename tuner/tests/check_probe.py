#!/usr/bin/env python3
"""Runs mlprobe under mpirun (4 ranks as 2 virtual nodes of 2; with --hydra under MPICH's
mpiexec, 2 ranks as 2 virtual nodes of 1) on a tiny plan
and checks its progress lines, its RESULT.json and the profile it writes; then
--exhaustive, --compare (and mlregret on its result), a bad plan and one over the size bound."""
import argparse, json, os, re, subprocess, sys, time

ap = argparse.ArgumentParser()
ap.add_argument("--mpirun", required=True)
ap.add_argument("--hydra", action="store_true", help="--mpirun is MPICH's hydra mpiexec")
ap.add_argument("--probe", required=True)
ap.add_argument("--workdir", required=True)
ap.add_argument("--regret", help="mlregret, run on the --compare result")
a = ap.parse_args()
os.makedirs(a.workdir, exist_ok=True)
plan_path = os.path.join(a.workdir, "plan.json")
out_path = os.path.join(a.workdir, "result.json")
prof_path = os.path.join(a.workdir, "profile.txt")
for p in (out_path, prof_path):
    if os.path.exists(p):
        os.remove(p)
plan = {
    "sizes": [4096, "64K", "1M"],
    "memory": "host", "datatype": "fp32", "op": "sum",
    "candidates": ["lane", "lane lanes=1", "hier"],
    "budget_s": 10, "reps_per_round": 2, "max_rounds": 3, "noise_floor": 0.03,
    "warmup": 1, "iterations": {"bytes": "1M", "min": 2, "max": 10},
}
with open(plan_path, "w") as f:
    json.dump(plan, f)

# MPICH (hydra): 2 ranks as 2 virtual nodes of 1, since its ch4:ucx device
# polls without yielding and 4 ranks on 2 cores outlast the plan's budget.
NP, RPN = (2, 1) if a.hydra else (4, 2)
if a.hydra:
    launch = [a.mpirun, "-n", str(NP), "-genv", "MULTILANE_RANKS_PER_NODE", str(RPN)]
else:
    launch = [a.mpirun, "--oversubscribe", "--bind-to", "none", "-np", str(NP), "-x", f"MULTILANE_RANKS_PER_NODE={RPN}"]
# Two ranks on one node, for the refusals below.
two = [a.mpirun, "-n", "2"] if a.hydra else [a.mpirun, "--oversubscribe", "-np", "2"]
cmd = launch + [a.probe, "--plan", plan_path, "--out", out_path, "--profile", prof_path]
print(" ".join(cmd), flush=True)
t0 = time.time()
p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=100)
wall = time.time() - t0
print(p.stdout)
assert p.returncode == 0, "mlprobe exited with %d" % p.returncode

# progress <done> <total> <seconds_left> <what>
prog = [l for l in p.stdout.splitlines() if l.startswith("progress ")]
assert len(prog) >= 2 + 3 * 2, "too few progress lines: %d" % len(prog)
last_done = -1
for l in prog:
    m = re.match(r"^progress (\d+) (\d+) (\d+(?:\.\d+)?) (\S.*)$", l)
    assert m, "bad progress line: %r" % l
    done, total = int(m.group(1)), int(m.group(2))
    assert total == 3 * (1 + 3), l
    assert last_done <= done <= total, l
    last_done = done
assert last_done == 12 and prog[-1].split()[4].startswith("done"), prog[-1]

with open(out_path) as f:
    r = json.load(f)
assert r["mode"] == "budgeted"
assert r["plan"]["sizes"] == plan["sizes"]
lay = r["layout"]
assert lay["size"] == NP and lay["nodes"] == 2 and lay["ranks_per_node"] == RPN and lay["regular"], lay
sizes = [s["bytes"] for s in r["sizes"]]
assert sizes == [4096, 65536, 1 << 20], sizes
for s in r["sizes"]:
    cands = {c["candidate"]: c for c in s["candidates"]}
    assert set(cands) == {"passthrough", "lane", "lane lanes=1", "hier"}, cands.keys()
    mpi = cands["passthrough"]
    assert mpi["valid"] and mpi["dropped_in_round"] is None and mpi["reps"] >= 2, mpi
    assert mpi["reps"] == len(mpi["samples_us"]) and all(x > 0 for x in mpi["samples_us"]), mpi
    valid = [c for c in s["candidates"] if c["valid"] and c["candidate"] != "passthrough"]
    assert valid, "no valid candidate at %d" % s["bytes"]
    # The budget guarantees the first three of a size's order (the system
    # MPI and two more: tuner/probe_sizes.cc kAlwaysMeasured) their first
    # round; on a busy machine the size's share can be spent before the
    # fourth has two samples, and it is then said so ("not measured: ").
    full = [c for c in s["candidates"] if c["reps"] >= 2 and c["median_us"] > 0]
    assert len(full) >= 3, "fewer than three candidates measured twice at %d: %s" % (s["bytes"], s["candidates"])
    for c in s["candidates"]:
        assert c["valid"], "wrong result from %s at %d: %s" % (c["candidate"], s["bytes"], c)
        assert not c["fell_back"], c
        assert c in full or (c["reps"] == 1 and c["median_us"] > 0) or \
            (c["reps"] == 0 and c.get("error", "").startswith("not measured: ")), c
        assert c["dropped_in_round"] is None or 1 <= c["dropped_in_round"] <= s["rounds"], c
    assert 1 <= s["rounds"] <= 3 and s["iterations"] >= 2, s

# The system MPI's own algorithms: the plan lists its candidates, so none of
# them ran; both MPIs offer theirs (a run below probes one).
sysalgo = r["system_algorithms"]
assert sysalgo["probed"] == [] and sysalgo["not_offered"] == [], sysalgo
assert sysalgo["mechanism"] == ("MPICH" if a.hydra else "Open MPI coll/tuned"), sysalgo
assert "recursive_doubling" in sysalgo["offered"] and "why_none" not in sysalgo, sysalgo

with open(prof_path) as f:
    prof = f.read()
print(prof)
lines = [l for l in prof.splitlines() if l and not l.startswith("#")]
assert lines[0].startswith("multilane-profile 1"), lines[0]
assert lines[1].startswith("host 0 "), lines
assert lines[-1].split()[2] == "inf", lines
for l in lines[1:]:
    assert re.match(r"^host \S+ \S+ (passthrough|lane|hier|split)( \S+=\S+)*$", l), l

def run_plan(extra_plan, extra_args):
    """The plan with extra_plan's keys (None: left out), run with extra_args."""
    pl = {k: v for k, v in dict(plan, **extra_plan).items() if v is not None}
    path = os.path.join(a.workdir, "plan2.json")
    out = os.path.join(a.workdir, "result2.json")
    with open(path, "w") as f:
        json.dump(pl, f)
    c = launch + [a.probe, "--plan", path, "--out", out] + extra_args
    print(" ".join(c), flush=True)
    q = subprocess.run(c, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=100)
    print(q.stdout)
    assert q.returncode == 0, "mlprobe exited with %d" % q.returncode
    with open(out) as f:
        return json.load(f)

# A spent budget: one round per size; per size passthrough and the first two
# candidates in the previous size's order get their round, the rest are
# marked not measured (valid, no sample, with the reason).
r = run_plan({"budget_s": 0}, [])
measured_before = None
for s in r["sizes"]:
    assert s["rounds"] == 1, s
    measured = [c["candidate"] for c in s["candidates"] if c["reps"] > 0]
    rest = [c for c in s["candidates"] if c["reps"] == 0]
    assert len(measured) == 3 and measured[0] == "passthrough", s
    assert all(c["reps"] == 2 for c in s["candidates"] if c["reps"] > 0), s
    assert len(rest) == 1 and rest[0]["valid"] and rest[0]["error"].startswith("not measured: "), s
    assert rest[0]["dropped_in_round"] in (0, 1), s
    if measured_before is not None:
        assert set(measured) == set(measured_before), (measured, measured_before)
    measured_before = measured

# The same with the default space, where the system's own algorithms join
# (passthrough mpi=NAME): they are ranked by the previous size's medians like
# multilane's; only the system's default goes first.
r = run_plan({"budget_s": 0, "candidates": None}, [])
previous = None
for s in r["sizes"]:
    measured = [c for c in s["candidates"] if c["reps"] > 0]
    assert len(measured) == 3 and measured[0]["candidate"] == "passthrough", s
    assert any(c["candidate"].startswith("passthrough mpi=") for c in s["candidates"]), s
    if previous is None and not a.hydra:
        # First size, no medians yet: multilane's own candidates come first.
        assert not any(c["candidate"].startswith("passthrough mpi=") for c in measured[1:]), measured
    if previous is not None:
        best = sorted((c for c in previous if c["candidate"] != "passthrough"), key=lambda c: c["median_us"])[:2]
        assert {c["candidate"] for c in measured[1:]} == {c["candidate"] for c in best}, (measured, best)
    previous = measured

# A system algorithm as a candidate (Open MPI: its own communicator; MPICH:
# chosen around each call): exact at every size, measured, listed as probed.
r = run_plan({"candidates": ["passthrough mpi=recursive_doubling"]}, ["--exhaustive"])
assert r["system_algorithms"]["probed"] == ["recursive_doubling"], r["system_algorithms"]
for s in r["sizes"]:
    c = {x["candidate"]: x for x in s["candidates"]}["passthrough mpi=recursive_doubling"]
    assert c["valid"] and c["reps"] == s["rounds"] * plan["reps_per_round"] and c["median_us"] > 0, c

# --exhaustive: every candidate, every round, nothing dropped.
r = run_plan({"budget_s": 0}, ["--exhaustive"])
assert r["mode"] == "exhaustive"
for s in r["sizes"]:
    assert s["rounds"] == 3, s
    for c in s["candidates"]:
        assert c["reps"] == 6 and c["dropped_in_round"] is None and c["valid"], c

# --compare: per size the budgeted search as above, then an exhaustive sweep in the same run.
r = run_plan({"sizes": [4096, "64K"], "candidates": ["lane", "hier"], "budget_s": 0}, ["--compare"])
cmp_out = os.path.join(a.workdir, "result2.json")
assert r["mode"] == "compare", r["mode"]
assert r["budgeted_wall_s"] > 0 and r["exhaustive_wall_s"] > 0, r
assert r["budgeted_wall_s"] + r["exhaustive_wall_s"] <= r["wall_s"] + 1e-6, r
assert [s["bytes"] for s in r["sizes"]] == [4096, 65536], r["sizes"]
for s in r["sizes"]:
    assert s["rounds"] == 1, s  # budget spent: the budgeted part as without --compare
    assert all(c["reps"] == 2 for c in s["candidates"]), s
    assert s["budget_s"] is not None and s["elapsed_s"] > 0 and s["exhaustive_elapsed_s"] > 0, s
    assert s["exhaustive_rounds"] == 3, s
    exh = {c["candidate"]: c for c in s["exhaustive"]}
    assert set(exh) == {"passthrough", "lane", "hier"}, exh.keys()
    for c in s["exhaustive"]:
        assert set(c) == {"candidate", "samples_us", "median_us", "reps"}, c
        assert c["reps"] == 6 == len(c["samples_us"]) and c["median_us"] > 0, c
        assert all(x > 0 for x in c["samples_us"]), c
if a.regret:
    q = subprocess.run([a.regret, cmp_out], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
    print(q.stdout)
    assert q.returncode == 0, "mlregret exited with %d" % q.returncode
    out = q.stdout.splitlines()
    hdr = [i for i, l in enumerate(out) if l.split()[:2] == ["size", "chosen"]]
    assert hdr, "no regret table header"
    rows = out[hdr[0] + 1:hdr[0] + 3]
    for l, size in zip(rows, ("4K", "64K")):
        m = re.match(r"^\s*(\S+)\s+(passthrough|lane|hier)\s+(\d+\.\d)\s+(passthrough|lane|hier)\s+(\d+\.\d)\s+(\d+\.\d)%$", l)
        assert m and m.group(1) == size, "bad regret row: %r" % l
        assert float(m.group(3)) >= float(m.group(5)), l
    assert any(re.match(r"^regret: mean \d+\.\d% worst \d+\.\d% over 2 sizes$", l) for l in out), out
    assert any(re.match(r"^wall time: budgeted \d+\.\d s \(budget 0\.0 s\), exhaustive \d+\.\d s", l)
               for l in out), out
# --compare and --exhaustive together: refused.
q = subprocess.run(two + [a.probe, "--plan", plan_path, "--out",
                    os.path.join(a.workdir, "both.json"), "--compare", "--exhaustive"],
                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
assert q.returncode != 0, q.stdout

# Separate worlds (issue 47): two one-rank worlds, as srun starts them when
# its --mpi does not match the MPI, each measure nothing: `--ranks 2` with
# two processes each started alone.  Exit status 2, the fix named, no result.
alone = os.path.join(a.workdir, "alone.json")
if os.path.exists(alone):
    os.remove(alone)  # an earlier run's
# Each singleton gets a session folder of its own: two Open MPI 4 singletons
# started at once race for the one in $TMPDIR (ompi.HOST.UID), each making and
# removing it.
def alone_env(i):
    folder = os.path.join(a.workdir, "session%d" % i)
    os.makedirs(folder, exist_ok=True)
    return dict(os.environ, OMPI_MCA_orte_tmpdir_base=folder, PRTE_MCA_prte_tmpdir_base=folder)


procs = [subprocess.Popen([a.probe, "--plan", plan_path, "--out", alone, "--ranks", "2"], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, env=alone_env(i)) for i in range(2)]
for proc in procs:
    text = proc.communicate(timeout=60)[0]
    print(text)
    assert proc.returncode == 2, proc.returncode
    assert "launched as 2 ranks, but this MPI world has 1" in text and "--mpi=" in text, text
assert not os.path.exists(alone), "a world of one wrote a result"
# The world it was launched as: measured as before.
q = subprocess.run(two + [a.probe, "--plan", plan_path, "--out", alone, "--ranks", "2"],
                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=100)
assert q.returncode == 0 and json.load(open(alone))["layout"]["size"] == 2, q.stdout

# A bad plan: a clear error, exit status 2, no hang.
with open(os.path.join(a.workdir, "bad.json"), "w") as f:
    f.write('{"sizes": [3]}')
q = subprocess.run(two + [a.probe, "--plan", os.path.join(a.workdir, "bad.json"),
                    "--out", os.path.join(a.workdir, "bad_out.json")],
                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
print(q.stdout)
assert q.returncode != 0 and "mlprobe: error: plan" in q.stdout, q.returncode

# A plan over the bound on outside files (mldb::kMaxInputFileBytes, 16 MiB,
# vocab/outside_input.h): a valid plan padded with spaces, so that only the
# bound refuses it: a failed run, one error line naming the file and the fix.
huge = os.path.join(a.workdir, "huge_plan.json")
with open(huge, "w") as f:
    text = json.dumps(dict(plan, budget_s=0))
    f.write(text + " " * ((16 << 20) + 1 - len(text)))
q = subprocess.run(two + [a.probe, "--plan", huge, "--out", os.path.join(a.workdir, "huge_out.json")],
                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
print(q.stdout)
os.remove(huge)
errors = [l for l in q.stdout.splitlines() if l.startswith("mlprobe: error: ")]
assert q.returncode != 0, "a plan over 16 MiB: exit status %d" % q.returncode
assert len(errors) == 1 and errors[0].startswith("mlprobe: error: plan '%s': cannot read: larger than 16 MiB: " % huge) \
    and errors[0].endswith("give the file multilane wrote, not a device or a stream"), errors
print("tuner_mlprobe_mpi: ok (%.1f s for the first run)" % wall)
