#!/usr/bin/env python3
"""End-to-end tests of the `multilane` command on real MPI and real SQLite files.

Usage: launcher_e2e_test.py MULTILANE BENCH TESTNAME
Each TESTNAME is one CTest test; all run under a fresh temporary folder.
"""
import glob
import hashlib
import json
import os
import re
import pwd
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

MULTILANE, BENCH, TEST = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
import e2e  # noqa: E402  (tests/e2e.py, the scripts' shared helpers)
from e2e import expect  # noqa: E402

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
    expect("command: mpirun -x LD_PRELOAD -x MULTILANE_PROFILE -x MULTILANE_ALL_RANKS -np 4" in p.stdout, "run forwards with -x", p)

    # The real thing: the benchmark runs right under `multilane run`, with
    # the library injected (that `auto` follows a profile bin by bin is
    # test_auto_follows_profile: this tuned profile may pick one algorithm
    # everywhere).  (A sanitizer build needs its runtime preloaded first: the
    # user's own LD_PRELOAD stays in front of the library's.)
    env = dict(ENV)
    if os.environ.get("MULTILANE_TEST_PRELOAD"):
        env["LD_PRELOAD"] = os.environ["MULTILANE_TEST_PRELOAD"]
    p = run([MULTILANE, "run", "--db", db, "--", "mpirun", "-np", "4", "-x", "MULTILANE_RANKS_PER_NODE=2",
             "-x", "MULTILANE_STATS=1", BENCH, "-b", "4K", "-e", "64K", "-f", "4", "-n", "3", "-w", "1",
             "-a", "mpi,auto"], env=env)
    expect("# Out of bounds values : 0 OK" in p.stdout, "the benchmark under multilane run is correct", p)
    expect("multilane: stats:" in p.stderr, "the library was injected (its stats line)", p)


def test_auto_follows_profile(tmp):
    """A profile of three host bins, given as `multilane run` gives it (the
    library preloaded, the text in MULTILANE_PROFILE, both forwarded with -x),
    decides every call of the benchmark's `auto` rows bin by bin, edges
    included: the library's own per-size counters (the job report's bins) and
    the benchmark's reading of mla_get_stats must both show it.  A library
    that ignored the profile, or looked up the wrong bin, fails here."""
    profile = "multilane-profile 1; host 0 16K passthrough; host 16K 256K lane; host 256K inf hier"
    # size -> the algorithm the profile names for it; 16K and 256K are the
    # lower edges of their entries ([FROM, TO)).
    want = {4096: "passthrough", 16384: "lane", 65536: "lane", 262144: "hier", 1048576: "hier"}
    reports = os.path.join(tmp, "reports")
    os.mkdir(reports)
    preload = os.environ["MULTILANE_LIBRARY"]
    if os.environ.get("MULTILANE_TEST_PRELOAD"):
        preload = os.environ["MULTILANE_TEST_PRELOAD"] + ":" + preload
    env = dict(ENV, LD_PRELOAD=preload, MULTILANE_PROFILE=profile, MULTILANE_RANKS_PER_NODE="2",
               MULTILANE_STATS="1", MULTILANE_REPORT=reports, MULTILANE_REPORT_INTERVAL="0")
    forward = []
    for name in ("LD_PRELOAD", "MULTILANE_PROFILE", "MULTILANE_RANKS_PER_NODE", "MULTILANE_STATS",
                 "MULTILANE_REPORT", "MULTILANE_REPORT_INTERVAL"):
        forward += ["-x", name]
    p = run(["mpirun", "-np", "4"] + forward +
            [BENCH, "-b", "4K", "-e", "1M", "-f", "4", "-n", "3", "-w", "1", "-a", "auto"], env=env)
    expect("# Out of bounds values : 0 OK" in p.stdout, "the benchmark's results are right", p)
    expect("multilane: warning" not in p.stderr, "the library took the profile without a warning", p)

    # The benchmark's reading of the library's counters, size by size.
    expect("auto ran: passthrough (4096 B), lane (16384 .. 65536 B), hier (262144 .. 1048576 B)" in p.stdout,
           "the auto rows ran passthrough below 16K, lane from 16K, hier from 256K", p)

    # The library's per-size counters: in each size bin every call of rank 0
    # ran the profile's algorithm for that bin, and the report names the entry.
    files = [f for f in os.listdir(reports) if f.startswith("multilane-report-")]
    expect(len(files) == 1, "one job report written: %s" % files, p)
    with open(os.path.join(reports, files[0])) as f:
        bins = {b["from"]: b for b in json.load(f)["bins"] if b["memory"] == "host"}
    for size, algo in sorted(want.items()):
        b = bins.get(size)
        expect(b is not None and b["calls"] > 0, "the report has calls of %d B" % size)
        expect(b["algos"] == {algo: b["calls"]},
               "all %d calls of %d B ran %s: %s" % (b["calls"], size, algo, b["algos"]))
        expect(b.get("profile", {}).get("algo") == algo,
               "the report names the profile's %s entry at %d B: %s" % (algo, size, b.get("profile")))

    # The STATS line (rank 0's totals) agrees: every call it saw lies in one
    # of those bins, and each algorithm ran exactly the calls of its bins.
    stats = re.search(r"multilane: stats: rank 0: (.*)", p.stderr)
    expect(stats is not None, "the stats line is printed", p)
    fields = {k: int(v) for k, v in (kv.split("=") for kv in stats.group(1).split())}
    expect(fields["calls"] == sum(bins[size]["calls"] for size in want),
           "stats calls=%d are the calls of the five sizes" % fields["calls"])
    for algo in ("passthrough", "lane", "hier", "split"):
        calls = sum(bins[size]["calls"] for size in want if want[size] == algo)
        expect(fields[algo] == calls, "stats %s=%d equals the report's %d calls" % (algo, fields[algo], calls))
    expect(fields["unsupported"] == 0, "no unsupported call: %s" % stats.group(0))


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

    # Issue 15 item 5: a profile the library rejects (algorithm ring) is refused
    # by import, naming the field and the parser's reason; nothing is added.
    bad = json.load(open(out))
    bad["profiles"][0]["profile_text"] = "multilane-profile 1\nhost 0 inf ring\n"
    bad["profiles"][0]["entries"] = [dict(bad["profiles"][0]["entries"][0], algo="ring", mpi="", min_bytes=0, max_bytes=None)]
    bad["profiles"][0]["tuned_at"] = "2099-01-01T00:00:00Z"
    bad_path = os.path.join(tmp, "bad.json")
    json.dump(bad, open(bad_path, "w"))
    p = run([MULTILANE, "import", bad_path, "--db", b], check=False)
    expect(p.returncode != 0 and "profiles[0].profile_text: the library rejects it" in p.stderr
           and "unknown algorithm 'ring'" in p.stderr, "import refuses a profile the library rejects", p)
    expect(len(profiles(b)) == 1, "a refused import adds nothing")
    # Issue 15 item 5: `show` lists the entries while `run` hands the library
    # the text; a database written before import/publish checked them (here:
    # the text changed behind multilane's back) gets a warning from show.
    # The tampered text must differ from whatever the tune chose, or the
    # change is a no-op (CI once tuned `hier` for the whole range).
    con = sqlite3.connect(b)
    chosen = {algo for (algo,) in con.execute("SELECT algo FROM profile_entries")}
    other = next(a for a in ("split", "lane", "hier") if a not in chosen)
    con.execute("UPDATE profiles SET profile_text = 'multilane-profile 1' || char(10) || 'host 0 inf ' || ? || char(10)",
                (other,))
    con.commit()
    con.close()
    p = run([MULTILANE, "show", "--db", b])
    expect("warning: " in p.stdout and "the text and the entries disagree" in p.stdout
           and "`run` uses the text" in p.stdout, "show flags a profile whose text and entries disagree", p)
    # Issue 15 item 9: a folder the user may not write is "Permission denied",
    # not "No such file or directory".
    os.chmod(tmp, 0o755)
    os.chmod(out, 0o644)
    locked = os.path.join(tmp, "locked")
    os.mkdir(locked, 0o755)
    p = run([MULTILANE, "import", out, "--db", os.path.join(locked, "c.db")], check=False, user="nobody")
    expect(p.returncode != 0 and "cannot create the database in " + locked + ": Permission denied" in p.stderr,
           "an unwritable database folder is reported as permission denied", p)


