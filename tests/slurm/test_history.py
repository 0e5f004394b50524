#!/usr/bin/python3
"""Slurm end to end: the job history chooses the next job's layout (the closed
loop).

    test_history.py CASE ARGS...  (or --list: the case names)

The local Slurm, the options and the shared steps are in slurm_fixtures.py."""
import json
import os
import re
import sys

from slurm_fixtures import ARGS, Slurm, publish_profile, main
from e2e import check, log, run  # noqa: E402  (tests/e2e.py: slurm_fixtures puts it on the path)


def loop_run(s, reports, key, job, name):
    """One sbatch --multilane=report:DIR run of the closed loop under job key
    KEY: returns (tasks per GPU the cli_filter gave, its line, the run's report)."""
    s.env["MULTILANE_JOB_KEY"] = key
    before = set(os.listdir(reports))
    p, out = s.sbatch(["--gpus=2", f"--multilane=report:{reports}"], "echo batch ntasks=$SLURM_NTASKS\n" + job,
                      name=name)
    check(p.returncode == 0 and re.search(r"^loop size=\d+ ok=1 ", out, re.M), f"{name}: the job failed or summed wrong")
    ntasks = int(re.search(r"batch ntasks=(\d+)", out).group(1))
    lines = [l for l in p.stderr.splitlines() if "rank(s) per GPU:" in l]
    check(len(lines) == 1 and f"multilane: {ntasks // 2} rank(s) per GPU: " in lines[0],
          f"{name}: expected one line saying the {ntasks // 2} per GPU chosen and why, got {lines}")
    said = [l for l in out.splitlines() if re.search(r" tasks? per GPU", l) and "multilane:" in l]
    why = re.search(rf"multilane: {ntasks // 2} tasks? per GPU: (.*)$", said[0]) if len(said) == 1 else None
    check(why and why.group(1) == lines[0].split(" rank(s) per GPU: ", 1)[1],
          f"{name}: the job's output does not say the same choice in one line: {said}")
    new = [f for f in set(os.listdir(reports)) - before if f.endswith(".json")]
    check(len(new) == 1, f"{name}: expected one new report in {reports}, got {new}")
    loop_run.stderr = p.stderr
    return ntasks // 2, lines[0], os.path.join(reports, new[0])


def scale_times(doc, factor):
    """Scales every time of a job report (fields NAME_s: a number or
    {min, mean, max}, of the job and of its bins) by FACTOR."""
    for k, v in list(doc.items()):
        if k.endswith("_s") and isinstance(v, (int, float)):
            doc[k] = v * factor
        elif k.endswith("_s") and isinstance(v, dict):
            doc[k] = {m: x * factor if isinstance(x, (int, float)) else x for m, x in v.items()}
        elif isinstance(v, dict):
            scale_times(v, factor)
        elif isinstance(v, list):
            for x in v:
                if isinstance(x, dict):
                    scale_times(x, factor)


CALIBRATION_MS = 20.0  # the computation per step while calibrating (near what the cases then set)


def calibrate(s, heavy_comm):
    """The computation per step of the communication-heavy job: 5 times what
    the rest of its 40 steps (the allreduces and checks) takes here at 1 per
    GPU.  Measured with a computation in the steps, as the cases run it (a
    sleep lets other work take the caches, so that the same allreduces take
    up to 2.5 times longer than back to back), as the median of three runs
    in one job (one run beside a burst of other work would set it for the
    whole sequence)."""
    p, out = s.sbatch(["--gpus=2", "--multilane=ranks-per-gpu:1"],
                      heavy_comm.format(job=ARGS.loop_job, ms=CALIBRATION_MS, mode="split") * 3, name="calibrate")
    walls = sorted(float(w) for w in re.findall(r"^loop size=2 ok=1 wall_s=([\d.]+)", out, re.M))
    check(len(walls) == 3, f"calibrate: expected three runs of 2 ranks, got {out}")
    rest_s = max(0.0, walls[1] - 40 * CALIBRATION_MS / 1000)
    step_ms = max(10.0, 5 * rest_s * 1000 / 40)
    log(f"the 40 steps take {walls} s with {CALIBRATION_MS} ms of computation each, the rest of them "
        f"{rest_s:.3f} s (median): {step_ms:.1f} ms of computation per step")
    return step_ms


def comm_sequence(s, reports, key, job, second, third):
    """Runs 1 to 3 of a communication-heavy job under job key KEY: 1 per GPU
    first, then a try of 2 whose report shows the change and whether it paid
    (SECOND), then THIRD per GPU.  Returns (None, the try's report) when all
    held, else (what did not, None)."""
    ppg, line, _ = loop_run(s, reports, key, job, key + "-1")
    if ppg != 1:
        return f"run 1: {ppg} per GPU: {line}", None
    ppg, line, report = loop_run(s, reports, key, job, key + "-2")
    if not (ppg == 2 and "trying 2 per GPU" in line):
        return f"run 2 did not try 2 per GPU: {ppg}: {line}", None
    doc = json.loads(run([ARGS.multilane, "report", "--json", report], env=s.env).stdout)
    h = doc["jobs"][0]["history"]
    if not (any("ranks per GPU 1 -> 2" in c for c in h["changes"]) and h["paid"] == second):
        return f"the report of the try does not show the change and paid={second}: {h}", None
    ppg, line, _ = loop_run(s, reports, key, job, key + "-3")
    want = "the fastest measured" if third == 2 else "back to 1 per GPU"
    if not (ppg == third and want in line):
        return f"run 3: {ppg} per GPU, expected {third}: {line}", None
    return None, report


