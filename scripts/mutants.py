#!/usr/bin/env python3
"""Mutation testing of libmlallreduce: apply one one-line mutant at a time,
rebuild, run the tests that should catch it, report the survivors.

    scripts/mutants.py [--kind host|device|all] [--build DIR] [--only ID,...]
                       [--list scripts/mutants.txt] [--out FILE.md]

The mutants are in scripts/mutants.txt (format there).  For each mutant of
the kind asked: its `from` text must occur exactly once in its file (else
the list is stale: an error); the file is changed, the build tree DIR
rebuilt (`cmake --build DIR`), and `ctest --test-dir DIR --no-tests=error`
run with the mutant's `tests` arguments.  A failing test kills the mutant; a
mutant that does not compile is reported as such (not a test's kill).  The
file is put back afterwards, also on an error or Ctrl-C, and the tree
rebuilt once at the end.

Host mutants run where the default preset builds (build/default); device
mutants on a GPU host (build/gpu of scripts/gpu-run.sh).  Not part of CI:
each mutant costs a rebuild and a test run.

Exit status: 0 when every mutant was killed or its survival is explained in
the list (`explained:`), 1 otherwise.  --out writes the result as Markdown
(docs/mutants.md keeps the last ones).
"""
import argparse
import os
import re
import shlex
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse_list(path):
    """Blocks of `key: value` lines, separated by blank lines; # comments."""
    mutants, cur = [], {}
    with open(path) as f:
        for n, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            if line.startswith("#"):
                continue
            if not line.strip():
                if cur:
                    mutants.append(cur)
                    cur = {}
                continue
            m = re.match(r"^(id|kind|file|from|to|tests|explained|what|timeout):\s?(.*)$", line)
            if not m:
                sys.exit(f"{path}:{n}: not a `key: value` line: {line}")
            cur[m.group(1)] = m.group(2)
    if cur:
        mutants.append(cur)
    for m in mutants:
        missing = [k for k in ("id", "kind", "file", "from", "to", "tests") if k not in m]
        if missing:
            sys.exit(f"{path}: mutant {m.get('id', '?')} lacks {', '.join(missing)}")
        if m["kind"] not in ("host", "device"):
            sys.exit(f"{path}: mutant {m['id']}: kind must be host or device")
    ids = [m["id"] for m in mutants]
    if len(ids) != len(set(ids)):
        sys.exit(f"{path}: duplicate mutant ids")
    return mutants