def test_tune_no_shell_and_no_leftovers(tmp):
    # Issue 15 items 6 and 7: --keep is a plain folder name (no shell ever
    # parses it), and the temporary folder goes away after every tune: a
    # stored one, a failed one and an interrupted one.
    private_tmp = os.path.join(tmp, "tmpdir")
    os.makedirs(private_tmp)
    env = dict(ENV, TMPDIR=private_tmp)
    db = os.path.join(tmp, "user.db")
    base = ["tune", "--np", "2", "--budget", "3", "--sizes", "4K:16K", "--db", db]
    run([MULTILANE] + base, env=env, timeout=600)
    expect(tune_folders(private_tmp) == [], "a stored tune leaves no multilane-tune.* folder in TMPDIR")
    p = run([MULTILANE] + base + ["--memory", "device"] + ["--sizes", "x"], env=env, check=False)
    expect(p.returncode != 0 and tune_folders(private_tmp) == [], "a refused tune leaves no folder", p)
    p = run([MULTILANE, "tune", "--np", "2", "--budget", "3", "--sizes", "4K:16K", "--db", db], env=dict(
        env, MULTILANE_PROBE="/bin/false"), check=False, timeout=600)
    expect(p.returncode != 0 and tune_folders(private_tmp) == [], "a failed probe leaves no folder", p)

    proc = subprocess.Popen([MULTILANE, "tune", "--np", "2", "--budget", "60", "--sizes", "4K:64M", "--exhaustive",
                             "--db", db], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while time.time() < deadline and not os.path.exists(os.path.join(private_tmp, tune_folders(private_tmp)[0],
                                                                      "plan.json") if tune_folders(private_tmp)
                                                         else "/nonexistent"):
        time.sleep(0.1)
    time.sleep(1)
    proc.terminate()
    out, err = proc.communicate(timeout=120)
    expect(proc.returncode == 143, "an interrupted tune ends with 128 + SIGTERM (got %d)\n%s" % (proc.returncode, err))
    expect("interrupted" in err and "nothing was stored" in err, "it says it was interrupted:\n" + err)
    expect(tune_folders(private_tmp) == [], "an interrupted tune removes its folder")
    expect(len(profiles(db)) == 1, "an interrupted tune stores nothing")

    marker = os.path.join(tmp, "X")
    keep = os.path.join(tmp, "it's $(touch %s)" % marker, "kept")
    run([MULTILANE] + base + ["--keep", keep], env=env, timeout=600)
    expect(os.path.isfile(os.path.join(keep, "plan.json")) and os.path.isfile(os.path.join(keep, "result.json")),
           "--keep makes exactly the folder named, with the plan and the result")
    expect(not os.path.exists(marker), "no shell ran the command substitution in --keep")
    expect(tune_folders(private_tmp) == [], "--keep makes no temporary folder")


def test_tune_oversubscribed(tmp):
    # Issue 26: --np is ranks per node with --partition, and --help says so.
    p = run([MULTILANE, "tune", "--help"])
    help_np = " ".join(p.stdout[p.stdout.index("--np"):].split()[:60])
    expect("with --partition, ranks PER NODE of each node type's probe job" in help_np,
           "tune --help says what --np means with --partition", p)
    cores = len(os.sched_getaffinity(0))
    db = os.path.join(tmp, "user.db")
    many = str(cores * 2)
    base = ["tune", "--np", many, "--budget", "3", "--sizes", "4K:16K"]
    p = run([MULTILANE] + base + ["--db", db], check=False)
    expect(p.returncode == 1 and "oversubscribed" in p.stderr and "--allow-oversubscribed" in p.stderr,
           "more ranks than cores is refused with the fix", p)
    expect(not profiles(db) if os.path.exists(db) else True, "nothing stored")
    # Without the variables that let mpirun oversubscribe by itself: tune's
    # own flags (the family table's, Open MPI 4 and 5 alike) must do it.
    bare = {k: v for k, v in ENV.items() if k not in e2e.OVERSUBSCRIBE_ENV}
    p = run([MULTILANE] + base + ["--db", db, "--allow-oversubscribed"], env=bare, timeout=600)
    expect("OVERSUBSCRIBED" in p.stdout and "OVERSUBSCRIBED" in p.stderr, "an allowed one says so loudly", p)
    rows = profiles(db)
    expect(len(rows) == 1 and ("oversubscribed=%s/%d" % (many, cores)) in rows[0][1],
           "the stored profile is marked oversubscribed")
    system_db = os.path.join(tmp, "system.db")
    p = run([MULTILANE] + base + ["--system", "--allow-oversubscribed"], env=dict(ENV, MULTILANE_SYSTEM_DB=system_db),
            check=False)
    expect(p.returncode == 1 and "system database" in p.stderr and not os.path.exists(system_db),
           "an oversubscribed profile is never published to the system database", p)


def test_system_snapshot(tmp):
    # The system database is published as a read-only snapshot; readers open
    # it immutable; tune --system and import --system publish again.
    system_db = os.path.join(tmp, "shared", "profiles.db")
    env = dict(ENV, MULTILANE_SYSTEM_DB=system_db, MULTILANE_USER_DB=os.path.join(tmp, "user.db"))
    run([MULTILANE, "tune", "--np", "2", "--budget", "3", "--sizes", "4K:16K", "--system"], env=env, timeout=600)
    con = sqlite3.connect("file:%s?mode=ro" % system_db, uri=True)
    app_id, mode = con.execute("PRAGMA application_id").fetchone()[0], con.execute("PRAGMA journal_mode").fetchone()[0]
    con.close()
    expect(app_id == 0x4D4C736E and mode == "delete", "the published file is a marked rollback-journal snapshot")
    expect(oct(os.stat(system_db).st_mode & 0o777) == "0o644", "the snapshot is 0644")
    expect(os.path.exists(system_db + ".work"), "the admin's working copy sits beside it")
    before = os.stat(system_db).st_ino
    p = run([MULTILANE, "show", "--db", system_db], env=env)
    expect("gain" in p.stdout, "show reads the snapshot", p)
    for suffix in ("-wal", "-shm", "-journal"):
        expect(not os.path.exists(system_db + suffix), "readers leave no %s file" % suffix)
    p = run([MULTILANE, "tune", "--np", "2", "--budget", "3", "--sizes", "4K:16K", "--db", system_db], env=env,
            timeout=600)
    expect(os.stat(system_db).st_ino != before, "--db on a snapshot publishes a new file (rename)")
    expect(len(profiles(system_db)) == 2, "both profiles are in the new snapshot")
    out = os.path.join(tmp, "doc.json")
    run([MULTILANE, "export", out, "--db", system_db], env=env)
    os.remove(system_db + ".work")  # a lost working copy starts again from the snapshot
    other = os.path.join(tmp, "other.db")
    run([MULTILANE, "tune", "--np", "2", "--budget", "3", "--sizes", "4K:16K", "--db", other], env=env, timeout=600)
    run([MULTILANE, "export", out, "--db", other], env=env)
    run([MULTILANE, "import", out, "--system"], env=env)
    expect(len(profiles(system_db)) == 3, "import --system adds to the published snapshot, losing nothing")


def test_doctor(tmp):
    # doctor checks what runs: a healthy setup (with a fake slurm.conf naming
    # the built plugin through a plugstack include) is "all good"; each broken
    # part is an ERROR with its real cause, and then never "all good".
    build = os.path.dirname(os.path.dirname(os.path.realpath(MULTILANE)))
    plugin = os.path.join(build, "spank", "spank_multilane.so")
    library = os.environ["MULTILANE_LIBRARY"]
    expect(os.path.exists(plugin), "the plugin was built at " + plugin)
    system_db = os.path.join(tmp, "system", "profiles.db")
    env = dict(ENV, MULTILANE_SYSTEM_DB=system_db, MULTILANE_USER_DB=os.path.join(tmp, "user.db"))
    run([MULTILANE, "tune", "--np", "2", "--budget", "3", "--sizes", "4K:16K", "--db", os.path.join(tmp, "t.db")],
        env=env, timeout=600)
    doc_path = os.path.join(tmp, "doc.json")
    run([MULTILANE, "export", doc_path, "--db", os.path.join(tmp, "t.db")], env=env)
    doc = json.load(open(doc_path))
    doc["profiles"][0]["partition"] = "gpu"  # a partition's profile only
    json.dump(doc, open(doc_path, "w"))
    json.dump(doc, open(os.path.join(tmp, "doc-current.json"), "w"))
    run([MULTILANE, "import", doc_path, "--system"], env=env)

    slurm = os.path.join(tmp, "etc-slurm")
    os.makedirs(os.path.join(slurm, "plugstack.conf.d"))
    with open(os.path.join(slurm, "slurm.conf"), "w") as f:
        f.write("ClusterName=doctor\nCliFilterPlugins=cli_filter/lua\n")
    with open(os.path.join(slurm, "plugstack.conf"), "w") as f:
        f.write("include plugstack.conf.d/*.conf\n")
    source = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    lua = open(os.path.join(source, "spank", "cli_filter.lua")).read()

    def configure(words, multilane=MULTILANE, plugin_file=plugin, lua_db=system_db):
        with open(os.path.join(slurm, "plugstack.conf.d", "multilane.conf"), "w") as f:
            f.write("optional %s library=%s multilane=%s database=%s %s\n" % (
                plugin_file, library, multilane, system_db, words))
        # The source is a template (the build fills in the installed paths):
        # set the two values at its top as an admin would.
        text = re.sub(r'^local MULTILANE = .*$', 'local MULTILANE = "%s"' % multilane, lua, flags=re.M)
        text = re.sub(r'^local DATABASE = .*$', 'local DATABASE = "%s"' % lua_db, text, flags=re.M)
        with open(os.path.join(slurm, "cli_filter.lua"), "w") as f:
            f.write(text)

    denv = dict(env, SLURM_CONF=os.path.join(slurm, "slurm.conf"))
    configure("")
    p = run([MULTILANE, "doctor"], env=denv, check=False)
    lines = p.stdout.strip().split("\n")
    expect(p.returncode == 0 and lines[-1] == "all good" and "ERROR" not in p.stdout, "a healthy setup is all good", p)
    expect("partition gpu: profile" in p.stdout, "a partition's profile is found, not 'no profile'", p)
    expect("multilane.conf:1: optional" in p.stdout and "matches Slurm" in p.stdout,
           "the plugstack line is found through the include and the plugin matches Slurm", p)
    expect("cli_filter" in p.stdout and "settings match" in p.stdout, "the cli_filter is ours and matches", p)
    p = run([MULTILANE, "doctor", "--system"], env=denv, check=False)
    expect(p.returncode == 0 and "user database" not in p.stdout, "--system checks the system database only", p)
    p = run([MULTILANE, "doctor", "--db", os.path.join(tmp, "t.db")], env=denv, check=False)
    expect("--db database" in p.stdout and "profile" in p.stdout, "--db checks that file", p)

    def broken(what, env_, needle):
        p = run([MULTILANE, "doctor"], env=env_, check=False)
        last = p.stdout.strip().split("\n")[-1]
        expect(p.returncode == 1 and "ERROR" in p.stdout and needle in p.stdout and "all good" not in p.stdout
               and "problem(s) found" in last, what, p)

    truncated = os.path.join(tmp, "libmlallreduce.so")
    with open(library, "rb") as f, open(truncated, "wb") as g:
        g.write(f.read()[:6000])
    broken("a truncated library is an error (loaded in a child)", dict(denv, MULTILANE_LIBRARY=truncated),
           "does not load")
    stand_in = os.path.join(tmp, "multilane-broken")
    with open(stand_in, "w") as f:
        f.write("#!/bin/sh\necho '%s: error while loading shared libraries: libmlallreduce.so.0: cannot open "
                "shared object file' >&2\nexit 127\n" % stand_in)
    os.chmod(stand_in, 0o755)
    configure("", multilane=stand_in)
    broken("multilane= that cannot start says the loader's words", denv, "error while loading shared libraries")
    configure("colour=blue")
    broken("an unknown plugstack key is named", denv, "colour")
    configure("", lua_db="/elsewhere.db")
    broken("a cli_filter with other settings is an error", denv, "DATABASE=/elsewhere.db")
    fake = os.path.join(tmp, "fake_plugin.so")
    c_file = os.path.join(tmp, "fake_plugin.c")
    with open(c_file, "w") as f:
        f.write("const char plugin_name[] = \"multilane\"; const unsigned plugin_version = (23u << 16) | (11u << 8);\n")
    subprocess.run(["cc", "-shared", "-fPIC", "-o", fake, c_file], check=True)
    configure("", plugin_file=fake.replace("fake_plugin", "spank_multilane_fake"))
    os.rename(fake, fake.replace("fake_plugin", "spank_multilane_fake"))
    broken("a plugin built for another Slurm is an error", denv, "built for Slurm 23.11.0")
    configure("")

    # Issue 26: the launcher's generation (Open MPI 4 with ORTE, 5 with
    # PRRTE) and the command line tune's probes get from the family table.
    p = run([MULTILANE, "doctor"], env=denv, check=False)
    gen = re.search(r"ok     mpirun: openmpi (\d+) \((ORTE|PRRTE)\): probes outside Slurm start with "
                    r"`mpirun -np N --map-by :OVERSUBSCRIBE`", p.stdout)
    expect(p.returncode == 0 and gen, "doctor names mpirun's generation and the probes' command line", p)
    other = 5 if gen.group(1) == "4" else 4
    fakebin = os.path.join(tmp, "fakebin")
    os.makedirs(fakebin)
    with open(os.path.join(fakebin, "mpirun"), "w") as f:
        f.write("#!/bin/sh\necho 'mpirun (Open MPI) %d.0.7'\n" % other)
    os.chmod(os.path.join(fakebin, "mpirun"), 0o755)
    broken("an mpirun of another Open MPI generation than the command's MPI is an error",
           dict(denv, PATH=fakebin + ":" + denv["PATH"]), "mpirun is openmpi %d but this command's MPI is" % other)

    # An upgrade without a retune: every profile of a node type and partition
    # was tuned with another multilane version, so every job misses; doctor
    # says so and says to retune (it said "all good" before).
    doc["profiles"][0]["library_version"] = "0.0.1-old"
    json.dump(doc, open(doc_path, "w"))
    old_db = os.path.join(tmp, "old.db")
    run([MULTILANE, "import", doc_path, "--db", old_db], env=env)
    p = run([MULTILANE, "doctor", "--db", old_db], env=denv, check=False)
    expect(p.returncode == 1 and "tuned with libmlallreduce 0.0.1-old" in p.stdout and "every job there misses it"
           in p.stdout and "fix: tune again with the installed versions: `multilane tune --partition gpu`" in p.stdout
           and "all good" not in p.stdout, "profiles of another multilane version are an error with the retune", p)
    run([MULTILANE, "import", os.path.join(tmp, "doc-current.json"), "--db", old_db], env=env)
    p = run([MULTILANE, "doctor", "--db", old_db], env=denv, check=False)
    expect(p.returncode == 0 and "0.0.1-old" not in p.stdout, "a retuned partition has no outdated-profile error", p)


def test_tune_ranks_per_gpu(tmp):
    """Issue 12: ranks per GPU as a tuned dimension (host memory here: the
    launches, the ppg= entries, the recommendation and resolve are the same
    code on GPU nodes; tests/gpu covers device memory on the GPU host)."""
    db = os.path.join(tmp, "ppg.db")
    # Device memory where NVML sees no GPU is refused with the fix.
    if not os.path.exists("/dev/nvidia0"):
        p = run([MULTILANE, "tune", "--memory", "device", "--db", db], check=False)
        expect(p.returncode != 0 and "--memory device" in p.stderr and "no GPU" in p.stderr
               and "--memory host" in p.stderr, "device memory without a GPU is refused, naming the fix", p)
        expect(not os.path.exists(db), "a refused tune creates no database")
    p = run([MULTILANE, "tune", "--memory", "host", "--ranks-per-gpu", "nine"], check=False)
    expect(p.returncode != 0 and "--ranks-per-gpu 'nine'" in p.stderr, "a bad ranks-per-GPU list is named", p)
    p = run([MULTILANE, "tune", "--memory", "host", "--ranks-per-gpu", "1,2", "--np", "4"], check=False)
    expect(p.returncode != 0 and "--np cannot be given" in p.stderr, "--np with a list is refused", p)

    # Two launches on 2 virtual nodes: 2 ranks (1 per "GPU") and 4 (2 per GPU).
    p = run([MULTILANE, "tune", "--memory", "host", "--ranks-per-gpu", "2,1", "--virtual-nodes", "2",
             "--budget", "12", "--sizes", "4K:64K", "--db", db, "--allow-oversubscribed"], timeout=600)
    expect(p.stderr.count("mlprobe --plan") == 2, "one probe launch per ranks-per-GPU value", p)
    expect("-np 2 " in p.stderr and "-np 4 " in p.stderr, "launches of 2 and 4 ranks", p)
    m = re.search(r"recommended ranks per GPU: (\d)", p.stdout)
    expect(m is not None and "<- recommended" in p.stdout, "tune prints the recommended ranks per GPU", p)
    rec = int(m.group(1))
    (pid, text), = profiles(db)
    header = text.splitlines()[0]
    expect("ranks_per_gpu_tuned=1,2" in header and ("ranks_per_gpu=%d" % rec) in header and "mps=none" in header,
           "the profile header records the tuned values, the recommendation and MPS", p)
    entries = [l.split() for l in text.splitlines()[1:] if l and not l.startswith("#")]
    tagged = {}
    untagged = []
    for e in entries:
        ppg = [w for w in e if w.startswith("ppg=")]
        rest = [w for w in e if not w.startswith("ppg=")]
        if ppg:
            tagged.setdefault(int(ppg[0][4:]), []).append(rest)
        else:
            untagged.append(rest)
        expect(any(w.startswith("at=") for w in e), "every entry records the size it was measured at: %s" % e)
    expect(sorted(tagged) == [1, 2], "entries for each tuned value (ppg=1, ppg=2)", p)
    expect(untagged == tagged[rec], "the entries without ppg= are the recommended value's", p)
    con = sqlite3.connect(db)
    row_ppg = con.execute("SELECT ranks_per_gpu FROM profiles WHERE id = ?", (pid,)).fetchone()[0]
    measured = sorted(r[0] for r in con.execute("SELECT DISTINCT ppg FROM measurements WHERE profile_id = ?", (pid,)))
    entry_ppg = sorted({r[0] for r in con.execute("SELECT ppg FROM profile_entries WHERE profile_id = ?", (pid,))},
                       key=lambda v: -1 if v is None else v)
    con.close()
    expect(row_ppg == rec, "the stored profile's ranks per GPU is the recommendation", p)
    expect(measured == [1, 2], "the measurements keep each launch's ranks per GPU", p)
    expect(1 in entry_ppg and 2 in entry_ppg, "the entry rows carry their ppg", p)
    # The plugin and the cli_filter get the recommendation from resolve.
    r = run([MULTILANE, "resolve", "--db", db])
    expect(("ranks_per_gpu=%d\n" % rec) in r.stdout and "ranks_per_gpu_tuned=1,2\n" in r.stdout
           and "mps=none\n" in r.stdout, "resolve gives the recommended value and the tuned ones", r)
    # show: the best time of each value per size, the recommendation starred.
    sh = run([MULTILANE, "show", "--db", db])
    expect("best time_us at each ranks per GPU" in sh.stdout and ("%d*" % rec) in sh.stdout,
           "show prints the best time per size at each ranks-per-GPU value, marking the recommendation", sh)
    js = json.loads(run([MULTILANE, "show", "--db", db, "--json"]).stdout)
    pj = js["databases"][0]["profiles"][0]
    expect(pj["recommended_ranks_per_gpu"] == rec and
           sorted(pj["ranks_per_gpu_by_size"][0]["best_time_us"]) == ["1", "2"], "show --json has the same table", sh)
    # run: --ranks-per-gpu auto takes the recommendation; an untuned value gets a note.
    r = run([MULTILANE, "run", "--db", db, "--ranks-per-gpu", "auto", "--dry-run", "--", "mpirun", "true"])
    expect(("MULTILANE_RANKS_PER_GPU=%d\n" % rec) in r.stdout and "-x MULTILANE_RANKS_PER_GPU" in r.stdout,
           "run --ranks-per-gpu auto sets and forwards the recommended value", r)
    r = run([MULTILANE, "run", "--db", db, "--ranks-per-gpu", "4", "--dry-run", "--", "mpirun", "true"])
    expect("MULTILANE_RANKS_PER_GPU=4\n" in r.stdout and "tuned at 1,2 rank(s) per GPU, not 4" in r.stderr,
           "run --ranks-per-gpu with an untuned value says so", r)
    # --weights: a file that is not a job report is named.
    bad = os.path.join(tmp, "weights.json")
    with open(bad, "w") as f:
        f.write("{}")
    p = run([MULTILANE, "tune", "--memory", "host", "--ranks-per-gpu", "1,2", "--virtual-nodes", "2",
             "--budget", "5", "--sizes", "4K:16K", "--db", db, "--allow-oversubscribed", "--weights", bad],
            check=False, timeout=600)
    expect(p.returncode != 0 and bad in p.stderr, "a --weights file that is not a job report is named", p)
    # --weights of a real job report (issue 30's): the job's bins priced at their mean sizes.
    job = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "report", "fixtures",
                       "issue30_points.json")
    p = run([MULTILANE, "tune", "--memory", "host", "--ranks-per-gpu", "1,2", "--virtual-nodes", "2",
             "--budget", "5", "--sizes", "4K:64K", "--db", db, "--allow-oversubscribed", "--weights", job],
            timeout=600)
    expect(re.search(r"ranks per GPU +job_us +bins", p.stdout) is not None and
           "each bin priced at its mean message size" in p.stdout and "weights=job-report" in p.stdout,
           "tune --weights prices the job's bins and says so", p)
    expect("lie beyond the tuned sizes and were extrapolated" in p.stdout,
           "the job's 4M and 32M bins, beyond the tuned 64K, are said to be extrapolated", p)


