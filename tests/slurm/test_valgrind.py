#!/usr/bin/python3
"""Slurm end to end: the plugin under valgrind inside slurmstepd.

    test_valgrind.py CASE ARGS...  (or --list: the case names)

The local Slurm, the options and the shared steps are in slurm_fixtures.py."""
import os
import re
import shutil
import signal
import time
import sys

from slurm_fixtures import ARGS, Slurm, process_running, publish_lane_profile, rank_lines, main
from e2e import check, log, run  # noqa: E402  (tests/e2e.py: slurm_fixtures puts it on the path)


def valgrind_errors(text):
    """The total of the "==PID== ERROR SUMMARY: N errors from M contexts"
    lines of one valgrind log (memcheck prints one per process as it exits,
    with every kind of error it found in N), or None when there is none."""
    counts = [int(n) for n in re.findall(r"^==\d+== ERROR SUMMARY: (\d+) errors? from", text, re.M)]
    return sum(counts) if counts else None


def valgrind_parent(text):
    """The "Parent PID:" of one valgrind log's header, or None."""
    m = re.search(r"^==\d+== Parent PID: (\d+)", text, re.M)
    return int(m.group(1)) if m else None


def valgrind_body(text):
    """What a valgrind log says after its header (Memcheck banner, Command,
    Parent PID), without the blank "==PID== " lines: memcheck writes each error
    there as it finds it, so a process that stopped being traced (a forked
    child that exec'd a task, which valgrind follows no further with
    --trace-children=no) has an empty body when it met no error."""
    lines = text.splitlines()
    start = next((i + 1 for i, l in enumerate(lines) if re.match(r"^==\d+== Parent PID:", l)), 0)
    return [l for l in lines[start:] if not re.match(r"^==\d+==\s*$", l)]


def check_valgrind_logs(vg, wait_s=120):
    """Checks every slurmstepd log in vg: each slurmstepd started by slurmd
    (its parent has no log) must reach its ERROR SUMMARY with 0 errors (we wait
    for them to exit: a step's slurmstepd outlives srun by a moment); a forked
    child of a checked process either reaches its summary with 0 errors or
    exec'd (a task, a spawned helper) with nothing reported before the exec."""
    deadline = time.time() + wait_s
    while True:
        logs = {}
        for f in os.listdir(vg):
            m = re.match(r"stepd\.(\d+)\.log$", f)
            if m:
                with open(os.path.join(vg, f)) as fh:
                    logs[int(m.group(1))] = fh.read()
        tops = [pid for pid, text in logs.items() if valgrind_parent(text) not in logs]
        if tops and all(valgrind_errors(logs[pid]) is not None for pid in tops):
            break
        if time.time() > deadline:
            for pid in tops:
                check(valgrind_errors(logs[pid]) is not None,
                      f"stepd.{pid}.log: slurmstepd did not exit within {wait_s} s (no ERROR SUMMARY): {logs[pid][-2000:]}")
            check(tops, "valgrind wrote no log: slurmstepd did not run under it")
        time.sleep(0.5)
    summaries = 0
    for pid, text in sorted(logs.items()):
        errors = valgrind_errors(text)
        if errors is None:
            # Not a slurmstepd itself (checked above): a forked child that
            # exec'd; whatever memcheck found before the exec is in its body.
            body = valgrind_body(text)
            check(not body, f"stepd.{pid}.log: valgrind reported, in a child of slurmstepd before its exec:\n"
                            + "\n".join(body[-80:]))
            continue
        summaries += 1
        # memcheck must have counted no error of any kind: invalid accesses,
        # uninitialised values, mismatched frees.
        check(errors == 0, f"stepd.{pid}.log: valgrind counted {errors} error(s):\n{text[-6000:]}")
    return len(logs), summaries


def slurmd_start_time(s):
    """The node's SlurmdStartTime as slurmctld has it (None if unread)."""
    m = re.search(r"SlurmdStartTime=(\S+)", s.cmd(["scontrol", "show", "node", "localhost"], check_rc=False).stdout)
    return m.group(1) if m else None


def stop_slurmd(s):
    """Stops the cluster's slurmd (SIGTERM) and waits until it has exited."""
    with open(os.path.join(s.dir, "run", "slurmd-localhost.pid")) as f:
        pid = int(f.read().split()[0])
    os.kill(pid, signal.SIGTERM)
    for _ in range(150):
        if not process_running(pid):
            return
        time.sleep(0.1)
    raise AssertionError(f"slurmd {pid} did not stop in 15 s")


def case_valgrind_slurmstepd(root):
    """The plugin inside slurmstepd under valgrind (memcheck): slurmd runs in
    a private mount namespace where /usr/sbin/slurmstepd is a wrapper that
    starts the real one under valgrind; no invalid access may be reported."""
    s = Slurm(root, {})
    vg = os.path.join(root, "valgrind")
    os.makedirs(vg, exist_ok=True)
    try:
        publish_lane_profile(s.db)
        # restart slurmd in its own mount namespace with the wrapper: the
        # old one stopped first, then until the new one has registered (its
        # SlurmdStartTime changed), so that no step reaches the old one
        started = slurmd_start_time(s)
        check(started, "scontrol shows no SlurmdStartTime for localhost")
        stop_slurmd(s)
        # SlurmdStartTime counts whole seconds (local time, as time.strftime
        # writes it): the new slurmd starts in a later second than the old one
        # (CI restarted it within the same one, and the wait below never ended)
        while time.strftime("%Y-%m-%dT%H:%M:%S") <= started:
            time.sleep(0.05)
        real = os.path.join(root, "slurmstepd.real")
        shutil.copy2("/usr/sbin/slurmstepd", real)
        wrapper = os.path.join(root, "slurmstepd-valgrind")
        with open(wrapper, "w") as f:
            f.write(f"#!/bin/sh\nexec valgrind --tool=memcheck --trace-children=no --child-silent-after-fork=no "
                    f"--log-file={vg}/stepd.%p.log {real} \"$@\"\n")
        os.chmod(wrapper, 0o755)
        run(["unshare", "-m", "--propagation", "private", "sh", "-c",
             f"mount --bind {wrapper} /usr/sbin/slurmstepd && exec /usr/sbin/slurmd -N localhost"], env=s.env)
        for _ in range(300):
            if slurmd_start_time(s) not in (started, None) and \
                    "localhost" in s.cmd(["sinfo", "-h", "-t", "idle", "-o", "%N"], check_rc=False).stdout:
                break
            time.sleep(0.2)
        else:
            raise AssertionError(f"the slurmd under the wrapper did not register in 60 s; logs in {s.dir}/log")
        p = s.cmd(["srun", "--gpus=2", "--multilane=verbose", ARGS.probe, "2"], timeout=600)
        rows = rank_lines(p.stdout)
        check(len(rows) == 4 and all(r["lane"] == "2" for r in rows), f"the job under valgrind: {rows}")
        total, summaries = check_valgrind_logs(vg)
        log(f"valgrind: {total} slurmstepd processes checked: {summaries} reached ERROR SUMMARY 0, "
            f"{total - summaries} exec'd with nothing reported")
    finally:
        s.stop()


if __name__ == "__main__":
    sys.exit(main(globals()))
