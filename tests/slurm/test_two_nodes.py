#!/usr/bin/python3
"""Slurm end to end: two nodes (two slurmd on this machine, each in a network
namespace of its own with two rails): the MPI suite, a job, a tune, a second
node that differs, the system's algorithms.  Every step that moves MPI data
between the nodes is checked to have crossed the rails (their byte counters):
each rail where its allreduces are 256 KiB or more, which Open MPI stripes
over both; the rails together for the MPI suite's mostly small messages.

    test_two_nodes.py CASE ARGS...  (or --list: the case names)

The local Slurm, the options and the shared steps are in slurm_fixtures.py."""
import json
import os
import re
import sys
import tempfile
import time

from slurm_fixtures import (ARGS, Slurm, probe_env, publish_lane_profile, publish_profile,
    rank_lines, multilane_lines, PROBE_JOB, main, write_mps_stand_in)
from e2e import check, log, run  # noqa: E402  (tests/e2e.py: slurm_fixtures puts it on the path)


def case_two_nodes_mpi_suite(root):
    """Issue 14, item 2: the library on two real Slurm nodes (no virtual
    nodes): the MPI test suite (every algorithm forced and intercepted, every
    predefined type and op, sub-communicators of one node and of both,
    results against PMPI_Allreduce and bitwise equal on all ranks, the
    library's counters) under srun -N2 --mpi=pmix, with mla_comm_layout
    required to say 2 nodes; then each algorithm through the intercepted
    MPI_Allreduce (MULTILANE_ALGO), and an irregular 3 + 2 layout."""
    s = Slurm(root, {}, nodes=2)
    try:
        p = s.cmd(["srun", "-N2", "-n2", "hostname"])
        check(sorted(p.stdout.split()) == ["node1", "node2"], f"the tasks' host names: {p.stdout!r}")
        # Slurm's own placement of -N2 -n4 on these 8-CPU nodes is 3 + 1:
        # the regular runs ask for 2 per node.
        two = ["--ntasks-per-node=2"]
        runs = [("regular 2 + 2", 4, None, "", two), ("lane", 4, "lane", "Intercept.*:Layout.*:Communicators.*", two),
                ("hier", 4, "hier", "Intercept.*:Layout.*:Communicators.*", two),
                ("split", 4, "split", "Intercept.*:Layout.*:Communicators.*", two),
                ("irregular (Slurm's placement of 5 tasks)", 5, None, "", [])]
        for what, n, algo, flt, placement in runs:
            before = s.rail_counters()
            env = dict(s.env)
            env["MLA_TEST_EXPECT_NODES"] = "2"
            if algo:
                env["MULTILANE_ALGO"] = algo
            args = ["srun", "-N2", f"-n{n}"] + placement + ["--mpi=pmix", ARGS.mpi_test] + ([f"--gtest_filter={flt}"] if flt else [])
            q = run(args, check=False, env=env, timeout=300, cwd=root)
            text = q.stdout + q.stderr
            log(f"--- two nodes, {what}: exit {q.returncode}\n" + "\n".join(
                l for l in text.splitlines() if "PASSED" in l or "FAILED" in l or l.startswith("[rank")))
            check(q.returncode == 0 and "[  PASSED  ]" in text and "FAILED" not in text,
                  f"two nodes, {what}: the MPI suite failed (exit {q.returncode}):\n{text[-4000:]}")
            check(not re.search(r"^\[  SKIPPED \]", text, re.M), f"two nodes, {what}: a test skipped itself")
            # Mostly messages below Open MPI's TCP eager limit: one rail may carry them all.
            s.check_rails(before, f"two nodes, {what}", every_rail=False)
        # What the library itself says about the layout, and that lane ran.
        env = dict(s.env)
        env["LD_PRELOAD"] = ARGS.library
        env["MULTILANE_ALGO"] = "lane"
        before = s.rail_counters()
        q = run(["srun", "-N2", "-n4"] + two + ["--mpi=pmix", ARGS.probe, "3"], env=env, timeout=300, cwd=root)
        s.check_rails(before, "two nodes, the probe under lane")
        rows = rank_lines(q.stdout)
        check(len(rows) == 4 and [r["host"] for r in rows] == ["node1", "node1", "node2", "node2"],
              f"block distribution over the two nodes: {rows}")
        check(all(r["ok"] == "1" and r["nodes"] == "2" and r["lane"] == "3" for r in rows),
              f"mla_comm_layout must say 2 nodes and every call run lane: {rows}")
    finally:
        s.stop()


