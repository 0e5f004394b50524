#!/usr/bin/env python3
"""End-to-end tests of the `multilane` command on real MPI and real SQLite files.

Usage: launcher_e2e_test.py MULTILANE BENCH TESTNAME
Each TESTNAME is one CTest test; all run under a fresh temporary folder.
"""
import hashlib
import json
import os
import pwd
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

MULTILANE, BENCH, TEST = sys.argv[1], sys.argv[2], sys.argv[3]
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1")
for name in list(ENV):
    if name.startswith("MULTILANE_") and name not in ("MULTILANE_LIBRARY", "MULTILANE_PROBE"):
        del ENV[name]


def run(args, env=None, check=True, timeout=300, user=None):
    cmd = list(args)
    if user:
        uid = pwd.getpwnam(user)
        cmd = ["setpriv", "--reuid=%d" % uid.pw_uid, "--regid=%d" % uid.pw_gid, "--clear-groups", "--"] + cmd
    p = subprocess.run(cmd, env=env or ENV, capture_output=True, text=True, timeout=timeout)
    if check and p.returncode != 0:
        sys.exit("FAILED: %s\nexit %d\nstdout:\n%s\nstderr:\n%s" % (" ".join(cmd), p.returncode, p.stdout, p.stderr))
    return p


def expect(cond, what, p=None):
    if not cond:
        extra = "" if p is None else "\nstdout:\n%s\nstderr:\n%s" % (p.stdout, p.stderr)
        sys.exit("FAILED: " + what + extra)
    print("ok: " + what)


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def tune(db, budget="8", sizes="4K:256K", extra=()):
    return run([MULTILANE, "tune", "--np", "4", "--virtual-nodes", "2", "--budget", budget, "--sizes", sizes,
                "--db", db] + list(extra), timeout=600)


def profiles(db):
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    try:
        return con.execute("SELECT id, profile_text FROM profiles WHERE complete = 1").fetchall()
    finally:
        con.close()


def test_tune_then_run(tmp):
    db = os.path.join(tmp, "user.db")
    start = time.time()
    p = tune(db, budget="20", sizes="4K:1M")
    took = time.time() - start
    expect("profile" in p.stdout and "stored in" in p.stdout, "tune prints the table and stores the profile", p)
    rows = profiles(db)
    expect(len(rows) == 1, "one complete profile in the database")
    expect(rows[0][1].startswith("multilane-profile 1"), "the stored profile text has the format's header")
    print("tune took %.1f s" % took)

    p = run([MULTILANE, "show", "--db", db])
    expect("this node" in p.stdout and "gain" in p.stdout, "show lists this node type and the decision table", p)
    p = run([MULTILANE, "show", "--db", db, "--json"])
    doc = json.loads(p.stdout)
    expect(doc["databases"][0]["profiles"][0]["entries"], "show --json has the entries")

    p = run([MULTILANE, "run", "--db", db, "--dry-run", "--", "mpirun", "-np", "4", BENCH])
    expect("LD_PRELOAD=" in p.stdout and "libmlallreduce" in p.stdout, "run injects the library", p)
    expect("MULTILANE_PROFILE=multilane-profile 1" in p.stdout, "run passes the profile", p)
    expect("command: mpirun -x LD_PRELOAD -x MULTILANE_PROFILE -np 4" in p.stdout, "run forwards with -x", p)

    # The real thing: the benchmark's `auto` rows follow the profile.  (A
    # sanitizer build needs its runtime preloaded first: the user's own
    # LD_PRELOAD stays in front of the library's.)
    env = dict(ENV)
    if os.environ.get("MULTILANE_TEST_PRELOAD"):
        env["LD_PRELOAD"] = os.environ["MULTILANE_TEST_PRELOAD"]
    p = run([MULTILANE, "run", "--db", db, "--", "mpirun", "-np", "4", "-x", "MULTILANE_RANKS_PER_NODE=2",
             "-x", "MULTILANE_STATS=1", BENCH, "-b", "4K", "-e", "64K", "-f", "4", "-n", "3", "-w", "1",
             "-a", "mpi,auto"], env=env)
    expect("# Out of bounds values : 0 OK" in p.stdout, "the benchmark under multilane run is correct", p)
    expect("multilane: stats:" in p.stderr, "the library was injected (its stats line)", p)


