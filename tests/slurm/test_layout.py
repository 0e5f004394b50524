#!/usr/bin/python3
"""Slurm end to end: the layout a job gets: tasks per GPU from the profile or
the options, salloc, a second user, --cpu-bind=none.

    test_layout.py CASE ARGS...  (or --list: the case names)

The local Slurm, the options and the shared steps are in slurm_fixtures.py."""
import hashlib
import os
import re
import sys

from slurm_fixtures import (ARGS, TEST_USER, Slurm, publish_lane_profile, publish_profile,
    rank_lines, multilane_lines, ensure_test_user, PROBE_JOB, main)
from e2e import check, run  # noqa: E402  (tests/e2e.py: slurm_fixtures puts it on the path)


def case_sbatch_tuned_layout(root):
    """sbatch --multilane --gpus=2: the cli_filter gives 2 tasks per GPU (the
    tuned number), the plugin binds tasks 0,1 to GPU 0 and 2,3 to GPU 1 and
    each task to its own block of CPUs, and every MPI_Allreduce of the job
    runs through the library with the published profile."""
    s = Slurm(root, {})
    try:
        publish_lane_profile(s.db)
        p, out = s.sbatch(["--gpus=2", "--multilane"], "echo batch ntasks=$SLURM_NTASKS\n" + PROBE_JOB.format(probe=ARGS.probe))
        check(p.returncode == 0, "the job failed")
        check("batch ntasks=4" in out, "the allocation did not get 2 tasks per GPU (4 tasks)")
        rows = rank_lines(out)
        check(len(rows) == 4, f"expected 4 ranks, got {len(rows)}")
        check([r["gpu"] for r in rows] == ["0", "0", "1", "1"], f"GPU binding {[r['gpu'] for r in rows]}")
        cpus = [r["cpus"] for r in rows]
        check(len(set(cpus)) > 1, f"tasks were not bound to CPU blocks: {cpus}")
        ncpu = os.cpu_count()
        want = [str(i * ncpu // 4) for i in range(4)] if ncpu < 4 else None
        if want:
            check(cpus == want, f"CPU blocks {cpus}, expected {want}")
        for r in rows:
            check(r["size"] == "4" and r["ok"] == "1", f"rank {r['rank']}: wrong result")
            check(r["preload"] == "1", f"rank {r['rank']}: libmlallreduce not preloaded")
            check(r["calls"] == "5" and r["lane"] == "5",
                  f"rank {r['rank']}: the library's counters say calls={r['calls']} lane={r['lane']}, expected 5 and 5")
        check(not multilane_lines(out), f"a successful job printed: {multilane_lines(out)}")
    finally:
        s.stop()


def case_sbatch_recommended_ranks_per_gpu(root):
    """Issue 12: a profile tuned at 1 and 2 ranks per GPU that recommends 1.
    sbatch --multilane --gpus=2 gets 1 task per GPU from the cli_filter, and
    the library runs the entries tuned at 1 (hier), not those at 2 (lane) or
    the ones for other layouts (lane)."""
    s = Slurm(root, {})
    try:
        publish_profile(s.db, ["host 0 inf hier ppg=1", "host 0 inf lane ppg=2", "host 0 inf lane"], 1,
                        " ranks_per_gpu=1 ranks_per_gpu_tuned=1,2 mps=none")
        r = run([ARGS.multilane, "resolve", "--db", s.db, "--partition", "gpu", "--any-node-type"])
        check("ranks_per_gpu=1\n" in r.stdout and "ranks_per_gpu_tuned=1,2\n" in r.stdout, r.stdout)
        p, out = s.sbatch(["--gpus=2", "--multilane"], "echo batch ntasks=$SLURM_NTASKS\n" + PROBE_JOB.format(probe=ARGS.probe))
        check(p.returncode == 0, "the job failed")
        check("batch ntasks=2" in out, "the allocation did not get the recommended 1 task per GPU (2 tasks)")
        rows = rank_lines(out)
        check([r["gpu"] for r in rows] == ["0", "1"], f"GPU binding {[r['gpu'] for r in rows]}")
        for r in rows:
            check(r["ok"] == "1" and r["calls"] == "5" and r["hier"] == "5",
                  f"rank {r['rank']}: calls={r['calls']} hier={r['hier']} lane={r['lane']}: not the ppg=1 entries")
        # A user's own value that was tuned gets its entries.
        p, out = s.sbatch(["--gpus=2", "--multilane=ranks-per-gpu:2"], PROBE_JOB.format(probe=ARGS.probe),
                          name="user-ppg")
        rows = rank_lines(out)
        check(len(rows) == 4 and all(r["lane"] == "5" for r in rows), f"ranks-per-gpu:2 did not run ppg=2: {rows}")
    finally:
        s.stop()


def case_srun_ranks_per_gpu(root):
    """srun --multilane=ranks-per-gpu:1,verbose overrides the tuned number;
    verbose shows the library's counters at MPI_Finalize."""
    s = Slurm(root, {})
    try:
        publish_lane_profile(s.db)
        p = s.cmd(["srun", "--gpus=2", "--multilane=ranks-per-gpu:1,verbose", ARGS.probe, "3"])
        rows = rank_lines(p.stdout)
        check([r["gpu"] for r in rows] == ["0", "1"], f"expected 2 tasks on GPUs 0 and 1, got {rows}")
        check(all(r["lane"] == "3" for r in rows), "calls did not run the profile's algorithm")
        text = p.stdout + p.stderr
        check("multilane: stats: rank 0: calls=3" in text, "verbose did not print the library's counters")
        check(re.search(r"multilane: profile \d+ of node type", text), "verbose did not name the profile")
        # Issue 47: a step without GPUs is told nothing about tasks per GPU.
        p = s.cmd(["srun", "-n", "2", "--multilane=verbose", ARGS.probe, "1"])
        said = [l for l in (p.stdout + p.stderr).splitlines() if re.search(r"multilane: profile \d+ of node type", l)]
        check(said and not any("per GPU" in l for l in said), f"a step without GPUs was told its tasks per GPU: {said}")
    finally:
        s.stop()


def sha256(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def case_second_user_reuses_profile(root):
    """A second Unix user gets the admin's profile with no probes: the job
    runs with the library, and the system database is unchanged byte for byte."""
    ensure_test_user(root)
    s = Slurm(root, {})
    try:
        publish_lane_profile(s.db)
        before = sha256(s.db)
        os.chmod(root, 0o777)
        p, out = s.sbatch(["--gpus=2", "--multilane"],
                          "id -un\n" + PROBE_JOB.format(probe=ARGS.probe), user=TEST_USER, name="user2")
        check(p.returncode == 0, "the second user's job failed")
        check(out.splitlines()[0] == TEST_USER, "the job did not run as the second user")
        rows = rank_lines(out)
        check(len(rows) == 4 and all(r["lane"] == "5" for r in rows), f"the profile was not used: {rows}")
        check(sha256(s.db) == before, "the system database changed")
        check("mlprobe" not in out and "tune" not in out, "probes ran for the second user")
        log_text = open(os.path.join(s.dir, "log", "slurmctld.log")).read()
        user_jobs = re.findall(r"_slurm_rpc_submit_batch_job: JobId=(\d+)", log_text)
        check(len(user_jobs) == 1, f"expected exactly the user's one job, the controller saw {len(user_jobs)}")
    finally:
        s.stop()


def case_salloc_and_user_settings(root):
    """salloc --multilane: the allocation gets the tuned tasks per GPU and its
    srun step the library with the profile.  A user's own LD_PRELOAD stays
    first (the library after it) and a user's own MULTILANE_PROFILE is kept:
    the job runs the user's table (hier), not the published one (lane)."""
    s = Slurm(root, {})
    try:
        publish_lane_profile(s.db)
        p = s.cmd(["salloc", "--gpus=2", "--multilane", "srun", "--mpi=pmix", ARGS.probe, "5"])
        rows = rank_lines(p.stdout)
        check(len(rows) == 4, f"salloc --multilane: expected 4 ranks (2 per GPU, tuned), got {rows}\n{p.stderr}")
        check([r["gpu"] for r in rows] == ["0", "0", "1", "1"], f"GPU binding {[r['gpu'] for r in rows]}")
        for r in rows:
            check(r["ok"] == "1" and r["preload"] == "1" and r["lane"] == "5",
                  f"salloc --multilane: rank {r['rank']}: ok={r['ok']} preload={r['preload']} lane={r['lane']}")
        # The user's own preload and profile.
        user_lib = "/lib/x86_64-linux-gnu/libm.so.6"
        env = dict(s.env)
        env["LD_PRELOAD"] = user_lib
        env["MULTILANE_PROFILE"] = "multilane-profile 1\nhost 0 inf hier\n"
        q = run(["srun", "--gpus=1", "--multilane", "/usr/bin/env"], env=env, timeout=120, cwd=root)
        preload = [l[len("LD_PRELOAD="):] for l in q.stdout.splitlines() if l.startswith("LD_PRELOAD=")]
        check(preload, f"no LD_PRELOAD in the task:\n{q.stdout}\n{q.stderr}")
        for value in preload:  # one per task (the cli_filter gives 2 tasks per GPU)
            parts = re.split(r"[: ]", value)
            check(parts[0] == user_lib and any("libmlallreduce" in x for x in parts[1:]),
                  f"LD_PRELOAD {value!r}: the user's library must stay first, multilane's after it")
        profile = [l for l in q.stdout.splitlines() if l.startswith("MULTILANE_PROFILE=")]
        check(profile and set(profile) == {"MULTILANE_PROFILE=multilane-profile 1"},
              f"the user's MULTILANE_PROFILE was not kept: {profile}")
        q = run(["srun", "--gpus=2", "--multilane", "--mpi=pmix", ARGS.probe, "5"], env=env, timeout=300, cwd=root)
        rows = rank_lines(q.stdout)
        check(len(rows) == 4 and all(r["ok"] == "1" and r["hier"] == "5" and r["lane"] == "0" for r in rows),
              f"the job did not run the user's profile (hier): {rows}")
    finally:
        s.stop()


def case_bind_none(root):
    """bind=none on the plugstack line: the plugin leaves CPU binding alone
    (every task keeps the step's CPUs) and still binds GPUs and injects."""
    s = Slurm(root, {"bind": "none"})
    try:
        publish_lane_profile(s.db)
        p, out = s.sbatch(["--gpus=2", "--multilane"], PROBE_JOB.format(probe=ARGS.probe))
        check(p.returncode == 0, "the job failed")
        rows = rank_lines(out)
        check(len(rows) == 4 and [r["gpu"] for r in rows] == ["0", "0", "1", "1"], f"layout {rows}")
        cpus = {r["cpus"] for r in rows}
        check(len(cpus) == 1, f"bind=none: tasks were bound to different CPUs: {[r['cpus'] for r in rows]}")
        check(all(r["ok"] == "1" and r["lane"] == "5" for r in rows), f"bind=none: results or counters: {rows}")
    finally:
        s.stop()


if __name__ == "__main__":
    sys.exit(main(globals()))