def case_auto_layout_from_history(root):
    """Issue 29: sbatch --multilane=report under a job key (MULTILANE_JOB_KEY)
    chooses the tasks per GPU from the job's own history.  The profile was
    tuned at 1 and 2 per GPU, recommends 1, and prices 2 per GPU's allreduce
    ten times cheaper.  A compute-heavy job stays at 1 (the prediction is
    within the margin); a communication-heavy one tries 2, keeps it where
    the try paid (its work is shared out) and goes back to 1 where it did not
    (its ranks contend); the report shows the comparison.  A damaged inbox
    file and a run of another node type are ignored with one line each."""
    # The cluster's daemons, and so the jobs, at nice -5: on CI's 2 cores
    # this case runs beside the other platform's stages (sanitizer builds and
    # tests), and its communication-heavy sequences assume that the
    # machine's speed holds from the calibration to their third run.
    s = Slurm(root, {}, nice=-5)
    try:
        publish_profile(s.db, ["host 0 inf lane ppg=1 time_us=20000 at=1M", "host 0 inf lane ppg=2 time_us=2000 at=1M",
                               "host 0 inf lane"], 1, " ranks_per_gpu=1 ranks_per_gpu_tuned=1,2 mps=none")
        reports = os.path.join(root, "reports")
        os.makedirs(reports)
        s.env["MULTILANE_USER_DB"] = os.path.join(root, "state", "user.db")
        heavy = "srun --mpi=pmix {job} {steps} 1048576 {ms} {mode}\n"  # under 1 % in allreduce
        compute = heavy.format(job=ARGS.loop_job, steps=4, ms=500, mode="split")
        # The communication-heavy job: 40 allreduces of 16 MiB, and a
        # computation 5 times as long as they take here at 1 per GPU
        # (measured: calibrate), so that a sixth of the time is allreduce: the
        # profile's price at 2 per GPU then predicts a gain beyond the margin
        # (a share above 1/9 does, so the allreduces may take down to 0.63
        # times the calibration's), and halving the computation pays even
        # where the allreduce of 4 ranks takes up to 3.2 times longer (this
        # machine's 2 cores: 2.0-2.3).
        heavy_comm = "srun --mpi=pmix {job} 40 16777216 {ms} {mode}\n"
        ppg, line, _ = loop_run(s, reports, "compute-heavy", compute, "compute-1")
        check(ppg == 1 and "no earlier run of this job" in line, f"compute-heavy run 1: {ppg} per GPU: {line}")
        ppg, line, _ = loop_run(s, reports, "compute-heavy", compute, "compute-2")
        check(ppg == 1 and "the fastest measured" in line, f"compute-heavy run 2 left 1 per GPU: {ppg}: {line}")
        # The communication-heavy cases assume this machine's speed stays
        # what the calibration measured for the three runs of a sequence.  On
        # a busy machine it may not (the allreduce time of 4 ranks on 2 cores
        # beside other work varies 2-3 times): a sequence whose timing
        # assumption broke is run again under a new job key after a new
        # calibration, up to 3 times, each broken attempt named in the log.
        # What the program does with the times it measured is checked every
        # time; a program that never tries, or never judges, fails all three.
        step_ms = calibrate(s, heavy_comm)
        for mode, second, third in (("split", "yes", 2), ("shared", "no", 1)):
            whys = []
            for attempt in (1, 2, 3):
                key = f"comm-{mode}" if attempt == 1 else f"comm-{mode}-attempt{attempt}"
                if attempt > 1:
                    step_ms = calibrate(s, heavy_comm)
                job = heavy_comm.format(job=ARGS.loop_job, ms=f"{step_ms:.1f}", mode=mode)
                why, report = comm_sequence(s, reports, key, job, second, third)
                if why is None:
                    break
                whys.append(f"{key}: {why}")
                log(f"{key}: {why}: calibrating again")
            check(why is None, f"comm-{mode}: three attempts, none as expected: {whys}")
        # A damaged file in the inbox and a run of another node type: one line each, never fatal.
        inbox = os.path.join(root, "state", "history")
        with open(os.path.join(inbox, "multilane-report-damaged.json"), "w") as f:
            f.write("{not json")
        foreign = json.load(open(report))  # comm-shared's try of 2 per GPU, ten times faster on another node type
        foreign["settings"]["profile"] = re.sub(r"node_type=\w+", "node_type=0123456789abcdef",
                                               foreign["settings"]["profile"])
        scale_times(foreign, 0.1)
        for name in ("foreign-1", "foreign-2"):  # two: the median at 2 per GPU would be theirs
            with open(os.path.join(inbox, f"multilane-report-{name}.json"), "w") as f:
                json.dump(foreign, f)
        ppg, line, _ = loop_run(s, reports, key, job, key + "-4")  # the comm-shared sequence that held
        check(ppg == 1 and "the fastest measured" in line, f"{key} run 4: {ppg} per GPU: {line}")
        notes = [l for l in loop_run.stderr.splitlines() if "multilane:" in l and "rank(s) per GPU:" not in l]
        check(len(notes) == 2 and "2 of another node type" in notes[0] + notes[1] and
              "multilane-report-damaged.json" in notes[0] + notes[1], f"expected one line each for the two: {notes}")
    finally:
        s.stop()


if __name__ == "__main__":
    sys.exit(main(globals()))
