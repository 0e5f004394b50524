#!/usr/bin/python3
"""Slurm end to end: the plugin's options and modes: errors, plugstack keys,
without the cli_filter, report, default=auto.

    test_options.py CASE ARGS...  (or --list: the case names)

The local Slurm, the options and the shared steps are in slurm_fixtures.py."""
import json
import os
import sys

from slurm_fixtures import ARGS, Slurm, publish_lane_profile, rank_lines, PROBE_JOB, main
from e2e import check, run  # noqa: E402  (tests/e2e.py: slurm_fixtures puts it on the path)


def case_report_mode(root):
    """--multilane=report:DIR makes the library write the job report into DIR,
    which `multilane report` reads."""
    s = Slurm(root, {})
    try:
        publish_lane_profile(s.db)
        reports = os.path.join(root, "reports")
        os.makedirs(reports)
        # The job history (issue 29): the user's database is where the job's
        # own variables say; the plugin has the resolver make its inbox.
        env = dict(s.env, MULTILANE_USER_DB=os.path.join(root, "state", "user.db"))
        run(["srun", "--gpus=2", f"--multilane=report:{reports}", ARGS.probe, "3"], env=env, cwd=root)
        files = [f for f in os.listdir(reports) if f.endswith(".json")]
        check(len(files) == 1, f"expected one report in {reports}, found {files}")
        doc = json.load(open(os.path.join(reports, files[0])))
        check(doc.get("format") == "multilane-job-report", f"not a job report: {doc.get('format')}")
        check(doc["job"]["ranks"] == 4, f"the report counts {doc['job']['ranks']} ranks, not 4")
        calls = sum(b["calls"] for b in doc["bins"])
        check(calls == 3, f"the report counts {calls} allreduce calls of rank 0, not 3")
        r = run([ARGS.multilane, "report", os.path.join(reports, files[0])])
        check("allreduce" in r.stdout, r.stdout)
        inbox = os.path.join(root, "state", "history")
        check(os.listdir(inbox) == files, f"the job's report is not in the history inbox {inbox}: {os.listdir(inbox)}")
        h = json.loads(run([ARGS.multilane, "history", "--json"], env=env).stdout)
        check(len(h["runs"]) == 1 and h["runs"][0]["key"] == doc["job"]["key"] and h["runs"][0]["ranks"] == 4 and
              sum(b[2] for b in h["runs"][0]["histogram"]) == 3, f"the job history does not hold the job: {h}")
    finally:
        s.stop()


def case_default_auto(root):
    """default=auto: jobs get multilane without the option (layout included);
    --multilane=off opts out."""
    s = Slurm(root, {"default": "auto"})
    try:
        publish_lane_profile(s.db)
        p, out = s.sbatch(["--gpus=2"], PROBE_JOB.format(probe=ARGS.probe), name="default")
        rows = rank_lines(out)
        check(len(rows) == 4 and all(r["preload"] == "1" and r["lane"] == "5" for r in rows),
              f"default=auto did not give the tuned layout and the library: {rows}")
        p = s.cmd(["srun", "--gpus=2", "-n", "2", "--multilane=off", ARGS.probe, "2"])
        rows = rank_lines(p.stdout)
        check(len(rows) == 2 and all(r["preload"] == "0" and r["calls"] == "0" for r in rows),
              f"--multilane=off still injected the library: {rows}")
    finally:
        s.stop()


def case_option_errors(root):
    """Bad --multilane values stop srun/sbatch with a message naming the item;
    --multilane=help prints the grammar."""
    s = Slurm(root, {})
    try:
        p = s.cmd(["srun", "--multilane=fast", "true"], check_rc=False)
        check(p.returncode != 0, "srun accepted --multilane=fast")
        check("unknown item 'fast'" in p.stderr and "ranks-per-gpu:N" in p.stderr, p.stderr)
        p = s.cmd(["srun", "--multilane=ranks-per-gpu:0", "true"], check_rc=False)
        check(p.returncode != 0 and "1 to 64" in p.stderr, p.stderr)
        job = os.path.join(root, "j.sh")
        with open(job, "w") as f:
            f.write("#!/bin/bash\ntrue\n")
        p = s.cmd(["sbatch", "--multilane=report:", job], check_rc=False)
        check(p.returncode != 0 and "report:" in p.stderr, p.stderr)
        p = s.cmd(["srun", "--multilane=help"], check_rc=False)
        check(p.returncode == 0 and "ranks-per-gpu:N" in p.stdout, p.stdout + p.stderr)
        p = s.cmd(["sbatch", "--multilane=help", job], check_rc=False)  # sbatch reads the script first
        check(p.returncode == 0 and "report[:DIR]" in p.stdout, p.stdout + p.stderr)
    finally:
        s.stop()


def case_unknown_plugstack_key(root):
    """An unknown key in plugstack.conf is an error that names the key."""
    s = Slurm(root, {"databse": "/x.db"})
    try:
        p = s.cmd(["srun", "--multilane", "true"], check_rc=False)
        check(p.returncode != 0, "srun ran with a plugstack.conf error in a required plugin")
        check("unknown key 'databse'" in p.stderr and "database" in p.stderr, p.stderr)
    finally:
        s.stop()


def case_without_cli_filter(root):
    """Without the cli_filter the plugin maps the step's own tasks and says
    how to get the tuned layout."""
    s = Slurm(root, {}, cli_filter=False)
    try:
        publish_lane_profile(s.db)
        p = s.cmd(["srun", "--gpus=2", "-n", "2", "--multilane", ARGS.probe, "2"])
        rows = rank_lines(p.stdout)
        check([r["gpu"] for r in rows] == ["0", "1"], f"GPU binding {rows}")
        check(all(r["lane"] == "2" for r in rows), "the library did not run the profile")
        check("--ntasks-per-gpu=2" in p.stderr + p.stdout, "no hint about the tuned layout")
    finally:
        s.stop()


if __name__ == "__main__":
    sys.exit(main(globals()))