def test_hostile_files(tmp):
    """Issue 23 N3, N4, N12, N14: files named on the command line are written
    without following planted links, read with a bound, and a kept tune
    folder is trusted only when it is the caller's; the doctor never says ok
    of what it called an ERROR; a wrapper script gets the library's
    variables in its environment; messages echo outside values as excerpts."""
    db = os.path.join(tmp, "user.db")
    run([MULTILANE, "tune", "--np", "2", "--budget", "3", "--sizes", "4K:16K", "--db", db], timeout=600)

    # N3: `export FILE` and `report --html OUT` in a folder where someone
    # planted links at FILE.tmp (the old temporary name) and at FILE.
    shared = os.path.join(tmp, "shared")
    os.mkdir(shared)
    victim = os.path.join(tmp, "victim")
    with open(victim, "w") as f:
        f.write("precious")
    out = os.path.join(shared, "profiles.json")
    os.symlink(victim, out + ".tmp")
    run([MULTILANE, "export", out, "--db", db])
    expect(open(victim).read() == "precious" and json.load(open(out))["format"] == "multilane-profiles",
           "export writes its file without following a link at FILE.tmp")
    os.unlink(out)
    os.symlink(victim, out)
    run([MULTILANE, "export", out, "--db", db])
    expect(open(victim).read() == "precious" and not os.path.islink(out),
           "export replaces a link at FILE, never writes through it")
    report = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "report", "fixtures",
                          "known_job.json")
    html = os.path.join(shared, "report.html")
    os.symlink(victim, html + ".tmp")
    run([MULTILANE, "report", report, "--html", html])
    expect(open(victim).read() == "precious" and "<html" in open(html).read(),
           "report --html writes its page without following a link at OUT.tmp")

    # N12: /dev/zero and a FIFO without a writer are refused at once, named.
    fifo = os.path.join(tmp, "fifo")
    os.mkfifo(fifo)
    for args, path, what in ((["import", "/dev/zero", "--db", db], "/dev/zero", "import /dev/zero"),
                             (["import", fifo, "--db", db], fifo, "import of a FIFO"),
                             (["report", fifo], fifo, "report of a FIFO"),
                             (["report", "/dev/zero"], "/dev/zero", "report of /dev/zero"),
                             (["tune", "--np", "2", "--db", db, "--weights", fifo], fifo, "tune --weights of a FIFO")):
        p = run([MULTILANE] + args, check=False, timeout=30)
        expect(p.returncode != 0 and "not a regular file: give a regular file" in p.stderr and path in p.stderr,
               what + " is refused at once, naming the file and the fix", p)

    # N4: an existing --keep folder of another user, or one others may write,
    # is refused before any probe runs; the caller's own private one is used.
    theirs = os.path.join(tmp, "theirs")
    os.mkdir(theirs)
    os.chown(theirs, pwd.getpwnam("nobody").pw_uid, pwd.getpwnam("nobody").pw_gid)
    base = ["tune", "--np", "2", "--budget", "3", "--sizes", "4K:16K", "--db", db]
    p = run([MULTILANE] + base + ["--keep", theirs], check=False, timeout=60)
    expect(p.returncode != 0 and "belongs to uid" in p.stderr and "give a new folder of your own" in p.stderr
           and "multilane tune: node type" not in p.stderr, "tune --keep refuses another user's folder", p)
    open_dir = os.path.join(tmp, "open")
    os.mkdir(open_dir)
    os.chmod(open_dir, 0o777)
    p = run([MULTILANE] + base + ["--keep", open_dir], check=False, timeout=60)
    expect(p.returncode != 0 and "chmod go-w " + open_dir in p.stderr, "tune --keep refuses a folder others may write", p)

    # N14: a 100 KB value is echoed as an excerpt.
    p = run([MULTILANE, "run", "--db", db, "--ranks-per-gpu", "x" * 100000, "--", "true"], check=False)
    expect(p.returncode != 0 and len(p.stderr) < 1000 and "\u2026 (100000 bytes)" in p.stderr,
           "a 100 KB option value is echoed as an excerpt", p)

    # A wrapper script (neither mpirun nor srun) is run unchanged, with the
    # library and the profile in its environment.
    wrapper = os.path.join(tmp, "wrapper.sh")
    with open(wrapper, "w") as f:
        f.write("#!/bin/sh\nenv | grep -E '^(LD_PRELOAD|MULTILANE_[A-Z_]+)=' | cut -c1-200\n")
    os.chmod(wrapper, 0o755)
    # (A sanitizer build: its runtime, the user's own preload, stays first.)
    wrapper_env = dict(ENV)
    if os.environ.get("MULTILANE_TEST_PRELOAD"):
        wrapper_env["LD_PRELOAD"] = os.environ["MULTILANE_TEST_PRELOAD"]
    p = run([MULTILANE, "run", "--db", db, "--ranks-per-gpu", "1", "--", wrapper], env=wrapper_env)
    expect("LD_PRELOAD=" in p.stdout and "libmlallreduce" in p.stdout
           and "MULTILANE_PROFILE=multilane-profile 1" in p.stdout and "MULTILANE_RANKS_PER_GPU=1" in p.stdout,
           "a wrapper script gets LD_PRELOAD and the MULTILANE_* variables in its environment", p)

    # N14: a profile that doctor calls unusable is never "ok" after that.
    con = sqlite3.connect(db)
    con.execute("UPDATE profiles SET profile_text = 'multilane-profile 1' || char(10) || 'host 0 inf ring' || char(10)")
    con.commit()
    con.close()
    p = run([MULTILANE, "doctor", "--db", db], check=False)
    expect(p.returncode == 1 and "ERROR" in p.stdout and "is not what jobs can use" in p.stdout
           and not re.search(r"^  ok +(this node type: )?profile \d+", p.stdout, re.M)
           and p.stdout.strip().split("\n")[-1].endswith("problem(s) found: see the fixes above"),
           "doctor says no ok of a profile it called an ERROR, and its verdict counts it", p)


