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


def case_tune_mpi_default_none(root):
    """Issue 47: under MpiDefault=none (Slurm's default), srun without --mpi
    starts Open MPI 5's and MPICH's tasks as worlds of one rank each (Open MPI
    4 refuses to start).  A tune told to leave srun's --mpi to the cluster
    (--srun-mpi default) fails with the fix and publishes nothing (on Open
    MPI 5 it published a memcpy's profile before); by default it passes the
    family's --mpi=pmix and measures one 2-rank world.  A --multilane step of
    separate worlds says so once; doctor names MpiDefault=none."""
    s = Slurm(root, {}, mpi_default="none")
    try:
        env = dict(s.env)
        env.update(probe_env())
        tune = [ARGS.multilane, "tune", "--partition", "gpu", "--db", s.db, "--budget", "3", "--sizes", "64K:256K",
                "--np", "2", "--memory", "host"]
        p = run(tune + ["--srun-mpi", "default"], env=env, timeout=600, cwd=root, check=False)
        text = p.stdout + p.stderr
        log(text)
        check(p.returncode != 0 and "nothing was stored" in text and "with the cluster's MpiDefault, and Open MPI "
              "needs --mpi=pmix: leave --srun-mpi out" in text, "the tune under MpiDefault=none did not fail with the fix")
        separate = "launched as 2 ranks, but this MPI world has 1" in text
        check(separate or "direct launched using \"srun\"" in text,
              "the probes neither refused their separate worlds nor failed to start")
        log(f"the probes {'refused their separate worlds' if separate else 'did not start (Open MPI 4)'}")
        r = run([ARGS.multilane, "resolve", "--db", s.db, "--partition", "gpu", "--any-node-type"], check=False)
        check("found=no" in r.stdout, f"the failed tune published a profile:\n{r.stdout}")
        p = run(tune, env=env, timeout=600, cwd=root)
        log(p.stdout + p.stderr)
        r = run([ARGS.multilane, "resolve", "--db", s.db, "--partition", "gpu", "--any-node-type"])
        profile = [l for l in r.stdout.splitlines() if l.startswith("profile=")]
        check("found=yes" in r.stdout and profile and re.search(r"\branks=2\b", profile[0]),
              f"no profile measured on 2 ranks:\n{r.stdout}")
        # MPICH (and Open MPI 5) under srun without --mpi: separate worlds,
        # said once by the step's task 0, with the --mpi each family needs.
        for probe in [ARGS.probe] + ([ARGS.probe_mpich] if ARGS.probe_mpich else []):
            p, out = s.sbatch(["-n2", "--multilane"], f"srun {probe} 3\n", name="worlds-of-one")
            lines = [l for l in out.splitlines() if "tasks, but each runs as an MPI world of 1 rank" in l]
            if probe == ARGS.probe and "direct launched using \"srun\"" in out:
                continue  # Open MPI 4 refuses to start: no world of one to say it in
            check(len(lines) == 1 and "this Slurm step has 2 tasks" in lines[0] and "--mpi=pmi2 for MPICH" in lines[0],
                  f"{probe}: the step of separate worlds was not said once:\n{out}")
        d = run([ARGS.multilane, "doctor", "--db", s.db], env=env, check=False)
        check("MpiDefault=none: srun without --mpi starts every task as an MPI world of its own" in d.stdout,
              f"doctor did not name MpiDefault=none:\n{d.stdout}")
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
