#!/usr/bin/python3
"""Slurm end to end: the local test cluster itself (scripts/slurm/local-slurm.sh)
keeps to its folder: its munged is its own and ends with it.

    test_cluster.py CASE ARGS...  (or --list: the case names)

The local Slurm, the options and the shared steps are in slurm_fixtures.py."""
import os
import re
import sys

from slurm_fixtures import Slurm, main, process_running
from e2e import check  # noqa: E402  (tests/e2e.py: slurm_fixtures puts it on the path)


def case_cluster_own_munged(root):
    """The cluster authenticates through a munged of its own (its socket and
    key in the cluster's folder, slurm.conf's AuthInfo): a job runs through
    it, and stopping the cluster stops it, so that the tests neither use nor
    start the machine's munged nor leave a daemon running."""
    s = Slurm(root, {})
    stopped = False
    try:
        socket = os.path.join(s.dir, "munge", "munge.socket")
        with open(os.path.join(s.dir, "slurm.conf")) as f:
            conf = f.read()
        check(re.search(rf"^AuthInfo=socket={re.escape(socket)}$", conf, re.M),
              f"slurm.conf names no socket of the cluster's own:\n{conf}")
        with open(os.path.join(s.dir, "run", "munged.pid")) as f:
            pid = int(f.read())
        with open(f"/proc/{pid}/cmdline") as f:
            cmdline = f.read().split("\0")
        check(process_running(pid) and f"--socket={socket}" in cmdline, f"munged {pid} is not the cluster's: {cmdline}")
        p = s.cmd(["srun", "hostname"], check_rc=False)
        check(p.returncode == 0 and p.stdout.strip(), f"a job through the cluster's munged failed: {p.stderr}")
        s.stop()
        stopped = True
        check(not process_running(pid), f"munged {pid} outlived its cluster")
        check(not os.path.exists(socket), f"{socket} outlived its cluster's munged")
    finally:
        if not stopped:
            s.stop()


if __name__ == "__main__":
    sys.exit(main(globals()))