def case_two_nodes_sbatch_multilane(root):
    """Issue 14, item 3: sbatch -N2 --gpus-per-node=2 --multilane=report:DIR
    with srun --mpi=pmix inside, on two real Slurm nodes: the profile's 1 task
    per GPU on each node (4 tasks; 8 ranks on this 2-core machine made Open
    MPI's TCP connections time out), GPUs and cores bound per node, one MPS
    daemon (the stand-in) per node started by that node's prolog and stopped
    by its epilog, every allreduce run with the profile's algorithm across
    the nodes (the library sees 2 nodes), and one job report naming both
    hosts.  The nodes share this machine's file system, so mps_dir names the
    host (%h)."""
    stand_in, record = write_mps_stand_in(
        root, "host=$(hostname) pipe=$CUDA_MPS_PIPE_DIRECTORY gpus=$CUDA_VISIBLE_DEVICES", "host=$(hostname)")
    mps_parent = os.path.join(root, "mps")
    os.makedirs(mps_parent)
    os.chmod(mps_parent, 0o755)
    reports = os.path.join(root, "reports")
    os.makedirs(reports)
    s = Slurm(root, {"mps": "yes", "mps_control": stand_in, "mps_dir": mps_parent + "/%h"}, nodes=2)
    try:
        publish_profile(s.db, ["host 0 inf lane"], 1, " ranks_per_gpu=1")
        # The job history: the report goes to the inbox beside the user's
        # database, which the job's own variables name (as in report_mode).
        s.env["MULTILANE_USER_DB"] = os.path.join(root, "state", "user.db")
        body = ("echo batch ntasks=$SLURM_NTASKS nodes=$SLURM_JOB_NUM_NODES\n"
                + PROBE_JOB.format(probe=ARGS.probe)
                + "srun bash -c 'echo task $SLURM_PROCID host=$(hostname) pipe=$CUDA_MPS_PIPE_DIRECTORY'\n")
        before = s.rail_counters()
        p, out = s.sbatch(["-N2", "--gpus-per-node=2", f"--multilane=report:{reports}"], body, name="two-nodes")
        check(p.returncode == 0, "the job failed")
        s.check_rails(before, "sbatch -N2 --multilane")
        check("batch ntasks=4 nodes=2" in out, "the allocation did not get 1 task per GPU on 2 nodes (4 tasks)")
        rows = rank_lines(out)
        check(len(rows) == 4, f"expected 4 ranks, got {len(rows)}")
        check([r["host"] for r in rows] == ["node1"] * 2 + ["node2"] * 2, f"hosts {[r['host'] for r in rows]}")
        check([r["gpu"] for r in rows] == ["0", "1"] * 2, f"GPU binding {[r['gpu'] for r in rows]}")
        for node in ("node1", "node2"):
            cpus = [r["cpus"] for r in rows if r["host"] == node]
            check(len(set(cpus)) > 1, f"{node}: tasks were not bound to CPU blocks: {cpus}")
        for r in rows:
            check(r["ok"] == "1" and r["preload"] == "1" and r["nodes"] == "2",
                  f"rank {r['rank']}: ok={r['ok']} preload={r['preload']} nodes={r['nodes']} (want 2 nodes)")
            check(r["calls"] == "5" and r["lane"] == "5", f"rank {r['rank']}: calls={r['calls']} lane={r['lane']}")
        # One daemon per node, each started and stopped on its own node.
        deadline = time.time() + 30
        calls = ""
        while time.time() < deadline:  # the epilogs run after the job is reported done
            path = os.path.join(record, "calls")
            calls = open(path).read() if os.path.exists(path) else ""
            if calls.count("quit") == 2:
                break
            time.sleep(0.5)
        log(calls)
        for node in ("node1", "node2"):
            starts = re.findall(rf"^start host={node} pipe=(\S+) gpus=0,1$", calls, re.M)
            check(len(starts) == 1 and starts[0].startswith(f"{mps_parent}/{node}/job-"),
                  f"{node}: expected one daemon in its own mps_dir, got {starts} in {calls!r}")
            check(calls.count(f"quit host={node}") == 1, f"{node}: the epilog did not stop its daemon: {calls!r}")
            tasks = re.findall(rf"^task \d+ host={node} pipe=(\S+)$", out, re.M)
            check(len(tasks) == 2 and set(tasks) == {starts[0]}, f"{node}: tasks not pointed at its daemon: {tasks}")
        # One job report for the whole job, naming both hosts.
        files = [f for f in os.listdir(reports) if f.endswith(".json")]
        check(len(files) == 1, f"expected one job report in {reports}, found {files}")
        doc = json.load(open(os.path.join(reports, files[0])))
        check(doc["job"]["ranks"] == 4 and doc["job"]["nodes"] == 2 and sorted(doc["job"]["hosts"]) == ["node1", "node2"],
              f"the job report's job: {doc['job']}")
        r = run([ARGS.multilane, "report", os.path.join(reports, files[0])])
        check("node1" in r.stdout and "node2" in r.stdout, f"multilane report does not name both hosts:\n{r.stdout}")
        inbox = os.path.join(root, "state", "history")
        check(os.path.isdir(inbox) and os.listdir(inbox) == files,
              f"the job's report is not in the history inbox {inbox} of the job's MULTILANE_USER_DB: "
              f"{os.listdir(inbox) if os.path.isdir(inbox) else 'no such folder'}")
    finally:
        s.stop()


