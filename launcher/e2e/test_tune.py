#!/usr/bin/env python3
"""End to end, the launcher: `multilane tune`: a tune then a run, no shell and
no leftovers, an oversubscribed machine, ranks per GPU, tuners at once.

    test_tune.py MULTILANE BENCH CASE  (or --list: the case names)

The shared steps are in launcher_fixtures.py."""
import json
import os
import re
import sqlite3
import subprocess
import sys
import threading
import time

from launcher_fixtures import MULTILANE, BENCH, SOURCE, ENV, run, tune, tune_folders, profiles, main
import e2e  # noqa: E402  (tests/e2e.py: launcher_fixtures puts it on the path)
from e2e import expect  # noqa: E402


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
    expect(p.returncode != 0 and "cannot be given with several --ranks-per-gpu values" in p.stderr,
           "--np with a list is refused", p)

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
    job = os.path.join(SOURCE, "tests", "report", "fixtures", "issue30_points.json")
    p = run([MULTILANE, "tune", "--memory", "host", "--ranks-per-gpu", "1,2", "--virtual-nodes", "2",
             "--budget", "5", "--sizes", "4K:64K", "--db", db, "--allow-oversubscribed", "--weights", job],
            timeout=600)
    expect(re.search(r"ranks per GPU +job_us +bins", p.stdout) is not None and
           "each bin priced at its mean message size" in p.stdout and "weights=job-report" in p.stdout,
           "tune --weights prices the job's bins and says so", p)
    expect("lie beyond the tuned sizes and were extrapolated" in p.stdout,
           "the job's 4M and 32M bins, beyond the tuned 64K, are said to be extrapolated", p)


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


def test_tune_session_folder_of_its_own(tmp):
    """Open MPI's mpirun makes its session folder in TMPDIR (ORTE:
    ompi.HOST.UID, shared by all of a user's launches, which can race for it
    and fail with "mkdir ... File exists"; PRRTE: one per launch).  A tune's
    launches make theirs in the tune's own folder: with TMPDIR naming a plain
    file, where mpirun can make no folder, a tune kept in a folder of its own
    (--keep) runs, and its launches leave no session folder there."""
    not_a_folder = os.path.join(tmp, "not-a-folder")
    with open(not_a_folder, "w") as f:
        f.write("TMPDIR names this file\n")
    env = dict(ENV, TMPDIR=not_a_folder)
    for name in ("OMPI_MCA_orte_tmpdir_base", "PRTE_MCA_prte_tmpdir_base"):
        env.pop(name, None)
    # The premise holds: the family's launcher itself fails in that TMPDIR.
    bare = run(["mpirun", "-np", "1", "true"], env=env, check=False, timeout=120)
    expect(bare.returncode != 0, "mpirun fails where TMPDIR is a file (no session folder can be made)", bare)
    db, kept = os.path.join(tmp, "own.db"), os.path.join(tmp, "kept")
    p = run([MULTILANE, "tune", "--np", "2", "--budget", "3", "--sizes", "4K:16K", "--db", db, "--keep", kept],
            env=env, check=False, timeout=600)
    expect(p.returncode == 0, "the tune's launches make their session folders in its own folder", p)
    expect(len(profiles(db)) == 1, "the tune stored its profile")
    sessions = [f for f in os.listdir(kept) if f.startswith(("ompi.", "prte", "pmix"))]
    expect(not sessions, f"the launches removed their session folders from {kept}: {sessions}")


if __name__ == "__main__":
    sys.exit(main(globals()))
