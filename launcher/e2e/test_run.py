#!/usr/bin/env python3
"""End to end, the launcher: `multilane run`: auto follows the profile, a
partition's profile.

    test_run.py MULTILANE BENCH CASE  (or --list: the case names)

The shared steps are in launcher_fixtures.py."""
import json
import os
import re
import sys

from launcher_fixtures import MULTILANE, BENCH, ENV, run, main
from e2e import expect  # noqa: E402


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


if __name__ == "__main__":
    sys.exit(main(globals()))
