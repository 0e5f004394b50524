#!/usr/bin/python3
"""Slurm end to end: the MPS daemon a job gets, and the folders of other
users' jobs.

    test_mps.py CASE ARGS...  (or --list: the case names)

The local Slurm, the options and the shared steps are in slurm_fixtures.py."""
import os
import pwd
import re
import time
import sys

from slurm_fixtures import TEST_USER, Slurm, publish_lane_profile, ensure_test_user, main, write_mps_stand_in
from e2e import check, log  # noqa: E402  (tests/e2e.py: slurm_fixtures puts it on the path)


def shared_mps_dir(root):
    """What the mps=yes cases start from: the test user, the stand-in
    recording the user, the folders and their modes in ROOT/mps-record, and an
    admin's shared mps_dir ROOT/mps (like /tmp: 1777, root's).  Returns
    (mps_dir, record, the plugin options)."""
    ensure_test_user(root)
    mps_dir = os.path.join(root, "mps")
    stand_in, record = write_mps_stand_in(
        root, "uid=$(id -u) pipe=$CUDA_MPS_PIPE_DIRECTORY log=$CUDA_MPS_LOG_DIRECTORY gpus=$CUDA_VISIBLE_DEVICES",
        "uid=$(id -u) pipe=$CUDA_MPS_PIPE_DIRECTORY", modes=True)
    os.chmod(root, 0o777)
    os.makedirs(mps_dir)
    os.chmod(mps_dir, 0o1777)
    return mps_dir, record, {"mps": "yes", "mps_control": stand_in, "mps_dir": mps_dir}


def wait_for_epilog(record, quits, timeout=30):
    """The calls the stand-in recorded once `quits` epilogs stopped it (the
    epilog runs after the job is reported done)."""
    path = os.path.join(record, "calls")
    deadline = time.time() + timeout
    calls = ""
    while time.time() < deadline:
        calls = open(path).read() if os.path.exists(path) else ""
        if calls.count("quit") >= quits:
            break
        time.sleep(0.5)
    return calls


def case_mps_job_folders_of_others(root):
    """N2: with a shared mps_dir, job-ID folders someone else made.  Job 1:
    a leftover of another user's job with the same ID (root's job-1, its
    pipe/ another user's and in use): the prolog refuses it and this job's
    tasks are never pointed at it (they used to be, with mps=yes); the
    epilog leaves it alone.  Job 2: another user made job-2 first, with a
    link inside: the prolog moves it aside and removes it (it used to deny
    MPS to job 2 for good), makes its own, and the tasks use that one; the
    epilog removes everything."""
    mps_dir, record, options = shared_mps_dir(root)
    other = pwd.getpwnam("nobody")
    leftover = os.path.join(mps_dir, "job-1")
    os.mkdir(leftover, 0o711)
    for sub in ("pipe", "log"):
        os.mkdir(os.path.join(leftover, sub), 0o700)
        os.chown(os.path.join(leftover, sub), other.pw_uid, other.pw_gid)
    with open(os.path.join(leftover, "pipe", "control"), "w") as f:
        f.write("another user's daemon\n")
    squat = os.path.join(mps_dir, "job-2")
    os.mkdir(squat, 0o755)
    os.mkdir(os.path.join(squat, "pipe"), 0o755)
    os.symlink("/etc", os.path.join(squat, "pipe", "escape"))
    for path in (squat, os.path.join(squat, "pipe"), os.path.join(squat, "pipe", "escape")):
        os.lchown(path, other.pw_uid, other.pw_gid)
    s = Slurm(root, options)
    try:
        publish_lane_profile(s.db)
        body = "echo job=$SLURM_JOB_ID\nsrun bash -c 'echo task $SLURM_PROCID pipe=$CUDA_MPS_PIPE_DIRECTORY'\n"
        outs = []
        for n in (1, 2):
            p, out = s.sbatch(["--gpus=2", "--multilane"], body, user=TEST_USER, name=f"mps-{n}")
            check(p.returncode == 0 and f"job={n}" in out, f"job {n} failed or got another ID: {out}")
            outs.append(out)
        calls = wait_for_epilog(record, 1)
        log(calls)
        deadline = time.time() + 30
        while os.path.exists(squat) and time.time() < deadline:  # the epilog removes it after `quit`
            time.sleep(0.5)
        slurmd = open(os.path.join(s.dir, "log", "slurmd-localhost.log")).read()
        # Job 1: no daemon, the tasks not pointed at the other user's pipe/.
        check(f"pipe={leftover}/pipe" not in calls, f"a daemon ran in another user's folder: {calls!r}")
        tasks = [l for l in outs[0].splitlines() if l.startswith("task ")]
        check(len(tasks) == 4 and all(t.endswith(" pipe=") for t in tasks),
              f"job 1's tasks were pointed at a folder the prolog did not make: {tasks}")
        check("not a folder the prolog made" in outs[0] or "someone else made it" in outs[0],
              f"job 1 does not say why it runs without MPS: {outs[0]}")
        check(os.path.exists(os.path.join(leftover, "pipe", "control")), "the other user's leftover was touched")
        check(f"{leftover} exists already" in slurmd, "the prolog did not log why it refused job-1")
        # Issue 47: a bare --multilane is logged as such, never `option (null)`.
        said = re.findall(r"multilane: job script: option (.*), multilane on", slurmd)
        check(said and "(null)" not in said and "" not in said,
              f"the prolog's line does not say the option as given (bare): {said}")
        # Job 2: the squat replaced, the tasks pointed at the prolog's folder.
        uid = pwd.getpwnam(TEST_USER).pw_uid
        check(f"start uid={uid} pipe={squat}/pipe" in calls and f"700 {TEST_USER}" in calls
              and "jobdir 711 root" in calls, f"job 2's daemon did not start in the prolog's own folder: {calls!r}")
        tasks = [l for l in outs[1].splitlines() if l.startswith("task ")]
        check(len(tasks) == 4 and all(t.endswith(f" pipe={squat}/pipe") for t in tasks), f"job 2's tasks: {tasks}")
        check(f"{squat} was there before the prolog" in slurmd and "removed it" in slurmd,
              "the prolog did not log that it removed the squat")
        check(os.path.isdir("/etc") and not os.path.exists(squat),
              f"the epilog left {squat}: {os.listdir(mps_dir)}")
        check(sorted(os.listdir(mps_dir)) == ["job-1"], f"left in mps_dir: {os.listdir(mps_dir)}")
    finally:
        s.stop()