def test_run_partition_profile(tmp):
    """Issue 26: `multilane run -- mpirun ...` outside an allocation (no
    partition known) finds the profile `tune --partition` made when it is the
    only partition's; with two partitions, or only profiles of another
    multilane version, it runs without multilane and says exactly why."""
    env = {k: v for k, v in ENV.items() if not k.startswith("SLURM_")}
    db = os.path.join(tmp, "t.db")
    run([MULTILANE, "tune", "--np", "2", "--budget", "3", "--sizes", "4K:16K", "--db", db], env=env, timeout=600)
    doc_path = os.path.join(tmp, "doc.json")
    run([MULTILANE, "export", doc_path, "--db", db], env=env)
    doc = json.load(open(doc_path))

    def add(partition, version=None):
        d = json.loads(json.dumps(doc))
        d["profiles"][0]["partition"] = partition
        if version:
            d["profiles"][0]["library_version"] = version
        json.dump(d, open(doc_path, "w"))
        return d

    part = os.path.join(tmp, "partition.db")
    add("gpu")
    run([MULTILANE, "import", doc_path, "--db", part], env=env)
    command = ["--", "mpirun", "-np", "2", BENCH]
    p = run([MULTILANE, "run", "--db", part, "--dry-run"] + command, env=env)
    expect("MULTILANE_PROFILE=multilane-profile 1" in p.stdout and "partition gpu" in p.stderr,
           "the only partition's profile serves a run outside an allocation", p)

    add("debug")
    run([MULTILANE, "import", doc_path, "--db", part], env=env)
    p = run([MULTILANE, "run", "--db", part, "--dry-run"] + command, env=env)
    expect("MULTILANE_PROFILE=\n" in p.stdout and "partitions debug, gpu" in p.stderr
           and "--partition NAME" in p.stderr, "with two partitions the miss names them and --partition", p)
    p = run([MULTILANE, "run", "--db", part, "--partition", "debug", "--dry-run"] + command, env=env)
    expect("MULTILANE_PROFILE=multilane-profile 1" in p.stdout and "partition debug" in p.stderr,
           "--partition chooses one", p)

    old = os.path.join(tmp, "old.db")
    add("gpu", version="0.0.1-old")
    run([MULTILANE, "import", doc_path, "--db", old], env=env)
    p = run([MULTILANE, "run", "--db", old, "--dry-run"] + command, env=env)
    expect("MULTILANE_PROFILE=\n" in p.stdout and "tuned with libmlallreduce 0.0.1-old" in p.stderr
           and "tune again (`multilane tune --partition gpu`)" in p.stderr,
           "a profile of another multilane version is a miss that says to retune", p)


