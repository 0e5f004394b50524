#!/usr/bin/env python3
"""The shared part of the launcher's end-to-end tests (launcher/e2e/test_*.py,
one file per feature): the `multilane` command on real MPI and real SQLite
files, the environment its runs get, and main(), which runs one case.

    test_FEATURE.py MULTILANE BENCH CASE   (CMake passes them)
    test_FEATURE.py --list                 (the case names)

Each case runs under a fresh temporary folder.
"""
import hashlib
import os
import shutil
import sqlite3
import sys
import tempfile

# The command line: MULTILANE BENCH CASE, or --list (then no programs).
MULTILANE, BENCH = sys.argv[1:3] if len(sys.argv) == 4 else (None, None)
# The source tree (its spank/cli_filter.lua, tests/report/fixtures).
SOURCE = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(SOURCE, "tests"))
import e2e  # noqa: E402  (tests/e2e.py, the scripts' shared helpers)

ENV = dict(os.environ, **e2e.OPENMPI_TEST_ENV)
for name in list(ENV):
    if name.startswith("MULTILANE_") and name not in ("MULTILANE_LIBRARY", "MULTILANE_PROBE"):
        del ENV[name]


def run(args, env=None, check=True, timeout=300, user=None):
    """e2e.run in this script's environment (ENV) unless told otherwise."""
    return e2e.run(args, check=check, env=env or ENV, timeout=timeout, user=user)


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def tune(db, budget="8", sizes="4K:256K", extra=()):
    # 4 ranks as 2 virtual nodes: more ranks than this small machine has
    # cores, so the profile is allowed only as a marked test profile.
    return run([MULTILANE, "tune", "--np", "4", "--virtual-nodes", "2", "--budget", budget, "--sizes", sizes,
                "--db", db, "--allow-oversubscribed"] + list(extra), timeout=600)


def tune_folders(folder):
    return sorted(n for n in os.listdir(folder) if n.startswith("multilane-tune."))


def profiles(db):
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    try:
        return con.execute("SELECT id, profile_text FROM profiles WHERE complete = 1").fetchall()
    finally:
        con.close()


def main(names):
    """Runs the case named on the command line (MULTILANE BENCH CASE), one of
    the test_* functions in NAMES (a feature script's globals()), in a fresh
    temporary folder; a failure raises (exit status 1).  With --list, prints
    the case names instead (CMake adds one test per name)."""
    cases = e2e.cases_in(names, "test_")
    if e2e.listed(cases):
        return 0
    case = sys.argv[3]
    tmp = tempfile.mkdtemp(prefix="multilane-e2e-")
    try:
        cases[case](tmp)
        print("PASSED: " + case)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0