def test_second_user_reuses_profile(tmp):
    # The admin tunes into a system database; another Unix user runs with it:
    # a profile is found, no probe runs, and the database is not modified.
    os.chmod(tmp, 0o755)
    system_db = os.path.join(tmp, "system.db")
    tune(system_db)
    os.chmod(system_db, 0o644)
    for suffix in ("-wal", "-shm"):
        if os.path.exists(system_db + suffix):
            os.chmod(system_db + suffix, 0o644)
    before = sha(system_db)
    user = "nobody"
    env = dict(ENV, MULTILANE_SYSTEM_DB=system_db, MULTILANE_USER_DB=os.path.join(tmp, "nobody-user.db"),
               HOME=tmp)
    start = time.time()
    p = run([MULTILANE, "run", "--dry-run", "--", "mpirun", "-np", "4", BENCH], env=env, user=user)
    took = time.time() - start
    expect("MULTILANE_PROFILE=multilane-profile 1" in p.stdout, "the second user gets the admin's profile", p)
    expect("mlprobe" not in p.stdout + p.stderr and "multilane tune" not in p.stderr,
           "no probe ran for the second user", p)
    expect(sha(system_db) == before, "the system database is unchanged by the reader")
    expect(not os.path.exists(os.path.join(tmp, "nobody-user.db")), "no user database was created by run")
    print("second user's lookup took %.2f s" % took)


def test_broken_databases(tmp):
    garbage = os.path.join(tmp, "garbage.db")
    with open(garbage, "wb") as f:
        f.write(os.urandom(8192))
    p = run([MULTILANE, "show", "--db", garbage], check=False)
    expect(garbage in p.stdout + p.stderr and "doctor" in p.stdout + p.stderr,
           "show names the garbage file and the fix", p)
    p = run([MULTILANE, "run", "--db", garbage, "--dry-run", "--", "echo", "hi"], check=False)
    expect(p.returncode == 0 and "command: echo hi" in p.stdout, "run fails open on a garbage database", p)
    expect("without multilane" in p.stderr, "run says why it runs without multilane", p)
    p = run([MULTILANE, "tune", "--np", "2", "--budget", "2", "--sizes", "4K:4K", "--db", garbage], check=False)
    expect(p.returncode == 1 and garbage in p.stderr, "tune refuses a garbage database before probing", p)

    good = os.path.join(tmp, "good.db")
    tune(good, budget="3", sizes="4K:16K")
    truncated = os.path.join(tmp, "truncated.db")
    run(["sqlite3", good, "PRAGMA wal_checkpoint(TRUNCATE);"])
    with open(good, "rb") as f:
        data = f.read()
    with open(truncated, "wb") as f:
        f.write(data[: len(data) // 2])
    p = run([MULTILANE, "show", "--db", truncated], check=False)
    expect(p.returncode == 1 and truncated in p.stderr and "doctor" in p.stderr, "a truncated database is reported", p)

    env = dict(ENV, MULTILANE_SYSTEM_DB=garbage, MULTILANE_USER_DB=os.path.join(tmp, "none.db"), HOME=tmp)
    p = run([MULTILANE, "doctor"], env=env, check=False)
    expect(p.returncode == 1 and "ERROR" in p.stdout and garbage in p.stdout and "fix:" in p.stdout,
           "doctor reports the broken system database with a fix", p)

    p = run([MULTILANE, "import", os.path.join(tmp, "garbage.db"), "--db", good], check=False)
    expect(p.returncode == 1 and "not JSON" in p.stderr, "import refuses a non-JSON file", p)
    expect(len(profiles(good)) == 1, "a refused import changes nothing")


def test_concurrent_tuners(tmp):
    db = os.path.join(tmp, "shared.db")
    results = []

    def one():
        results.append(run([MULTILANE, "tune", "--np", "2", "--budget", "3", "--sizes", "4K:16K", "--db", db],
                           check=False, timeout=600))
    threads = [threading.Thread(target=one) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for p in results:
        expect(p.returncode == 0, "a concurrent tuner succeeded", p)
    expect(len(profiles(db)) == 2, "both concurrent tuners' profiles are stored")


def test_export_import(tmp):
    a, b = os.path.join(tmp, "a.db"), os.path.join(tmp, "b.db")
    tune(a, budget="3", sizes="4K:16K")
    out = os.path.join(tmp, "profiles.json")
    run([MULTILANE, "export", out, "--db", a])
    doc = json.load(open(out))
    expect(doc.get("format") == "multilane-profiles", "export writes the versioned document")
    run([MULTILANE, "import", out, "--db", b])
    expect([t for _, t in profiles(a)] == [t for _, t in profiles(b)], "import reproduces the profile")
    run([MULTILANE, "import", out, "--db", b])
    expect(len(profiles(b)) == 1, "importing twice adds nothing")


TESTS = {
    "tune_then_run": test_tune_then_run,
    "second_user_reuses_profile": test_second_user_reuses_profile,
    "broken_databases": test_broken_databases,
    "concurrent_tuners": test_concurrent_tuners,
    "export_import": test_export_import,
}

if __name__ == "__main__":
    tmp = tempfile.mkdtemp(prefix="multilane-e2e-")
    try:
        TESTS[TEST](tmp)
        print("PASSED: " + TEST)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