def case_two_nodes_tune_partition(root):
    """Issue 14, item 4: `multilane tune --partition` measures a node type
    that has two nodes on two of them (the step between nodes over the
    network, no virtual nodes); the profile says so and a job gets it.
    Issue 47, item 7: --keep DIR keeps the probe job's script, output and
    database and its tune's plan and probe result."""
    s = Slurm(root, {}, nodes=2)
    try:
        env = dict(s.env)
        env.update(probe_env())
        kept = os.path.join(root, "kept")
        before = s.rail_counters()
        p = run([ARGS.multilane, "tune", "--partition", "gpu", "--db", s.db, "--budget", "4", "--sizes", "64K:256K",
                 "--np", "2", "--memory", "host", "--keep", kept], env=env, timeout=600, cwd=root)
        s.check_rails(before, "tune --partition's probe job on two nodes")
        text = p.stdout + p.stderr
        log(text)
        names = sorted(os.listdir(kept))
        check("tune-node1.sh" in names and "tune-node1.db" in names
              and any(re.fullmatch(r"tune-node1-\d+\.out", n) for n in names), f"--keep lacks the job's files: {names}")
        check(os.path.isfile(os.path.join(kept, "tune-node1", "plan.json"))
              and os.path.isfile(os.path.join(kept, "tune-node1", "result.json")),
              f"--keep lacks the plan and the probe's result (tune-node1/): {names}")
        check(re.search(r"\(8 CPUs, gres \S+, 2 node\(s\)\): submitted batch job \d+ on 2 of its nodes, node1,node2 \(", text),
              "the node type's probe job did not go to its two nodes")
        check("MULTILANE_RANKS_PER_NODE" not in text, "virtual nodes were used on real nodes")
        r = run([ARGS.multilane, "resolve", "--db", s.db, "--partition", "gpu", "--any-node-type"])
        check("found=yes" in r.stdout and "tuned_nodes=2\n" in r.stdout and "tuned_nodes_virtual=no\n" in r.stdout,
              r.stdout)
        check(re.search(r"^profile=multilane-profile 1 .*\bnodes=2\b.*\branks=4\b", r.stdout, re.M), r.stdout)
        show = run([ARGS.multilane, "show", "--db", s.db], env=env).stdout
        check("measured on 2 real node(s)" in show, show)
        # A job on both nodes gets the profile.
        before = s.rail_counters()
        q = s.cmd(["srun", "-N2", "--ntasks-per-node=2", "--multilane", "--mpi=pmix", ARGS.probe, "3"])
        # The rails together: which algorithm the tune chose depends on this
        # machine's timing, and under some (seen: lane transport=shm, which
        # won at 256K) every message between the nodes stays below Open MPI's
        # TCP eager limit, so one rail carries them all (check_rails).
        s.check_rails(before, "a job on both nodes with the tuned profile", every_rail=False)
        rows = rank_lines(q.stdout)
        check(len(rows) == 4 and all(x["preload"] == "1" and x["ok"] == "1" and x["nodes"] == "2" for x in rows),
              f"the job on two nodes did not run with the profile: {rows}")
    finally:
        s.stop()


