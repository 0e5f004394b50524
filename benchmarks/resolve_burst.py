#!/usr/bin/python3
"""resolve_burst.py: the Slurm plugin's profile look-up at scale, on one machine.

Every node's prolog and task start runs `multilane resolve` against the one
system database at the same moment.  This starts N resolvers at once (N
processes, as N nodes would) against one published snapshot and prints, per
burst size, how long each took (median, 95th percentile, slowest) and how many
found the profile, while an admin re-publishes the database in a loop
(`multilane import --system`, the tune's own publication) unless
--no-publisher.  Then it counts what one resolve asks of the file system for
the database (opens, metadata calls, reads, locks: strace), the operations a
shared file system turns into round trips.

    resolve_burst.py --multilane BIN --library LIB [--bursts 1,16,64,256]
                     [--rounds 3] [--work DIR] [--no-publisher] [--check]

With --check it exits 1, naming what failed, unless every resolver exited 0
and found the profile (the test launcher_resolve_burst: readers never see a
half-published database); it then leaves the file operations out (strace).

Needs a working `multilane tune --np 2` (Open MPI) to make the profile; writes
only under --work (default: a new folder in /tmp), whose system database it
names with MULTILANE_SYSTEM_DB.  docs/scale.md has the figures."""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time


def make_database(a, env):
    """A real short tune into WORK/tuned.db, published as the system
    database WORK/system.db (a snapshot, read immutable)."""
    tuned = os.path.join(a.work, "tuned.db")
    subprocess.run([a.multilane, "tune", "--np", "2", "--budget", "2", "--sizes", "4K:16K", "--db", tuned],
                   env=env, check=True, stdout=subprocess.DEVNULL)
    doc = os.path.join(a.work, "profiles.json")
    subprocess.run([a.multilane, "export", "--db", tuned, doc], env=env, check=True, stdout=subprocess.DEVNULL)
    subprocess.run([a.multilane, "import", doc, "--system"], env=env, check=True, stdout=subprocess.DEVNULL)
    return doc


def resolve_argv(a):
    """What the plugin runs (spank/context_step.cc LookUp), less the program."""
    return [a.multilane, "resolve", "--db", a.system_db, "--check-library", a.library, "--partition", "batch"]


def burst(a, env, n):
    """N resolvers started at once: (seconds each, how many said found=yes,
    exit statuses other than 0)."""
    procs = []
    for _ in range(n):
        procs.append((time.monotonic(), subprocess.Popen(resolve_argv(a), env=env, stdout=subprocess.PIPE,
                                                         stderr=subprocess.DEVNULL, text=True)))
    took, found, bad = [], 0, []
    for t0, p in procs:
        out, _ = p.communicate()
        took.append(time.monotonic() - t0)
        found += "found=yes" in out.split()
        if p.returncode != 0:
            bad.append(p.returncode)
    return took, found, bad


def publisher(a, env, doc, stop, count):
    """Re-publishes the system database until STOP is set."""
    while not stop.is_set():
        subprocess.run([a.multilane, "import", doc, "--system"], env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        count[0] += 1


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def file_operations(a, env):
    """What one resolve does to the database file: {call: count}, and the
    bytes it read from it."""
    trace = os.path.join(a.work, "resolve.strace")
    subprocess.run(["strace", "-f", "-y", "-o", trace, "-e",
                    "trace=openat,stat,newfstatat,fstat,lstat,access,read,pread64,fcntl,flock,close,lseek"]
                   + resolve_argv(a), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    calls, read_bytes = {}, 0
    db = os.path.realpath(a.system_db)
    for line in open(trace):
        if db not in line:
            continue
        m = re.match(r"^\d+\s+(\w+)\(", line)
        if not m:
            continue
        calls[m.group(1)] = calls.get(m.group(1), 0) + 1
        r = re.search(r"\) = (\d+)$", line.strip())
        if m.group(1) in ("read", "pread64") and r:
            read_bytes += int(r.group(1))
    return calls, read_bytes


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--multilane", required=True)
    ap.add_argument("--library", required=True, help="the injected library the resolver checks (--check-library)")
    ap.add_argument("--bursts", default="1,16,64,256", help="resolvers started at once, comma-separated")
    ap.add_argument("--rounds", type=int, default=3, help="bursts of each size (every one counted)")
    ap.add_argument("--work", help="folder for the databases (default: a new one in /tmp)")
    ap.add_argument("--no-publisher", action="store_true", help="no re-publication during the bursts")
    ap.add_argument("--check", action="store_true", help="exit 1 unless every resolver found the profile")
    a = ap.parse_args()
    made = a.work is None
    a.work = a.work or tempfile.mkdtemp(prefix="resolve-burst-")
    os.makedirs(a.work, exist_ok=True)
    for name in ("system.db", "tuned.db", "user.db"):
        if os.path.exists(os.path.join(a.work, name)):
            os.remove(os.path.join(a.work, name))
    failures = []
    a.system_db = os.path.join(a.work, "system.db")
    env = dict(os.environ, MULTILANE_SYSTEM_DB=a.system_db, MULTILANE_USER_DB=os.path.join(a.work, "user.db"))
    try:
        doc = make_database(a, env)
        print(f"# {os.cpu_count()} cores; database {os.path.getsize(a.system_db)} B; "
              f"publisher {'off' if a.no_publisher else 'on'}; {a.rounds} bursts of each size")
        print(f"{'resolvers':>9} {'p50_ms':>8} {'p95_ms':>8} {'max_ms':>8} {'found':>7} {'failed':>6} {'published':>9}")
        for n in [int(x) for x in a.bursts.split(",")]:
            stop, count = threading.Event(), [0]
            pub = None if a.no_publisher else threading.Thread(target=publisher, args=(a, env, doc, stop, count))
            if pub:
                pub.start()
            took, found, bad = [], 0, []
            for _ in range(a.rounds):
                t, f, b = burst(a, env, n)
                took += t
                found += f
                bad += b
            stop.set()
            if pub:
                pub.join()
            print(f"{n:>9} {1e3 * statistics.median(took):>8.1f} {1e3 * pct(took, 0.95):>8.1f} "
                  f"{1e3 * max(took):>8.1f} {found:>3}/{len(took):<3} {len(bad):>6} {count[0]:>9}")
            if found != len(took) or bad:
                failures.append(f"bursts of {n}: {len(took) - found} of {len(took)} resolvers did not find the "
                                f"profile, exit statuses {sorted(set(bad))}")
        if a.check:
            pass  # the test checks what the resolvers found, not what they asked of the file system
        elif shutil.which("strace") is None:
            print("# the file operations of one resolve need strace (apt-get install strace)")
        else:
            calls, read_bytes = file_operations(a, env)
            print("# one resolve, on the database file: " + ", ".join(f"{k} {v}" for k, v in sorted(calls.items()))
                  + f"; {read_bytes} B read")
    finally:
        if made:
            shutil.rmtree(a.work, ignore_errors=True)
    if a.check and failures:
        print("resolve_burst: FAIL: " + "; ".join(failures) + " (while the database was re-published "
              "beside them: a reader must see the old snapshot or the new one, never a part)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
