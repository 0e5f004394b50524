#!/usr/bin/env python3
"""End to end, the launcher: `multilane history` and the job history.

    test_history.py MULTILANE BENCH CASE  (or --list: the case names)

The shared steps are in launcher_fixtures.py."""
import glob
import json
import os
import sys

from launcher_fixtures import MULTILANE, BENCH, ENV, run, main
from e2e import expect  # noqa: E402


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


def test_history_with_db(tmp):
    """Issue 44, item 4: `multilane run --db FILE` with its report on keeps the
    job's history with FILE (the folder history beside it), not in HOME's;
    `multilane history --db FILE` records it there and `multilane report --db
    FILE` reads the same place (a run recorded, a run still in the inbox)."""
    home, folder = os.path.join(tmp, "home"), os.path.join(tmp, "elsewhere")
    db, reports = os.path.join(folder, "mine.db"), os.path.join(tmp, "reports")
    os.makedirs(home)
    os.makedirs(reports)
    env = dict(ENV, HOME=home, MULTILANE_REPORT=reports)
    env.pop("XDG_STATE_HOME", None)
    if os.environ.get("MULTILANE_TEST_PRELOAD"):
        env["LD_PRELOAD"] = os.environ["MULTILANE_TEST_PRELOAD"]
    run([MULTILANE, "tune", "--np", "4", "--virtual-nodes", "2", "--budget", "3", "--sizes", "4K:16K", "--db", db,
         "--allow-oversubscribed"], env=env, timeout=600)
    job = ["mpirun", "-np", "4", "-x", "MULTILANE_RANKS_PER_NODE=2", BENCH, "-b", "4K", "-e", "16K", "-f", "4", "-n",
           "3", "-w", "1", "-a", "mpi,auto"]
    home_state = os.path.join(home, ".local", "state", "multilane")
    inbox = os.path.join(folder, "history")
    run([MULTILANE, "run", "--db", db, "--"] + job, env=dict(env, MULTILANE_JOB_KEY="with-db"))
    expect(len(os.listdir(inbox)) == 1, "the job's report went into the history beside --db: %s" % os.listdir(inbox))
    expect(not os.path.exists(home_state), "nothing in HOME's state folder: %s" % (
        os.listdir(home_state) if os.path.isdir(home_state) else ""))
    doc = json.loads(run([MULTILANE, "history", "--db", db, "--json"], env=env).stdout)
    expect(doc["inbox"] == inbox and doc["recorded"] == 1 and [r["key"] for r in doc["runs"]] == ["with-db"],
           "history --db records the run from the inbox beside FILE: %s" % doc)
    run([MULTILANE, "run", "--db", db, "--"] + job, env=dict(env, MULTILANE_JOB_KEY="with-db"))
    expect(len(os.listdir(inbox)) == 1, "the second report waits in the same inbox: %s" % os.listdir(inbox))
    (name,) = os.listdir(inbox)
    last = os.path.join(reports, name)  # the same name in the report folder and in the inbox
    a = json.loads(run([MULTILANE, "report", "--json", "--db", db, last], env=env).stdout)["jobs"][0]
    expect(a["history"]["known"] and len(a["history"]["runs"]) == 2,
           "report --db reads the run recorded in FILE and the one in its inbox: %s" % a["history"])
    a = json.loads(run([MULTILANE, "report", "--json", last], env=env).stdout)["jobs"][0]
    expect(not a["history"]["known"], "without --db the user's (empty) history is read: %s" % a["history"])
    expect(not os.path.exists(os.path.join(home_state, "history")), "HOME's history inbox was never made")


if __name__ == "__main__":
    sys.exit(main(globals()))
