#!/usr/bin/python3
"""Slurm end to end: `multilane tune --partition` through Slurm, and one
interrupted.

    test_tune.py CASE ARGS...  (or --list: the case names)

The local Slurm, the options and the shared steps are in slurm_fixtures.py."""
import os
import re
import subprocess
import time
import sys

from slurm_fixtures import ARGS, Slurm, probe_env, rank_lines, PROBE_JOB, main
from e2e import check, log, run  # noqa: E402  (tests/e2e.py: slurm_fixtures puts it on the path)


def case_tune_partition(root):
    """`multilane tune --partition gpu` submits the probe job with sbatch,
    waits and publishes the profile of the partition in the system database;
    a user job then gets it with --multilane and no probes."""
    s = Slurm(root, {})
    try:
        env = dict(s.env)
        env.update(probe_env())
        p = run([ARGS.multilane, "tune", "--partition", "gpu", "--db", s.db, "--budget", "3", "--sizes", "64K:256K",
                 "--np", "4", "--virtual-nodes", "2", "--ranks-per-gpu", "2", "--allow-oversubscribed"],
                env=env, timeout=600, cwd=root)
        text = p.stdout + p.stderr
        log(text)
        check(re.search(r"submitted batch job \d+ on its one node, as 2 virtual nodes \(time limit \d+ min", text, re.I),
              "tune did not go through sbatch on the one node, as 2 virtual nodes, with a time limit")
        check("OVERSUBSCRIBED" in text, "the 4-rank probe on this small machine is not marked oversubscribed")
        check(not [n for n in os.listdir(root) if n.startswith("multilane-tune.")], "the jobs' folder was left")
        r = run([ARGS.multilane, "resolve", "--db", s.db, "--partition", "gpu", "--any-node-type"])
        check("found=yes" in r.stdout and "ranks_per_gpu=2" in r.stdout, r.stdout)
        check("tuned_nodes=2\n" in r.stdout and "tuned_nodes_virtual=yes\n" in r.stdout, r.stdout)
        p, out = s.sbatch(["--gpus=2", "--multilane"], PROBE_JOB.format(probe=ARGS.probe), name="after-tune")
        rows = rank_lines(out)
        check(len(rows) == 4 and all(x["preload"] == "1" and x["calls"] == "5" for x in rows),
              f"the job did not run with the partition's profile: {rows}")
    finally:
        s.stop()


def case_tune_partition_interrupted(root):
    """An interrupted `multilane tune --partition` cancels its probe job
    (scancel by job id), stores nothing and removes its folder."""
    s = Slurm(root, {})
    try:
        env = dict(s.env)
        env.update(probe_env())
        proc = subprocess.Popen([ARGS.multilane, "tune", "--partition", "gpu", "--db", s.db, "--budget", "120",
                                 "--sizes", "4K:64M", "--exhaustive", "--np", "2", "--allow-oversubscribed"],
                                env=env, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        job = None
        deadline = time.time() + 60
        while time.time() < deadline and job is None:
            q = s.cmd(["squeue", "-h", "-n", "multilane-tune", "-o", "%i %T %l"], check_rc=False)
            for line in q.stdout.split("\n"):
                if line.strip().split(" ")[1:2] == ["RUNNING"]:
                    job = line.split()[0]
                    limit = line.split()[2]
            time.sleep(0.5)
        check(job is not None, "the probe job never ran")
        check(limit not in ("UNLIMITED", "INVALID"), f"the probe job has no time limit ({limit})")
        time.sleep(1)
        proc.send_signal(2)  # SIGINT, as Ctrl-C
        out, err = proc.communicate(timeout=120)
        log(out + err)
        check(proc.returncode == 130, f"interrupted tune exited {proc.returncode}")
        check(f"cancelled probe job(s) {job}" in err, "the job was not reported cancelled")
        deadline = time.time() + 30
        while time.time() < deadline:
            q = s.cmd(["squeue", "-h", "-j", job, "-o", "%T"], check_rc=False)
            if q.stdout.strip() in ("", "CANCELLED", "COMPLETING"):
                break
            time.sleep(0.5)
        check(q.stdout.strip() in ("", "CANCELLED", "COMPLETING"), f"job {job} still {q.stdout.strip()}")
        check(not os.path.exists(s.db) or "found=yes" not in run(
            [ARGS.multilane, "resolve", "--db", s.db, "--partition", "gpu", "--any-node-type"], check=False).stdout,
              "a profile was stored")
        check(not [n for n in os.listdir(root) if n.startswith("multilane-tune.")], "the jobs' folder was left")
    finally:
        s.stop()


if __name__ == "__main__":
    sys.exit(main(globals()))