# The plugin's bound on a node's look-up in the cases where one node differs:
# node1's real look-up (hwloc, each family's MPI version) must end within it
# on a busy machine, so that only node2's stand-in meets it.
RESOLVE_TIMEOUT_S = 10


def two_nodes_one_node_differs(root, node2_behaviour, why_pattern, preload_on_node2):
    """Issue 23: a two-node `srun --multilane --mpi=pmix` step whose second
    node's look-up (a stand-in `multilane` that forwards to the real one on
    node1) fails in one way: the job's exact results on every rank, exactly
    one line saying why (from the library's start-up agreement, which sees
    every rank), and no algorithm call on any rank."""
    stand_in = os.path.join(root, "multilane-node2")
    with open(stand_in, "w") as f:
        f.write(f"""#!/bin/sh
if [ "$(hostname)" = node2 ]; then
{node2_behaviour}
fi
exec {ARGS.multilane} "$@"
""")
    os.chmod(stand_in, 0o755)
    s = Slurm(root, {"multilane": stand_in, "resolve_timeout": str(RESOLVE_TIMEOUT_S)}, nodes=2)
    try:
        publish_lane_profile(s.db)
        env = dict(s.env)
        env["MULTILANE_ALGO"] = "lane"
        before = s.rail_counters()
        q = run(["srun", "-N2", "-n4", "--ntasks-per-node=2", "--multilane", "--mpi=pmix", ARGS.probe, "3"],
                check=False, env=env, timeout=300, cwd=root)
        text = q.stdout + q.stderr
        log(text)
        check(q.returncode == 0, f"the job failed (exit {q.returncode})")
        s.check_rails(before, "the job that is not all in (MPI's own allreduce between the nodes)")
        rows = rank_lines(q.stdout)
        check(len(rows) == 4 and [r["host"] for r in rows] == ["node1", "node1", "node2", "node2"],
              f"block distribution over the two nodes: {rows}")
        check(all(r["ok"] == "1" for r in rows), f"a rank got a wrong sum: {rows}")
        check(all(r["lane"] == "0" for r in rows), f"an algorithm ran in a job that is not all in: {rows}")
        check([r["preload"] for r in rows] == ["1", "1", preload_on_node2, preload_on_node2],
              f"the library on the nodes: {rows}")
        lines = [l for l in multilane_lines(text) if "warning" in l]
        check(len(lines) == 1, f"expected one warning line saying why, got {lines}")
        check(re.search(why_pattern, lines[0]), f"the line does not say why ({why_pattern}): {lines[0]}")
    finally:
        s.stop()


def case_two_nodes_second_node_without_profile(root):
    two_nodes_one_node_differs(
        root, "  echo found=no; echo 'why=no profile for node type of node2 (test)'; echo library_loads=yes; exit 0",
        r"every rank runs unchanged: rank 2: the launcher turned multilane off .*no profile for node type of node2",
        "1")


def case_two_nodes_second_node_resolver_times_out(root):
    two_nodes_one_node_differs(
        root, "  exec sleep 600",
        r"every rank runs unchanged: rank 2: the launcher turned multilane off .*timed out after "
        rf"{RESOLVE_TIMEOUT_S} s", "1")


def case_two_nodes_second_node_library_does_not_load(root):
    two_nodes_one_node_differs(
        root, f"  {ARGS.multilane} \"$@\" | sed 's/^library_loads=.*/library_loads=no/; s/^library_error=.*/library_error=test: not loadable here/'; exit 0",
        r"ranks 2 and 3 of 4 run without multilane", "0")


