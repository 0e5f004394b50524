#!/usr/bin/python3
"""Runs mpi4py_client.py twice under mpirun and compares the results.

1. plain: the system MPI only;
2. preloaded: LD_PRELOAD=libmlallreduce.so with MULTILANE_ALGO=lane,
   MULTILANE_RANKS_PER_NODE=2 and MULTILANE_STATS=1.

Both runs must succeed, agree (integers exactly, floats to a tolerance), and
the preloaded run must print one "multilane: stats:" line showing that every
MPI_Allreduce of the client went through the lane algorithm; the plain run
must print none.
"""
import os
import re
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from e2e import client_arguments, run_shown, verdict  # noqa: E402  (tests/e2e.py, the scripts' shared helpers)
STATS_PREFIX = "multilane: stats:"


def run_lines(cmd, timeout):
    """Runs cmd, its output shown; returns its exit status and output lines."""
    p = run_shown(cmd, "run_mpi4py_test.py", timeout=timeout)
    return p.returncode, (p.stdout + "\n" + p.stderr).splitlines()


def main():
    ap = client_arguments(timeout=240)
    ap.add_argument("--python", default="/usr/bin/python3")
    a = ap.parse_args()

    os.makedirs(a.workdir, exist_ok=True)
    client = os.path.join(HERE, "mpi4py_client.py")
    plain_out = os.path.join(a.workdir, "plain.npz")
    pre_out = os.path.join(a.workdir, "preload.npz")
    for f in (plain_out, pre_out):
        if os.path.exists(f):
            os.remove(f)
    # --map-by :OVERSUBSCRIBE: Open MPI 4 and 5 alike (5 deprecates --oversubscribe).
    base = [a.mpirun, "--map-by", ":OVERSUBSCRIBE", "--bind-to", "none", "-np", str(a.np)]
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("MULTILANE_") or k == "LD_PRELOAD":
            del env[k]
    os.environ.clear()
    os.environ.update(env)

    failures = []
    rc, lines = run_lines(base + [a.python, client, plain_out], a.timeout)
    if rc != 0:
        failures.append("plain run: exit code %d" % rc)
    if any(l.strip().startswith(STATS_PREFIX) for l in lines):
        failures.append("plain run printed a stats line without the library")

    ml = ["-x", "LD_PRELOAD=" + a.preload, "-x", "MULTILANE_ALGO=lane",
          "-x", "MULTILANE_RANKS_PER_NODE=2", "-x", "MULTILANE_STATS=1"]
    rc, lines = run_lines(base + ml + [a.python, client, pre_out], a.timeout)
    if rc != 0:
        failures.append("preloaded run: exit code %d" % rc)
    stats = [l.strip() for l in lines if l.strip().startswith(STATS_PREFIX)]

    if os.path.exists(plain_out) and os.path.exists(pre_out):
        plain = np.load(plain_out)
        pre = np.load(pre_out)
        n_calls = int(plain["n_allreduce"])
        if set(plain.files) != set(pre.files):
            failures.append("the runs wrote different result sets")
        for key in sorted(set(plain.files) & set(pre.files)):
            if key in ("n_allreduce", "n_errors"):
                continue
            x, y = plain[key], pre[key]
            if x.dtype != y.dtype or x.shape != y.shape:
                failures.append("%s: dtype/shape differ" % key)
            elif np.issubdtype(x.dtype, np.floating):
                tol = np.finfo(x.dtype).eps * 8 * (a.np + 1)
                if not np.allclose(y, x, rtol=tol, atol=tol):
                    i = int(np.argmax(np.abs(y.astype(np.float64) - x.astype(np.float64))))
                    failures.append("%s: element %d: %r with the library, %r without" %
                                    (key, i, y[i], x[i]))
            elif not np.array_equal(x, y):
                i = int(np.argmax(x != y))
                failures.append("%s: element %d: %r with the library, %r without" %
                                (key, i, y[i], x[i]))
        if len(stats) != 1:
            failures.append("preloaded run: %d %r lines, want 1: %r" %
                            (len(stats), STATS_PREFIX, stats))
        else:
            fields = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", stats[0][len(STATS_PREFIX):])}
            if fields.get("lane", 0) <= 0:
                failures.append("stats show no lane call: the library did not intercept: " +
                                stats[0])
            if fields.get("calls") != n_calls or fields.get("lane") != n_calls:
                failures.append("stats %r: want calls=%d and lane=%d (every client call)" %
                                (stats[0], n_calls, n_calls))
            if fields.get("unsupported", 0) != 0:
                failures.append("stats show unsupported calls: " + stats[0])
        print("run_mpi4py_test.py: compared %d arrays; %d MPI_Allreduce calls per run" %
              (len(plain.files) - 2, n_calls))
    else:
        failures.append("a run wrote no results")

    return verdict("run_mpi4py_test.py", failures)


if __name__ == "__main__":
    sys.exit(main())
