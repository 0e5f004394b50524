#!/usr/bin/python3
"""shm_cleanup_test.py: a job that dies leaves no shared-memory segment of
multilane's in /dev/shm (MULTILANE_NODE_STEP=shm, docs/algorithms.md).

Cases:
  mid_call   rank 1 is SIGKILLed inside a lane call on the segment (with
             single copy where the kernel allows): the names
             were unlinked at set-up, so nothing new stays in /dev/shm.
  set_up     rank 0 is SIGKILLed inside the set-up window (at its shm_unlink
             of the segment, through --kill-hook): the name stays, and the
             next job's start removes it, while a name whose creator lives
             (this script's pid) stays.

As root both run with a /dev/shm of their own (private_shm).

Usage: shm_cleanup_test.py --mpirun MPIRUN --program shm_killed_rank --kill-hook HOOK.so [--preload-before P]
"""
import argparse
import os
import re
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from e2e import OPENMPI_TEST_ENV, OVERSUBSCRIBE_FLAGS, check, log, run  # noqa: E402

NAME = re.compile(r"^mla-(\d+)-(\d+)-[0-9a-f]{16}$")


def our_names():
    """{name: creator pid} of this user's segments in /dev/shm."""
    out = {}
    for n in os.listdir("/dev/shm"):
        m = NAME.match(n)
        if m and int(m.group(1)) == os.geteuid():
            out[n] = int(m.group(2))
    return out


def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def left_by_dead(before):
    """Names that appeared since `before` and whose creator is gone; a
    creator still exiting after mpirun returned is waited for (up to 60 s)."""
    new = {n: pid for n, pid in our_names().items() if n not in before}
    deadline = time.monotonic() + 60
    while any(alive(pid) for pid in new.values()) and time.monotonic() < deadline:
        time.sleep(0.1)
    return sorted(n for n, pid in our_names().items() if n in new and not alive(pid))


def job(args, mode, preload=None, step="shm"):
    env = dict(os.environ, **OPENMPI_TEST_ENV, MULTILANE_NODE_STEP=step, MULTILANE_ALGO="lane",
               MULTILANE_VERBOSE="1")
    cmd = [args.mpirun, *OVERSUBSCRIBE_FLAGS, "--bind-to", "none", "-np", "2"]
    if preload:
        cmd += ["-x", "LD_PRELOAD=" + preload]
    return run(cmd + [args.program, mode], check=False, env=env, timeout=240)


def case_mid_call(args):
    before = our_names()
    p = job(args, "loop", step="shm-cma")  # a peer may be reading the killed rank's memory
    out = p.stdout + p.stderr
    check(p.returncode != 0, "the job whose rank 1 was killed must fail", p)
    check("node steps on shared memory" in out, "the job never set the segment up (no verbose line)", p)
    left = left_by_dead(before)
    check(not left, f"a rank killed mid-call left segments in /dev/shm: {left}", p)


def case_set_up(args):
    before = our_names()
    p = job(args, "once", preload=args.preload_before + args.kill_hook)
    check(p.returncode != 0, "the job whose creator was killed at set-up must fail", p)
    left = left_by_dead(before)
    check(len(left) == 1, f"the killed creator must leave exactly its one segment (saw {left})", p)
    # A segment of a live creator (this script) must survive the clean-up.
    live = f"mla-{os.geteuid()}-{os.getpid()}-{'0123456789abcdef'}"
    fd = os.open("/dev/shm/" + live, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    os.close(fd)
    try:
        p = job(args, "once")
        check(p.returncode == 0, "the next job must run", p)
        check(not os.path.exists("/dev/shm/" + left[0]), f"the next start left the stale {left[0]}", p)
        check(os.path.exists("/dev/shm/" + live), "the next start removed a live creator's segment", p)
    finally:
        os.unlink("/dev/shm/" + live)


def private_shm():
    """As root, runs this script again in a mount namespace of its own with a
    /dev/shm of its own (tmpfs): another job's start on the machine (a test
    beside this one, the other platform's stage) removes stale segments of
    dead creators too, and could take the killed creator's before the case
    looks.  Returns only in that namespace, or when not root."""
    if os.geteuid() != 0 or os.environ.get("MLA_SHM_CLEANUP_PRIVATE") == "1":
        return
    os.environ["MLA_SHM_CLEANUP_PRIVATE"] = "1"
    sys.stdout.flush()
    os.execvp("unshare", ["unshare", "-m", "--propagation", "private", "sh", "-c",
                          'mount -t tmpfs -o mode=1777 tmpfs /dev/shm && exec "$@"', "sh",
                          sys.executable, os.path.abspath(__file__), *sys.argv[1:]])


def main():
    private_shm()
    ap = argparse.ArgumentParser()
    ap.add_argument("--mpirun", required=True)
    ap.add_argument("--program", required=True)
    ap.add_argument("--kill-hook", required=True)
    ap.add_argument("--preload-before", default="", help="put before the hook in LD_PRELOAD (the ASan runtime, 'LIB:')")
    args = ap.parse_args()
    failures = 0
    for name, case in (("mid_call", case_mid_call), ("set_up", case_set_up)):
        try:
            case(args)
            log(f"PASS: {name}")
        except AssertionError as e:
            log(f"FAIL: {name}: {e}")
            failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