def han_outranks_tuned():
    """Whether this Open MPI's coll/han outranks coll/tuned (ompi_info, not
    multilane): han then takes every communicator that spans machines."""
    out = run(["ompi_info", "--parsable", "--param", "coll", "all", "--level", "9"]).stdout
    prio = dict(re.findall(r"^mca:coll:\w+:param:coll_(han|tuned)_priority:value:(-?\d+)$", out, re.M))
    check("tuned" in prio, f"ompi_info lists no coll_tuned_priority:\n{out[-2000:]}")
    return int(prio.get("han", "-1")) > int(prio["tuned"])


def case_two_nodes_system_algorithms_observed(root):
    """Issue 28 on two real nodes: mlprobe's `passthrough mpi=NAME` under
    srun -N2, seen from inside Open MPI (tests/sysalgo's shim counts
    coll/tuned's allreduce functions on communicators other than
    MPI_COMM_WORLD).  Where coll/tuned runs the call (Open MPI 4.1: han's
    priority 0), every rank counts exactly the calls of each algorithm the
    probe made.  Where coll/han outranks tuned (Open MPI 5), han takes a
    communicator that spans machines and a forced tuned algorithm would not
    run: the probe must refuse each one and say why, not time han under
    ring's name (the counts are not compared there: han's own steps call
    tuned's functions on communicators of its own; without the refusal,
    this case's tuned branch counted 3 rings of the 30 claimed)."""
    sys.path.insert(0, os.path.join(ARGS.source, "tests", "sysalgo"))
    from coll_counts import take_counts
    from probe_choice_observed import PLAN, SYSTEM, expected_calls
    han = han_outranks_tuned()
    s = Slurm(root, {}, nodes=2)
    try:
        work = tempfile.mkdtemp(prefix="sysalgo-", dir=root)
        folder, plan, out = os.path.join(work, "counts"), os.path.join(work, "plan.json"), os.path.join(work, "out.json")
        os.mkdir(folder)
        with open(plan, "w") as f:
            json.dump(PLAN, f)
        env = dict(s.env)
        env.pop("MULTILANE_RANKS_PER_NODE", None)
        before = s.rail_counters()
        q = run(["srun", "-N2", "-n4", "--ntasks-per-node=2", "--mpi=pmix",
                 f"--export=ALL,LD_PRELOAD={ARGS.coll_counter},COLL_BASE_COUNTS_DIR={folder}",
                 ARGS.mlprobe, "--plan", plan, "--out", out, "--exhaustive"], check=False, env=env, timeout=300, cwd=root)
        log(q.stdout[-3000:] + q.stderr[-3000:])
        check(q.returncode == 0, f"mlprobe on two nodes exited with status {q.returncode}")
        s.check_rails(before, "mlprobe on two nodes")
        with open(out) as f:
            result = json.load(f)
        counts = take_counts(folder, 4)
        check(result["layout"]["nodes"] == 2, f"the probe's layout is not two nodes: {result['layout']}")
        described = result["system_algorithms"]
        if han:
            refused = described.get("refused", {})
            check(described["probed"] == [] and all("coll/han" in refused.get(n, "") for n in ("ring", "recursive_doubling")),
                  f"coll/han outranks coll/tuned here: every mpi=NAME must be refused, naming han: {described}")
            for size in result["sizes"]:
                for c in size["candidates"]:
                    valid_ok = c["valid"] if c["candidate"] == "passthrough" else not c["valid"] and "coll/han" in c["error"]
                    check(valid_ok, f"{size['bytes']} B: {c}")
            log("two nodes, coll/han over coll/tuned: mpi=ring and mpi=recursive_doubling refused, naming han")
        else:
            check(described["probed"] == ["ring", "recursive_doubling"], f"both must be probed: {described}")
            for candidate, function in SYSTEM.items():
                want = expected_calls(result, candidate)
                seen = [c[function] for c in counts]
                check(seen == [want] * 4, f"{candidate}: expected {want} calls of {function} per rank, counted {seen}")
            log(f"two nodes, coll/tuned: each rank ran the calls of {list(SYSTEM)} the probe made")
    finally:
        s.stop()


if __name__ == "__main__":
    sys.exit(main(globals()))
