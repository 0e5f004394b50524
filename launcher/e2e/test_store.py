#!/usr/bin/env python3
"""End to end, the launcher: the profile store: a second user, broken
databases, export and import, hostile files, the system snapshot.

    test_store.py MULTILANE BENCH CASE  (or --list: the case names)

The shared steps are in launcher_fixtures.py."""
import json
import os
import pwd
import re
import sqlite3
import sys
import time

from launcher_fixtures import MULTILANE, BENCH, SOURCE, ENV, run, sha, tune, profiles, main
from e2e import expect  # noqa: E402


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
    # show's line of the profile: ranks per GPU where its node type has GPUs, "no GPU" where it has none.
    con = sqlite3.connect(good)
    gpus = len(json.loads(con.execute("SELECT fingerprint_json FROM node_types").fetchone()[0])["gpus"])
    con.close()
    p = run([MULTILANE, "show", "--db", good])
    said = re.search(r"^  profile 1: .* node\(s\), (no GPU|\d+ rank\(s\)/GPU), ", p.stdout, re.M)
    expect(said and (said.group(1) == "no GPU") == (gpus == 0),
           f"show says 'no GPU' exactly where the node type has none ({gpus} here)", p)
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
    report = os.path.join(SOURCE, "tests", "report", "fixtures", "known_job.json")
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


def test_withdraw(tmp):
    """Issue 47, item 6: a bad profile published over a good one of the same
    node type and partition: `show` marks the one in force (the one resolve
    picks), `withdraw` takes the bad one out of the system database (root's,
    like every write to it), and resolve then picks the good one."""
    os.chmod(tmp, 0o755)
    system_db = os.path.join(tmp, "shared", "profiles.db")
    env = dict(ENV, MULTILANE_SYSTEM_DB=system_db, MULTILANE_USER_DB=os.path.join(tmp, "user.db"), HOME=tmp)
    run([MULTILANE, "tune", "--np", "2", "--budget", "3", "--sizes", "4K:16K", "--system"], env=env, timeout=600)
    out = os.path.join(tmp, "doc.json")
    run([MULTILANE, "export", out, "--system"], env=env)
    doc = json.load(open(out))
    doc["profiles"] = [dict(doc["profiles"][0], tuned_at="2099-01-01T00:00:00Z", tuned_by="a bad tune")]
    json.dump(doc, open(out, "w"))
    run([MULTILANE, "import", out, "--system"], env=env)
    (good, _), (bad, _) = sorted(profiles(system_db))

    def in_force():
        r = run([MULTILANE, "resolve", "--db", system_db], env=env)
        return int(re.search(r"^profile_id=(\d+)$", r.stdout, re.M).group(1))

    def marks():
        js = json.loads(run([MULTILANE, "show", "--db", system_db, "--json"], env=env).stdout)
        return {p["id"]: p["in_force"] for p in js["databases"][0]["profiles"]}

    expect(in_force() == bad, "the newer (bad) profile is the one resolve picks")
    p = run([MULTILANE, "show", "--db", system_db], env=env)
    expect(re.search(r"by a bad tune in \d+ s; in force\n", p.stdout)
           and ("not in force: profile %d is" % bad) in p.stdout, "show marks the profile in force", p)
    expect(marks() == {good: False, bad: True}, "show --json marks the profile in force")

    p = run([MULTILANE, "withdraw", str(bad), "--system"], env=env, user="nobody", check=False)
    expect(p.returncode == 1 and len(profiles(system_db)) == 2, "another user cannot withdraw from the system database",
           p)
    p = run([MULTILANE, "withdraw", str(bad), "--system"], env=env)
    expect(("withdrew profile %d" % bad) in p.stderr and ("profile %d (tuned" % good) in p.stderr
           and "is now in force there" in p.stderr, "withdraw says what it removed and what is in force now", p)
    expect(in_force() == good, "a withdrawn profile is no longer resolved")
    expect(marks() == {good: True}, "show lists the good profile, in force")
    p = run([MULTILANE, "withdraw", str(bad), "--system"], env=env, check=False)
    expect(p.returncode == 1 and ("has no profile %d" % bad) in p.stderr and "multilane show --db" in p.stderr,
           "withdrawing it again names the file and how to list the ids", p)


if __name__ == "__main__":
    sys.exit(main(globals()))