def build(build_dir, log):
    p = subprocess.run(["nice", "-n", "10", "cmake", "--build", build_dir], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    log.write(p.stdout)
    return p.returncode == 0, p.stdout


def run_tests(build_dir, tests, timeout, log):
    """ctest with the mutant's arguments; after `timeout` seconds (a test that
    hangs under the mutant; CTest's own per-test TIMEOUT properties win over
    its --timeout) the whole run is stopped, which counts as a kill."""
    cmd = ["ctest", "--test-dir", build_dir, "--no-tests=error", "--timeout", str(timeout)] + shlex.split(tests)
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout + 30)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)  # ctest and the test processes it started, nothing else
        out, _ = p.communicate()
        out += f"\nmutants: stopped after {timeout + 30} s (hang)\n"
        rc = -9
    log.write("$ " + " ".join(cmd) + "\n" + out)
    failed = re.findall(r"^\s*\d+ - (\S+) \((?:Failed|Timeout|SEGFAULT|Subprocess aborted|Exception|Not Run)",
                        out, re.M)
    if rc == -9:
        failed.append(f"(hang: stopped after {timeout + 30} s)")
    ran = re.search(r"tests passed, (\d+) tests? failed out of (\d+)", out)
    return rc, failed, (int(ran.group(2)) if ran else 0), out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kind", choices=["host", "device", "all"], default="host")
    ap.add_argument("--build", default=None, help="build tree (default: build/default, or build/gpu for device)")
    ap.add_argument("--list", default=os.path.join(ROOT, "scripts", "mutants.txt"))
    ap.add_argument("--only", default="", help="comma-separated mutant ids")
    ap.add_argument("--out", default="", help="write the result table (Markdown) here")
    ap.add_argument("--timeout", type=int, default=600, help="per test, seconds")
    args = ap.parse_args()
    build_dir = args.build or os.path.join(ROOT, "build", "gpu" if args.kind == "device" else "default")
    mutants = [m for m in parse_list(args.list) if args.kind == "all" or m["kind"] == args.kind]
    if args.only:
        want = set(args.only.split(","))
        unknown = want - {m["id"] for m in mutants}
        if unknown:
            sys.exit(f"mutants: unknown ids for kind {args.kind}: {', '.join(sorted(unknown))}")
        mutants = [m for m in mutants if m["id"] in want]
    if not mutants:
        sys.exit("mutants: no mutant selected")

    # Check every mutant applies before spending a build on any.
    for m in mutants:
        text = open(os.path.join(ROOT, m["file"])).read()
        count = text.count(m["from"])
        if count != 1:
            sys.exit(f"mutants: {m['id']}: `{m['from']}` occurs {count} times in {m['file']} (list is stale)")

    logpath = os.path.join(build_dir, "mutants.log")
    os.makedirs(build_dir, exist_ok=True)
    log = open(logpath, "w")
    ok, out = build(build_dir, log)
    if not ok:
        sys.exit(f"mutants: the unmutated tree does not build (see {logpath})")

    results = []
    restore = {}

    def put_back(*_):
        for path, text in restore.items():
            with open(path, "w") as f:
                f.write(text)
        restore.clear()

    signal.signal(signal.SIGTERM, lambda *a: (put_back(), sys.exit(2)))
    try:
        for m in mutants:
            path = os.path.join(ROOT, m["file"])
            original = open(path).read()
            restore[path] = original
            with open(path, "w") as f:
                f.write(original.replace(m["from"], m["to"], 1))
            t0 = time.time()
            log.write(f"\n=== mutant {m['id']}: {m['file']}: {m['from']} -> {m['to']}\n")
            built, out = build(build_dir, log)
            if not built:
                verdict, killers, ran = "does not compile", [], 0
            else:
                rc, killers, ran, out = run_tests(build_dir, m["tests"], int(m.get("timeout", args.timeout)), log)
                if rc != 0 and not killers:
                    killers = ["(ctest exit %d: %s)" % (rc, out.strip().splitlines()[-1] if out.strip() else "")]
                verdict = "killed" if rc != 0 else "SURVIVED"
            put_back()
            secs = time.time() - t0
            results.append((m, verdict, killers, ran, secs))
            print(f"mutants: {m['id']}: {verdict}" + (f" by {', '.join(killers)}" if killers else "") +
                  f" ({ran} tests, {secs:.0f} s)", flush=True)
            write_result(args, results)
    finally:
        put_back()
        build(build_dir, log)  # the tree as it was
        log.close()

    survivors, unexplained, uncompiled, summary = write_result(args, results)
    print("mutants: " + summary)
    for m, _, _, _, _ in unexplained:
        print(f"mutants: SURVIVOR without explanation: {m['id']} ({m['file']}: {m['from']} -> {m['to']})")
    return 1 if unexplained or uncompiled else 0


def write_result(args, results):
    """The summary, and the Markdown table in --out (rewritten after every
    mutant, so that a run cut short still leaves what it found)."""
    survivors = [r for r in results if r[1] == "SURVIVED"]
    unexplained = [r for r in survivors if not r[0].get("explained")]
    uncompiled = [r for r in results if r[1] == "does not compile"]
    summary = (f"{len(results)} mutants: {sum(r[1] == 'killed' for r in results)} killed, {len(survivors)} survived "
               f"({len(survivors) - len(unexplained)} explained), {len(uncompiled)} did not compile")
    if args.out:
        with open(args.out, "w") as f:
            f.write(f"Command: `scripts/mutants.py --kind {args.kind}"
                    + (f" --build {args.build}" if args.build else "") + (f" --only {args.only}" if args.only else "")
                    + f"` ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}); {summary}.\n\n")
            f.write("| id | kind | file | mutation | tests | verdict | killed by | s |\n")
            f.write("| --- | --- | --- | --- | --- | --- | --- | ---: |\n")
            for m, verdict, killers, ran, secs in results:
                cell = lambda s: s.replace("|", "\\|")
                f.write(f"| {m['id']} | {m['kind']} | `{m['file']}` | `{cell(m['from'])}` → `{cell(m['to'])}` | "
                        f"`{cell(m['tests'])}` ({ran}) | {verdict} | {cell(', '.join(killers))} | {secs:.0f} |\n")
            for m, verdict, _, _, _ in survivors:
                f.write(f"\n- {m['id']} survived: {m.get('explained', 'NOT EXPLAINED')}\n")
    return survivors, unexplained, uncompiled, summary


if __name__ == "__main__":
    sys.exit(main())
