#!/usr/bin/python3
"""Runs a GPU test command with MULTILANE_STATS=1 and MULTILANE_REPORT set and
checks that the device counters reach the stats line and the job report.

Usage:
  check_device_counters.py [--stats KEY=VALUE]... [--transports KEY=VALUE]...
                           [--algos KEY=VALUE]... [--fallbacks N] -- COMMAND...

  --stats KEY=VALUE       the one "multilane: stats:" line has KEY=VALUE
  --transports KEY=VALUE  summed over the report's device bins, "transports"
                          has exactly these keys and values
  --algos KEY=VALUE       summed over the device bins, "algos" has exactly these
  --fallbacks N           summed over the device bins, "nccl_fallbacks" is N

The command's exit code 77 (no GPU: every test skipped) is passed on, so that
CTest reports a skip, never a pass.  The command's output is echoed.  The
command (mpirun) must pass MULTILANE_STATS, MULTILANE_REPORT and
MULTILANE_REPORT_INTERVAL to its ranks (-x).
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

STATS_PREFIX = "multilane: stats:"


def pairs(values):
    out = {}
    for v in values:
        key, _, val = v.partition("=")
        out[key] = int(val)
    return out


def parse_args(argv):
    opts = {"stats": [], "transports": [], "algos": [], "fallbacks": 0}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            return opts, argv[i + 1:]
        if a in ("--stats", "--transports", "--algos"):
            opts[a[2:]].append(argv[i + 1])
        elif a == "--fallbacks":
            opts["fallbacks"] = int(argv[i + 1])
        else:
            sys.exit("check_device_counters.py: unknown option " + a)
        i += 2
    sys.exit("check_device_counters.py: no command after --")


def main():
    opts, cmd = parse_args(sys.argv[1:])
    failures = []
    with tempfile.TemporaryDirectory(prefix="mla-gpu-report-") as out:
        env = dict(os.environ, MULTILANE_STATS="1", MULTILANE_REPORT=out, MULTILANE_REPORT_INTERVAL="0")
        p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=280)
        text = p.stdout.decode(errors="replace")
        sys.stdout.write(text)
        if p.returncode == 77:
            print("check_device_counters.py: SKIPPED (the command exited 77)")
            return 77
        if p.returncode != 0:
            failures.append("the command exited %d" % p.returncode)

        lines = [l for l in text.splitlines() if l.startswith(STATS_PREFIX)]
        if len(lines) != 1:
            failures.append("%d '%s' lines, expected 1" % (len(lines), STATS_PREFIX))
        else:
            got = dict(w.split("=", 1) for w in lines[0].split(": ", 2)[-1].split() if "=" in w)
            for key, val in pairs(opts["stats"]).items():
                if got.get(key) != str(val):
                    failures.append("stats line: %s=%s, expected %d" % (key, got.get(key), val))

        files = glob.glob(os.path.join(out, "multilane-report-*.json"))
        if len(files) != 1:
            failures.append("%d job report files, expected 1" % len(files))
        else:
            with open(files[0]) as f:
                report = json.load(f)
            transports, algos, fallbacks = {}, {}, 0
            for b in report["bins"]:
                if b["memory"] != "device":
                    if "transports" in b:
                        failures.append("a host bin has 'transports'")
                    continue
                for k, v in b.get("transports", {}).items():
                    transports[k] = transports.get(k, 0) + v
                for k, v in b.get("algos", {}).items():
                    algos[k] = algos.get(k, 0) + v
                fallbacks += b.get("nccl_fallbacks", 0)
            if transports != pairs(opts["transports"]):
                failures.append("report transports %s, expected %s" % (transports, pairs(opts["transports"])))
            if algos != pairs(opts["algos"]):
                failures.append("report algos %s, expected %s" % (algos, pairs(opts["algos"])))
            if fallbacks != opts["fallbacks"]:
                failures.append("report nccl_fallbacks %d, expected %d" % (fallbacks, opts["fallbacks"]))
    for f in failures:
        print("check_device_counters.py: FAILED: " + f)
    if not failures:
        print("check_device_counters.py: stats line and job report hold the expected device counters")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