def case_mps_daemon(root):
    """mps=yes: the job prolog starts one MPS control daemon per job as the
    job's user with private pipe and log directories, the tasks are pointed
    at it, and the epilog stops it and removes the directories.  There is no
    NVIDIA driver here, so mps_control names a stand-in that records how it
    was called and stays alive like the daemon until it reads `quit`."""
    # The shared mps_dir: the prolog must keep its mode and owner (it used to
    # make it 0755 at every job).
    mps_dir, record, options = shared_mps_dir(root)
    s = Slurm(root, options)
    try:
        publish_lane_profile(s.db)
        p, out = s.sbatch(["--gpus=2", "--multilane"],
                          "srun bash -c 'echo task $SLURM_PROCID pipe=$CUDA_MPS_PIPE_DIRECTORY'\n",
                          user=TEST_USER, name="mps")
        check(p.returncode == 0, "the job failed")
        uid = str(pwd.getpwnam(TEST_USER).pw_uid)
        deadline = time.time() + 30
        calls = ""
        while time.time() < deadline:  # the epilog runs after the job is reported done
            calls = open(os.path.join(record, "calls")).read() if os.path.exists(os.path.join(record, "calls")) else ""
            if "quit" in calls and not os.path.exists(os.path.join(mps_dir, "job-1")):
                break
            time.sleep(0.5)
        log(calls)
        job = re.search(r"pipe=(\S+)/job-(\d+)/pipe", calls)
        check(job, f"the prolog did not start the daemon: {calls!r}")
        jobdir = os.path.join(mps_dir, f"job-{job.group(2)}")
        check(f"start uid={uid} pipe={jobdir}/pipe log={jobdir}/log gpus=0,1" in calls, calls)
        check(f"700 {TEST_USER}" in calls, f"the pipe directory is not private to the user: {calls}")
        # The job folder stays root's, so the user can never swap pipe/ or
        # log/ for a link while root hands them over.
        check("jobdir 711 root" in calls, f"the job's MPS folder is not root's 0711: {calls}")
        mode = os.stat(mps_dir).st_mode & 0o7777
        check(mode == 0o1777 and os.stat(mps_dir).st_uid == 0, f"mps_dir changed to {oct(mode)}")
        check(f"quit uid={uid}" in calls, "the epilog did not stop the daemon as the user")
        check(not os.path.exists(jobdir), "the epilog left the job's MPS directory")
        tasks = [l for l in out.splitlines() if l.startswith("task ")]
        check(len(tasks) == 4 and all(f"pipe={jobdir}/pipe" in t for t in tasks), f"tasks not pointed at MPS: {tasks}")
    finally:
        s.stop()


if __name__ == "__main__":
    sys.exit(main(globals()))