def test_history(tmp):
    """Issue 29, item 1: jobs run by `multilane run` with their report on are
    kept in the user's database under their job key (the same command twice:
    one key, two runs; MULTILANE_JOB_KEY names another), with the layout, the
    split and the size histogram of their reports; a file in the inbox that
    is not a job report is named once and never fatal; `--forget` forgets."""
    state = os.path.join(tmp, "state")
    db, reports = os.path.join(state, "user.db"), os.path.join(tmp, "reports")
    os.makedirs(reports)
    env = dict(ENV, MULTILANE_USER_DB=db, MULTILANE_REPORT=reports)
    if os.environ.get("MULTILANE_TEST_PRELOAD"):
        env["LD_PRELOAD"] = os.environ["MULTILANE_TEST_PRELOAD"]
    run([MULTILANE, "tune", "--np", "4", "--virtual-nodes", "2", "--budget", "3", "--sizes", "4K:16K", "--db", db,
         "--allow-oversubscribed"], env=env, timeout=600)
    def job(np_):
        return ["mpirun", "-np", str(np_), "-x", "MULTILANE_RANKS_PER_NODE=%d" % (np_ // 2), BENCH, "-b", "4K", "-e",
                "64K", "-f", "4", "-n", "3", "-w", "1", "-a", "mpi,auto"]
    for key, np_ in ((None, 4), (None, 4), ("my-job", 4), ("my-job", 2), ("two words", 4)):
        e = dict(env)
        if key:
            e["MULTILANE_JOB_KEY"] = key
        p = run([MULTILANE, "run", "--"] + job(np_), env=e)
        expect("# Out of bounds values : 0 OK" in p.stdout, "the job ran under multilane run", p)
        if key == "two words":
            expect("MULTILANE_JOB_KEY='two words' must be 1 to 128 letters" in p.stderr,
                   "a bad job key is named, with the rule, and the job goes on", p)
    inbox = os.path.join(state, "history")
    expect(len(os.listdir(inbox)) == 5, "each job dropped its report into the inbox: %s" % os.listdir(inbox))
    with open(os.path.join(inbox, "multilane-report-bad.json"), "w") as f:
        f.write("{")
    p = run([MULTILANE, "history", "--json"], env=env)
    doc = json.loads(p.stdout)
    expect(doc["recorded"] == 5 and len(doc["runs"]) == 5, "five runs recorded: %s" % doc, p)
    expect(len([l for l in p.stderr.splitlines() if "multilane-report-bad.json" in l]) == 1 and
           "left out of the history" in p.stderr,
           "the bad file is named once, not fatal", p)
    expect(sorted(os.listdir(inbox)) == ["multilane-report-bad.json.ignored"], "the inbox is emptied: %s" % os.listdir(inbox))
    keys = [r["key"] for r in doc["runs"]]
    default = [k for k in keys if k.startswith("mlallreduce_bench:")]
    expect(len(default) == 3 and len(set(default)) == 1 and keys.count("my-job") == 2,
           "the same command gives one key (3 runs, the bad key among them), MULTILANE_JOB_KEY another: %s" % keys)
    # Each run against its own report (multilane report --json of the file the job wrote).
    by_start = {}
    for path in glob.glob(os.path.join(reports, "multilane-report-*.json")):
        a = json.loads(run([MULTILANE, "report", "--json", path], env=env).stdout)["jobs"][0]
        by_start.setdefault(a["job"]["started_utc"], []).append(a)
    for r in doc["runs"]:
        expect(r["ranks"] in (2, 4) and r["nodes"] == 2 and r["wall_s"] > 0 and r["node_type"], "run's layout: %s" % r)
        expect(abs(r["compute_s"] + r["allreduce_s"] + r["wait_s"] - r["wall_s"]) < 1e-6 * r["wall_s"] + 1e-9,
               "the split adds up to the wall time: %s" % r)
        same = [a for a in by_start.get(r["started_utc"], [])
                if abs(a["time"]["wall_s"] - r["wall_s"]) < 1e-9 * max(1.0, r["wall_s"])]
        expect(len(same) == 1, "one report file matches the run started %s" % r["started_utc"])
        calls = {(b["memory"], b["from"]): b["calls"] for b in same[0]["bins"]}
        expect({(h[0], h[1]): h[2] for h in r["histogram"]} == calls, "the run's histogram is its report's: %s" % r)
    p = run([MULTILANE, "history"], env=env)
    expect("bad.json" not in p.stderr and "mlallreduce_bench:" in p.stdout and "my-job" in p.stdout,
           "listed by key, the ignored file not named again", p)
    p = run([MULTILANE, "history", "--key", "my-job"], env=env)
    expect(len([l for l in p.stdout.splitlines() if l.startswith("20")]) == 2, "one line per run of my-job", p)
    # multilane report puts a run beside the earlier runs of its job (issue 29, item 3).
    mine = sorted((r["started_utc"], r["run_id"]) for r in doc["runs"] if r["key"] == "my-job")
    last = os.path.join(reports, mine[-1][1] + ".json")
    a = json.loads(run([MULTILANE, "report", "--json", last], env=env).stdout)["jobs"][0]
    h = a["history"]
    expect(h["known"] and [r["run_id"] for r in h["runs"]] == [m[1] for m in mine] and "ranks 4 -> 2" in h["changes"]
           and h["paid"] in ("yes", "no", "same"), "the report puts the run after the job's earlier one: %s" % h)
    verdict = [v for v in a["verdicts"] if v["id"] == "history"]
    expect(len(verdict) == 1 and "ranks 4 -> 2" in verdict[0]["text"], "the history verdict: %s" % verdict)
    page = os.path.join(tmp, "page.html")
    p = run([MULTILANE, "report", last, "--html", page], env=env)
    expect("job history of my-job (2 runs" in p.stdout, "the text shows the runs", p)
    html = open(page).read()
    expect("Earlier runs of this job" in html and 'id="j0-run1-wall"' in html and "the job&#39;s runs" in html,
           "the page shows the runs side by side (chart and table)")
    first = os.path.join(reports, mine[0][1] + ".json")
    a = json.loads(run([MULTILANE, "report", "--json", first], env=env).stdout)["jobs"][0]
    expect(not a["history"]["known"] and "no earlier run of job my-job" in a["history"]["note"],
           "the first run has no earlier one (a later run is not shown): %s" % a["history"])
    a = json.loads(run([MULTILANE, "report", "--json", "--no-history", last], env=env).stdout)["jobs"][0]
    expect(not a["history"]["known"], "--no-history reads none")
    p = run([MULTILANE, "history", "--key", "two words"], env=env, check=False)
    expect(p.returncode != 0 and "must be 1 to 128 letters" in p.stderr, "a bad --key is refused with the rule", p)
    p = run([MULTILANE, "history", "--forget", "my-job"], env=env)
    expect("forgot 2 run(s) of my-job" in p.stdout, "forget one key", p)
    doc = json.loads(run([MULTILANE, "history", "--json"], env=env).stdout)
    expect(len(doc["runs"]) == 3 and "my-job" not in [r["key"] for r in doc["runs"]], "my-job forgotten")
    p = run([MULTILANE, "history", "--forget-all"], env=env)
    expect("forgot 3 run(s)" in p.stdout, "forget every run", p)


def repeat_medians(result_path):
    """(memory, bytes, candidate) -> the median of a probe result's valid samples."""
    import statistics
    with open(result_path) as f:
        doc = json.load(f)
    out = {}
    for size in doc["sizes"]:
        for c in size["candidates"]:
            if c["valid"] and c["samples_us"]:
                out[(size["memory"], size["bytes"], c["candidate"])] = statistics.median(c["samples_us"])
    return out


def profile_points(text):
    """[(memory, algorithm, bytes, time_us, mpi_time_us, noise)] of every pts= point of a profile."""
    units = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    points = []
    for line in text.splitlines():
        words = line.split()
        if len(words) < 4 or words[0] not in ("host", "device"):
            continue
        for w in words:
            if not w.startswith("pts="):
                continue
            for item in w[4:].split(","):
                size, figures = item.split(":")
                t, m, n = (figures.split("/") + ["-1"])[:3]
                points.append((words[0], words[3], int(size[:-1] if size[-1] in units else size) *
                               units[size[-1] if size[-1] in units else ""], float(t), float(m), float(n)))
    return points


def profile_winners(text):
    """{(memory, bytes): the entry's candidate words} for every pts= point of a profile."""
    out = {}
    for line in text.splitlines():
        words = line.split()
        if len(words) < 4 or words[0] not in ("host", "device"):
            continue
        cand = " ".join(w for w in words[3:] if "=" not in w or w.split("=")[0] in ("mpi", "lanes", "chunk", "transport"))
        for mem, _, size, _, _, _ in profile_points(line):
            out[(mem, size)] = cand
    return out


# The repeat's minimum measuring time (launcher/tune/tune_budget.h:
# kMinRepeatMeasuringS): a tune skips the repeat when less is left of it.
MIN_REPEAT_MEASURING_S = 3.0


def repeat_line(p):
    """The tune's one line on its repeat launch: "repeat launch: ..." when it
    ran, "no repeat launch: WHY" when it did not; None when there is none."""
    lines = [l for l in p.stdout.splitlines() if l.startswith(("repeat launch: ", "no repeat launch: "))]
    return lines[0] if len(lines) == 1 else None


def check_repeat_skipped(p, line, db, keep, first, points):
    """A tune that skipped its repeat says why with figures that hold, names
    the fix, launched the probe once, and stored the first launch's medians."""
    expect("a larger --budget measures each winner in a second launch too" in line,
           "the line on the skipped repeat names the fix", p)
    took = re.search(r"the first launch took ([\d.]+) s of this launch's ([\d.]+) s \(starting and ending its MPI "
                     r"job ([\d.]+) s\), which leaves the repeat under ([\d.]+) s of measurements", line)
    small = re.search(r"this launch's share of --budget \(([\d.]+) s\) is below ([\d.]+) s", line)
    scoped = re.search(r"would take longer than the (\d+) s of measurements this launch's share leaves", line)
    expect(took or small or scoped, "the line says why in one of the tune's three ways: %s" % line, p)
    if took:
        used, share, launch, least = (float(x) for x in took.groups())
        expect(least == MIN_REPEAT_MEASURING_S and share - used - launch < least + 0.15,
               "its figures leave the repeat under %.1f s: %.1f - %.1f - %.1f s" % (least, share, used, launch), p)
    if small:
        expect(float(small.group(1)) < float(small.group(2)), "the share is below the least it names", p)
    for name in ("plan-repeat.json", "result-repeat.json"):
        expect(not os.path.exists(os.path.join(keep, name)), "no repeat ran: no %s" % name)
    winners = profile_winners(profiles(db)[0][1])
    for mem, algo, size, t, m, noise in points:
        expect(abs(m / first[(mem, size, "passthrough")] - 1) < 1e-4,
               "%s %d: the system MPI's time is the first launch's median" % (mem, size))
        if algo != "passthrough":
            cand = winners[(mem, size)] if (mem, size, winners[(mem, size)]) in first else algo
            expect(abs(t / first[(mem, size, cand)] - 1) < 1e-4,
                   "%s %d: %s's time is the first launch's median" % (mem, size, cand))
            expect(first[(mem, size, cand)] < first[(mem, size, "passthrough")],
                   "%s %d: %s beat the system MPI in the first launch" % (mem, size, cand))


def check_repeat_ran(p, db, keep, first, points):
    """The stored points are the mean of the two launches' medians, their
    noise at least the difference between the launches, every winner kept
    was faster than the system MPI in the second launch too, and the repeat
    measured at each size only the system MPI and that size's winner."""
    again = repeat_medians(os.path.join(keep, "result-repeat.json"))
    with open(os.path.join(keep, "plan-repeat.json")) as f:
        plan = json.load(f)
    checked = 0
    for mem, algo, size, t, m, noise in points:
        mpi1, mpi2 = first[(mem, size, "passthrough")], again.get((mem, size, "passthrough"))
        if mpi2 is None:
            continue
        checked += 1
        expect(abs(m / ((mpi1 + mpi2) / 2) - 1) < 1e-4, "%s %d: the system MPI's time is the launches' mean" % (mem, size))
        expect(noise >= abs(mpi2 / mpi1 - 1) - 6e-4,
               "%s %d: the noise %.3f covers the launches' difference %.3f" % (mem, size, noise, abs(mpi2 / mpi1 - 1)))
        if algo != "passthrough":
            expect(algo in plan["candidates"], "%s %d: the winner %s was measured again" % (mem, size, algo))
            expect(again[(mem, size, algo)] < mpi2, "%s %d: %s beat the system MPI in the repeat too" % (mem, size, algo))
            t1, t2 = first[(mem, size, algo)], again[(mem, size, algo)]
            expect(abs(t / ((t1 + t2) / 2) - 1) < 1e-4, "%s %d: %s's time is the launches' mean" % (mem, size, algo))
    expect(checked >= 2, "the repeat measured the system MPI at two sizes or more (%d)" % checked, p)
    # The repeat measures at each size the system MPI and that size's winner
    # only (plan-repeat.json's size_candidates), nothing else.
    with open(os.path.join(keep, "result-repeat.json")) as f:
        for size in json.load(f)["sizes"]:
            words = [c["candidate"] for c in size["candidates"]]
            others = [w for w in words if w != "passthrough"]
            winner = profile_winners(profiles(db)[0][1]).get((size["memory"], size["bytes"]), "")
            expect("passthrough" in words and len(others) <= 1,
                   "%s %d: the repeat measured the system MPI and one winner at most: %s" %
                   (size["memory"], size["bytes"], words), p)
            if winner != "passthrough":  # else kept or undone: the system MPI, or it and the undone winner
                expect(others == [winner], "%s %d: the repeat measured the winner '%s', nothing else: %s" %
                       (size["memory"], size["bytes"], winner, words), p)
    # The launch band: sqrt(3) x the rms of the system MPI's differences over
    # the sizes, given to every size the repeat measured.
    band = float(re.search(r"launch band (\d+)%", p.stdout).group(1)) / 100
    apart = [abs(again[(mem, size, "passthrough")] / first[(mem, size, "passthrough")] - 1)
             for mem, _, size, _, _, _ in points if (mem, size, "passthrough") in again]
    want = (3 * sum(a * a for a in apart) / len(apart)) ** 0.5
    if checked == len(points):
        expect(abs(band - want) <= 0.006, "the band %.3f is sqrt(3) x rms of the differences (%.3f)" % (band, want), p)
    for mem, algo, size, t, m, noise in points:
        expect(noise >= min(band, want) - 0.006, "%s %d: the noise %.3f holds the band %.3f" % (mem, size, noise, band))


def test_tune_repeat_launch(tmp):
    """A tune with the time for it launches the probe a second time on the
    same layout (tuner/repeat.h), checked from the two result files the tune
    kept (check_repeat_ran); a tune that ignored its repeat fails there.

    Timing assumption: --budget 24 over 4K:64K gives the one launch a share of
    about 23 s, a quarter of it planned for the repeat; the repeat runs when
    the first launch, its MPI start and end included, leaves it at least
    MIN_REPEAT_MEASURING_S of measurements, that is when the first launch
    takes under about 19 s.  On the 2-core build machine, shared (load 6),
    the whole tune took 4.4 s and the repeat ran; beside two busy loops the
    first launch took 20.5-21.0 s and the tune rightly skipped the repeat and
    said why (issue 41: CI crashed here on the missing result-repeat.json).
    The test then checks that statement, its figures and the one-launch
    profile (check_repeat_skipped), and says that the repeat's candidates
    went unchecked.  MLA_TEST_REQUIRE_REPEAT=1 makes a skipped repeat a
    failure (an idle machine, or a change to the repeat itself).  A small
    budget has no repeat, and says so."""
    db, keep = os.path.join(tmp, "t.db"), os.path.join(tmp, "kept")
    start = time.time()
    p = tune(db, budget="24", sizes="4K:64K", extra=["--keep", keep])
    took = time.time() - start
    line = repeat_line(p)
    expect(line is not None, "the tune says in one line what its repeat launch did", p)
    print("tune of --budget 24 took %.1f s; %s" % (took, line))
    first = repeat_medians(os.path.join(keep, "result.json"))
    points = profile_points(profiles(db)[0][1])
    expect(len(points) == 3, "the profile has a point at each of 4K, 16K and 64K", p)
    if line.startswith("no repeat launch: "):
        check_repeat_skipped(p, line, db, keep, first, points)
        expect(os.environ.get("MLA_TEST_REQUIRE_REPEAT") != "1",
               "MLA_TEST_REQUIRE_REPEAT=1: the repeat must run, and the tune skipped it", p)
        print("NOTE: the repeat was skipped (busy machine?): its candidates were not checked this run; "
              "the statement and the one-launch profile were")
    else:
        check_repeat_ran(p, db, keep, first, points)

    small = os.path.join(tmp, "small")
    p = tune(os.path.join(tmp, "s.db"), budget="3", sizes="4K:16K", extra=["--keep", small])
    expect("no repeat launch: " in p.stdout and "a larger --budget" in p.stdout, "a small budget says why no repeat", p)
    expect(not os.path.exists(os.path.join(small, "result-repeat.json")), "and launches the probe once")


def test_run_mps(tmp):
    """A profile whose layouts of several ranks per GPU were measured under
    MPS (mps=on) gets a job of `multilane run` a private MPS daemon (a
    stand-in for nvidia-cuda-mps-control here): every rank sees its pipe
    folder, the daemon is told to quit and its folder is removed when the job
    ends, whatever the job's exit status or a signal (SIGTERM and SIGUSR1
    passed on, a terminal's SIGHUP to the whole job); a run killed with
    SIGKILL leaves a record that the next run or doctor reads: once the job
    has ended too, its daemon is told to quit and its folder removed; --mps
    no, one rank per GPU, a daemon already there, or a daemon that does not
    start leave the job to run as it is, with a line where it loses, its
    outside text escaped."""
    db = os.path.join(tmp, "t.db")
    run([MULTILANE, "tune", "--np", "2", "--budget", "3", "--sizes", "4K:16K", "--db", db], timeout=600)
    doc_path = os.path.join(tmp, "doc.json")
    run([MULTILANE, "export", doc_path, "--db", db])
    doc = json.load(open(doc_path))
    p0 = doc["profiles"][0]
    head, rest = p0["profile_text"].split("\n", 1)
    p0["profile_text"] = head + " mps=on ranks_per_gpu=2 ranks_per_gpu_tuned=2\n" + rest
    p0["ranks_per_gpu"] = 2
    json.dump(doc, open(doc_path, "w"))
    mdb = os.path.join(tmp, "mps.db")
    run([MULTILANE, "import", doc_path, "--db", mdb])

    log = os.path.join(tmp, "control.log")
    control = os.path.join(tmp, "mps-control")
    with open(control, "w") as f:
        f.write("#!/bin/sh\n"
                "if [ \"$1\" = -d ]; then echo \"start $CUDA_MPS_PIPE_DIRECTORY\" >> %s; exit ${FAIL_START:-0}; fi\n"
                "read line; echo \"$line $CUDA_MPS_PIPE_DIRECTORY\" >> %s\n" % (log, log))
    os.chmod(control, 0o755)
    env = {k: v for k, v in ENV.items() if not k.startswith(("SLURM_", "CUDA_MPS_"))}
    env["MULTILANE_MPS_CONTROL"] = control
    if os.environ.get("MULTILANE_TEST_PRELOAD"):  # the sanitizer build: its runtime before the library
        env["LD_PRELOAD"] = os.environ["MULTILANE_TEST_PRELOAD"]

    def job(args, command, extra_env=None, check=True):
        if os.path.exists(log):
            os.unlink(log)
        return run([MULTILANE, "run", "--db", mdb] + args + ["--"] + command, env=dict(env, **(extra_env or {})),
                   check=check)

    def folder_of(p):
        m = re.search(r"MPS: a private daemon serves this job \((\S+)/pipe\)", p.stderr)
        return m.group(1) if m else None

    p = job([], ["mpirun", "-np", "2", "printenv", "CUDA_MPS_PIPE_DIRECTORY"])
    folder = folder_of(p)
    expect(folder is not None, "a profile measured under MPS starts a private daemon", p)
    expect(p.stdout.split() == [folder + "/pipe"] * 2, "both ranks are pointed at its pipe folder", p)
    expect(open(log).read() == "start {0}/pipe\nget_server_list {0}/pipe\nquit {0}/pipe\n".format(folder),
           "the daemon is started there and told to quit when the job ends", open(log).read())
    expect(not os.path.exists(folder), "its folder is removed after the job", folder)
    p = job(["--dry-run"], ["mpirun", "-np", "2", "true"])
    expect("-x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY" in p.stdout and "mps: a private daemon" in p.stdout
           and not os.path.exists(log), "mpirun is told to pass the daemon's folders on to remote ranks", p)

    p = job([], ["sh", "-c", "exit 3"], check=False)
    expect(p.returncode == 3 and open(log).read().endswith("quit %s/pipe\n" % folder_of(p))
           and not os.path.exists(folder_of(p) or "/"),
           "the job's own exit status comes back, and the daemon still quits", p)

    def started(command):
        """`run` of `command` in a session of its own (a terminal's job) once its daemon answers."""
        if os.path.exists(log):
            os.unlink(log)
        proc = subprocess.Popen([MULTILANE, "run", "--db", mdb, "--"] + command, env=env, start_new_session=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(300):
            if os.path.exists(log) and "get_server_list" in open(log).read():
                break
            time.sleep(0.1)
        expect(os.path.exists(log), "the daemon of `run` started")
        return proc, re.search(r"start (\S+)/pipe", open(log).read()).group(1)

    # kill (SIGTERM) and SIGUSR1 go to multilane alone and are passed on; a
    # closed terminal's SIGHUP reaches the whole job (os.killpg), as does a
    # dropped ssh session's.
    for sig, whole_job in ((signal.SIGTERM, False), (signal.SIGUSR1, False), (signal.SIGHUP, True)):
        proc, folder = started(["sleep", "60"])
        time.sleep(0.5)  # let the job start; the test passes without it too
        if whole_job:
            os.killpg(proc.pid, sig)
        else:
            proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
        expect(proc.returncode == 128 + sig and open(log).read().endswith("quit %s/pipe\n" % folder)
               and not os.path.exists(folder),
               "%s: the job ends, and the daemon quits after it and its folder goes (exit status %d, control log "
               "%r)\n%s" % (signal.Signals(sig).name, proc.returncode, open(log).read(), err))

    # SIGKILL: the job outlives multilane, and so does the daemon, for it.
    pid_file = os.path.join(tmp, "job.pid")
    for cleaner in ("run", "doctor"):
        # (The job's output away from the test's pipes, which it would keep open.)
        proc, folder = started(["sh", "-c", "echo $$ > %s; exec sleep 60 >/dev/null 2>&1" % pid_file])
        for _ in range(300):  # the job runs, and the record names it
            if (os.path.exists(pid_file) and open(pid_file).read().strip()
                    and "\njob " in open(folder + "/owner").read()):
                break
            time.sleep(0.1)
        job_pid = int(open(pid_file).read())
        os.unlink(pid_file)
        proc.kill()
        proc.communicate(timeout=60)
        expect(os.path.exists(folder + "/owner"), "a run killed with SIGKILL leaves its folder and record", folder)
        p = job(["--ranks-per-gpu", "1"], ["true"])
        expect(os.path.exists(folder) and not os.path.exists(log) and "MPS" not in p.stderr,
               "a later run leaves the daemon of a job that still runs to it", p)
        os.kill(job_pid, signal.SIGKILL)
        for _ in range(300):  # ended (a zombie where nothing reaps it counts as ended)
            try:
                if open("/proc/%d/stat" % job_pid).read().rsplit(")", 1)[1].split()[0] == "Z":
                    break
            except (OSError, IndexError):
                break
            time.sleep(0.1)
        if cleaner == "run":
            p = job(["--ranks-per-gpu", "1"], ["true"])
            said = p.stderr
        else:
            p = run([MULTILANE, "doctor"], env=env, check=False)
            said = p.stdout
        expect(os.path.exists(log) and open(log).read() == "quit %s/pipe\n" % folder and not os.path.exists(folder)
               and ("stopped the daemon in " + folder) in said and ("pid %d" % proc.pid) in said,
               "once the job has ended too, the next %s tells the daemon to quit and removes its folder" % cleaner, p)

    p = job(["--mps", "no"], ["printenv", "CUDA_MPS_PIPE_DIRECTORY"], check=False)
    expect(p.returncode == 1 and not os.path.exists(log) and "drop --mps no" in p.stderr,
           "--mps no runs the job without a daemon and says what it loses", p)
    p = job(["--ranks-per-gpu", "1"], ["printenv", "CUDA_MPS_PIPE_DIRECTORY"], check=False)
    expect(p.returncode == 1 and not os.path.exists(log) and "MPS" not in p.stderr,
           "one rank per GPU needs no daemon", p)
    p = job([], ["printenv", "CUDA_MPS_PIPE_DIRECTORY"], extra_env={"CUDA_MPS_PIPE_DIRECTORY": "/run/site-mps"})
    expect(p.stdout.strip() == "/run/site-mps" and not os.path.exists(log) and "already running" in p.stderr,
           "a daemon the job already reaches serves it", p)
    p = job([], ["printenv", "CUDA_MPS_PIPE_DIRECTORY"], extra_env={"FAIL_START": "1"}, check=False)
    expect(p.returncode == 1 and "the job runs without it" in p.stderr and os.path.exists(log),
           "a daemon that does not start leaves the job to run without it, with a line", p)
    escape = "/run/\x1b]0;owned\x07mps"
    p = job([], ["true"], extra_env={"CUDA_MPS_PIPE_DIRECTORY": escape, "MULTILANE_MPS_CONTROL": control + "\x1b[2J"})
    expect("\x1b" not in p.stderr and "\\x1b]0;owned\\x07mps" in p.stderr,
           "the MPS line echoes outside text without its control bytes", p)
    p = job(["--dry-run", "--mps", "yes"], ["true"], extra_env={"MULTILANE_MPS_CONTROL": control + "\x1b[2J"})
    expect("\x1b" not in p.stdout and "mps-control\\x1b[2J)" in p.stdout, "and so does --dry-run", p)
    p = job(["--mps", "maybe"], ["true"], check=False)
    expect(p.returncode != 0 and "--mps 'maybe' must be auto, yes or no" in p.stderr, "a bad --mps is named", p)


TESTS = {
    "run_mps": test_run_mps,
    "tune_repeat_launch": test_tune_repeat_launch,
    "history": test_history,
    "run_partition_profile": test_run_partition_profile,
    "hostile_files": test_hostile_files,
    "doctor": test_doctor,
    "tune_no_shell_and_no_leftovers": test_tune_no_shell_and_no_leftovers,
    "tune_oversubscribed": test_tune_oversubscribed,
    "system_snapshot": test_system_snapshot,
    "tune_then_run": test_tune_then_run,
    "auto_follows_profile": test_auto_follows_profile,
    "second_user_reuses_profile": test_second_user_reuses_profile,
    "broken_databases": test_broken_databases,
    "concurrent_tuners": test_concurrent_tuners,
    "export_import": test_export_import,
    "tune_ranks_per_gpu": test_tune_ranks_per_gpu,
}

if __name__ == "__main__":
    tmp = tempfile.mkdtemp(prefix="multilane-e2e-")
    try:
        TESTS[TEST](tmp)
        print("PASSED: " + TEST)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
