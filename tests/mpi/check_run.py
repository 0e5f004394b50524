#!/usr/bin/python3
"""Runs a command (usually mpirun ...) and checks its exit code and output.

Usage:
  check_run.py [options] -- COMMAND [ARGS...]

Options:
  --lines REGEX COUNT   exactly COUNT lines of stdout+stderr match REGEX
  --stats KEY=VALUE     the one "multilane: stats:" line has KEY=VALUE
  --stats-min KEY=VALUE the one "multilane: stats:" line has KEY>=VALUE
  --rc N                expected exit code (default 0)
  --timeout SECONDS     kill the command after this long (default 500)
  --allow-skip          a GTEST_SKIP in the command's tests is not a failure

Where the command prints Google Test's summary (or is given --gtest_filter),
a run of 0 tests fails (a filter that matches nothing checks nothing), and so
does a skipped test unless --allow-skip says skipping is legitimate there.

The command's output is echoed so that CTest shows it on failure.
"""
import re
import subprocess
import sys

STATS_PREFIX = "multilane: stats:"


def parse_args(argv):
    opts = {"lines": [], "stats": [], "stats_min": [], "rc": 0, "timeout": 500.0, "allow_skip": False}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            return opts, argv[i + 1:]
        if a == "--lines":
            opts["lines"].append((argv[i + 1], int(argv[i + 2])))
            i += 3
        elif a in ("--stats", "--stats-min"):
            key, _, val = argv[i + 1].partition("=")
            opts["stats" if a == "--stats" else "stats_min"].append((key, int(val)))
            i += 2
        elif a == "--rc":
            opts["rc"] = int(argv[i + 1])
            i += 2
        elif a == "--timeout":
            opts["timeout"] = float(argv[i + 1])
            i += 2
        elif a == "--allow-skip":
            opts["allow_skip"] = True
            i += 1
        else:
            sys.exit("check_run.py: unknown option %r" % a)
    sys.exit("check_run.py: missing -- COMMAND")


def stats_fields(line):
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", line[len(STATS_PREFIX):])}


GTEST_RUNNING = re.compile(r"^\[==========\] Running (\d+) tests? ")
GTEST_SKIPPED = re.compile(r"^\[  SKIPPED \] (\S+)")


def gtest_failures(lines, cmd, allow_skip):
    """What Google Test's output says went unchecked: no test ran, or a test
    skipped itself (only rank 0 prints it, but every rank skips alike)."""
    failures = []
    counts = [int(m.group(1)) for m in map(GTEST_RUNNING.match, lines) if m]
    if any(a.startswith("--gtest_filter") for a in cmd) and not counts:
        failures.append("no Google Test summary line ('[==========] Running N tests'), "
                        "though the command has a --gtest_filter")
    if counts and max(counts) == 0:
        failures.append("0 tests ran: the --gtest_filter matches no test")
    # "[  SKIPPED ] Suite.Name (0 ms)", then a summary "[  SKIPPED ] 1 test, listed below:".
    skipped = sorted({m.group(1) for m in map(GTEST_SKIPPED.match, lines)
                      if m and not m.group(1)[0].isdigit()})
    if skipped and not allow_skip:
        failures.append("skipped test(s) %s: a skip checks nothing here (--allow-skip where "
                        "skipping is legitimate)" % ", ".join(skipped))
    return failures


def main():
    opts, cmd = parse_args(sys.argv[1:])
    if not cmd:
        sys.exit("check_run.py: empty command")
    print("check_run.py: running:", " ".join(cmd), flush=True)
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out, err = p.communicate(timeout=opts["timeout"])
    except subprocess.TimeoutExpired:
        # SIGTERM first: mpirun then takes its ranks down with it.
        p.terminate()
        try:
            out, err = p.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
        sys.stdout.write(out.decode(errors="replace") + err.decode(errors="replace"))
        print("check_run.py: FAIL: timed out after %s s (hang?)" % opts["timeout"])
        return 1
    out = out.decode(errors="replace")
    err = err.decode(errors="replace")
    sys.stdout.write("----- stdout -----\n" + out + "----- stderr -----\n" + err +
                     "------------------\n")
    lines = (out + "\n" + err).splitlines()
    failures = []
    if p.returncode != opts["rc"]:
        failures.append("exit code %d, want %d" % (p.returncode, opts["rc"]))
    failures += gtest_failures(lines, cmd, opts["allow_skip"])
    for regex, count in opts["lines"]:
        r = re.compile(regex)
        got = [l for l in lines if r.search(l)]
        if len(got) != count:
            failures.append("%d line(s) match %r, want %d: %r" % (len(got), regex, count, got))
    if opts["stats"] or opts["stats_min"]:
        stats = [l.strip() for l in lines if l.strip().startswith(STATS_PREFIX)]
        if len(stats) != 1:
            failures.append("%d %r line(s), want exactly 1: %r" % (len(stats), STATS_PREFIX, stats))
        else:
            fields = stats_fields(stats[0])
            for key, val in opts["stats"]:
                if fields.get(key) != val:
                    failures.append("stats %s=%s, want %d (line: %s)" %
                                    (key, fields.get(key), val, stats[0]))
            for key, val in opts["stats_min"]:
                if key not in fields or fields[key] < val:
                    failures.append("stats %s=%s, want >= %d (line: %s)" %
                                    (key, fields.get(key), val, stats[0]))
    for f in failures:
        print("check_run.py: FAIL:", f)
    if not failures:
        print("check_run.py: OK")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
