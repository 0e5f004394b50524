#!/usr/bin/python3
"""Slurm end to end: fail open: a node without a usable profile, library or
resolver runs its job without multilane and says why.

    test_fail_open.py CASE ARGS...  (or --list: the case names)

The local Slurm, the options and the shared steps are in slurm_fixtures.py."""
import json
import os
import re
import sys

from slurm_fixtures import ARGS, Slurm, publish_lane_profile, rank_lines, multilane_lines, main
from e2e import check, log, run  # noqa: E402  (tests/e2e.py: slurm_fixtures puts it on the path)


def fail_open(root, plugin_args, prepare, why_pattern, preloaded=True):
    """A step on a node without a usable profile runs and one line says why.
    A job is all in or all out: where the library itself loads, the plugin
    still preloads it, with MULTILANE_OFF=<why> instead of a profile (the
    library then turns multilane off on every rank of the job); only a
    library that is missing or does not load is left out (`preloaded`
    False).  The lines checked are the plugin's and, once the library says
    one, the library's, which repeats MULTILANE_OFF's reason."""
    s = Slurm(root, plugin_args)
    try:
        prepare(s)
        p = s.cmd(["srun", "-n", "2", "--multilane", ARGS.probe, "2"], check_rc=False)
        text = p.stdout + p.stderr
        log(text)
        check(p.returncode == 0, f"the job failed (exit {p.returncode})")
        rows = rank_lines(p.stdout)
        check(len(rows) == 2 and all(r["ok"] == "1" for r in rows), f"the job's sums are wrong: {rows}")
        check(all(r["lane"] == r["hier"] == r["split"] == "0" for r in rows),
              f"calls ran a multilane algorithm on a node without a profile: {rows}")
        offs = re.findall(r"^rank (\d+) MULTILANE_OFF=(.*)$", p.stdout, re.M)
        if preloaded:
            check(all(r["preload"] == "1" and r["off"] == "1" for r in rows),
                  f"the library is not preloaded with MULTILANE_OFF on every rank: {rows}")
            check(len(offs) == 2 and all(re.search(why_pattern, v) and "without multilane" in v for _, v in offs),
                  f"MULTILANE_OFF does not say why ({why_pattern}): {offs}")
        else:
            check(all(r["preload"] == "0" and r["off"] == "0" for r in rows) and not offs,
                  f"a library that cannot load was preloaded: {rows} {offs}")
        lines = [l for l in multilane_lines(text) if not l.startswith("rank ")]
        check(1 <= len(lines) <= (2 if preloaded else 1), f"expected one line saying why, got {lines}")
        check(all(re.search(why_pattern, l) for l in lines), f"a line does not say why ({why_pattern}): {lines}")
        check(any("without multilane" in l for l in lines), lines)
    finally:
        s.stop()


def case_fail_open_no_database(root):
    fail_open(root, {}, lambda s: None, r"no (system )?database|does not exist|not found")


def case_fail_open_no_profile(root):
    def prepare(s):
        # A valid database holding only a profile made by another version.
        publish_lane_profile(s.db)
        doc = os.path.join(root, "other.json")
        run([ARGS.multilane, "export", "--db", s.db, doc])
        d = json.load(open(doc))
        os.remove(s.db)
        for p in d["profiles"]:
            p["library_version"] = "0.0.1"  # another library version: a miss
        with open(doc, "w") as f:
            json.dump(d, f)
        run([ARGS.multilane, "import", "--db", s.db, doc])
    fail_open(root, {}, prepare, r"no profile for node type")


def case_fail_open_corrupt_database(root):
    def prepare(s):
        with open(s.db, "wb") as f:
            f.write(b"this is not a database" * 100)
    fail_open(root, {}, prepare, r"profiles\.db")


def case_fail_open_library_does_not_load(root):
    broken = os.path.join(root, "libbroken.so")

    def prepare(s):
        publish_lane_profile(s.db)
        with open(ARGS.library, "rb") as f:
            head = f.read(4096)  # an ELF header and nothing behind it
        with open(broken, "wb") as f:
            f.write(head)
    fail_open(root, {"library": broken}, prepare, r"does not load", preloaded=False)


def case_fail_open_missing_library(root):
    fail_open(root, {"library": "/nonexistent/libmlallreduce.so"}, lambda s: publish_lane_profile(s.db),
              r"does not exist", preloaded=False)


def case_fail_open_resolver_missing(root):
    fail_open(root, {"multilane": "/nonexistent/multilane"}, lambda s: None,
              r"look-up .* failed: could not be started: No such file or directory")


def case_fail_open_resolver_loader_fails(root):
    """A `multilane` whose loader gives up before main() (exit 127, as when
    libmlallreduce.so.0 is not where its RUNPATH says): the line quotes the
    loader, not "missing".  The stand-in runs the real dynamic loader on a
    library that is not there, which fails exactly that way."""
    stand_in = os.path.join(root, "multilane-unloadable")
    with open(stand_in, "w") as f:
        f.write("#!/bin/sh\nexec /lib64/ld-linux-x86-64.so.2 /nonexistent/libmlallreduce.so.0 \"$@\"\n")
    os.chmod(stand_in, 0o755)
    fail_open(root, {"multilane": stand_in}, lambda s: None,
              r"exit status 127\): .*error while loading shared libraries: /nonexistent/libmlallreduce\.so\.0")


def case_fail_open_resolver_hangs(root):
    """A `multilane` that never answers: after resolve_timeout the step runs
    without multilane and says so (the look-up is killed, the step goes on)."""
    stand_in = os.path.join(root, "multilane-hangs")
    with open(stand_in, "w") as f:
        f.write("#!/bin/sh\nexec sleep 600\n")
    os.chmod(stand_in, 0o755)
    fail_open(root, {"multilane": stand_in, "resolve_timeout": "2"}, lambda s: None,
              r"look-up .* failed: timed out after 2 s")


def case_fail_open_resolver_crashes(root):
    """A `multilane` that dies of a signal (SIGSEGV) inside slurmstepd's
    look-up: the step runs without multilane, the line names the signal."""
    stand_in = os.path.join(root, "multilane-crashes")
    with open(stand_in, "w") as f:
        f.write("#!/bin/sh\nkill -SEGV $$\n")
    os.chmod(stand_in, 0o755)
    fail_open(root, {"multilane": stand_in}, lambda s: None, r"look-up .* failed: killed by signal 11")


if __name__ == "__main__":
    sys.exit(main(globals()))
