#!/usr/bin/python3
"""startup_scale.py: what a job's start costs, with and without multilane.

Runs benchmarks/startup_probe.c (its target `startup_probe`) under Open MPI's
mpirun at each number of ranks (oversubscribed where the machine has fewer
cores) without the library, and with each library given, and prints one table
of the mean and the slowest rank, in ms:

- init: MPI_Init; with the library it holds multilane's start-up (the
  agreement, its settings, the host split), so init with minus init without is
  multilane's own cost there, the rest the MPI's start-up;
- first: the first MPI_Allreduce on MPI_COMM_WORLD (with the library: its
  layout of the world);
- comm_first / comm_second: the first and the second on a new communicator
  (the first builds multilane's layout of it);
- loop: per communicator, of K created, used once and freed in a loop;
- agreement: where the library prints it (MULTILANE_VERBOSE=2, this version
  and later), the time and the PMIx reads of the start-up agreement per rank.

    startup_scale.py --probe BIN --library NAME=LIB [--library NAME=LIB ...]
                     [--ranks 16,64,256] [--loops K] [--repeat R] [--skip-none]

Each LIB is a front library (libmlallreduce.so) injected with LD_PRELOAD, run
with MULTILANE_ALGO=lane so that the layouts are built.  With --repeat R each
point runs R times and the run with the lowest mean MPI_Init is kept (the
machine's other load only adds).  The variables of this command's
environment reach every rank (one node), MULTILANE_RANKS_PER_NODE included.  docs/scale.md has the figures."""
import argparse
import os
import re
import statistics
import subprocess
import sys

PROBE = re.compile(r"^startup_probe ranks=(\d+)(.*)$")
FIELD = re.compile(r"(\w+)=([\d.]+)/([\d.]+)")
AGREEMENT = re.compile(r"start-up agreement: rank (\d+): (\d+) reads, ([\d.]+) ms")


def run_once(args, ranks, library):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    cmd = ["mpirun", "--oversubscribe", "-np", str(ranks)]
    if library:
        cmd += ["-x", "LD_PRELOAD=" + library, "-x", "MULTILANE_ALGO=lane", "-x", "MULTILANE_VERBOSE=2"]
    cmd += [args.probe, str(args.loops)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.timeout)
    text = out.stdout + out.stderr
    probe = [m for m in map(PROBE.match, text.splitlines()) if m]
    if not probe:
        sys.exit("startup_scale.py: %s failed (exit %d):\n%s" % (" ".join(cmd), out.returncode, text[-2000:]))
    if out.returncode != 0:
        # Measured, then the job ended badly (Open MPI 4.1 at hundreds of
        # oversubscribed ranks, at MPI_Finalize): the row is kept and marked.
        print("startup_scale.py: %d ranks, %s: exit %d after the measurement" % (ranks, library or "none",
                                                                                out.returncode), file=sys.stderr)
    row = {name: (float(mean), float(most)) for name, mean, most in FIELD.findall(probe[0].group(2))}
    agreed = [(int(r), float(ms)) for _, r, ms in AGREEMENT.findall(text)]
    if agreed:
        row["agreement"] = (statistics.mean(ms for _, ms in agreed), max(ms for _, ms in agreed))
        row["reads"] = (statistics.mean(r for r, _ in agreed), max(r for r, _ in agreed))
    return row


def best_of(args, ranks, library):
    runs = [run_once(args, ranks, library) for _ in range(args.repeat)]
    return min(runs, key=lambda row: row["init"][0])


def cell(row, name):
    if name not in row:
        return "-"
    mean, most = row[name]
    if name == "reads":
        return "%.1f / %d" % (mean, most)
    return "%.1f / %.1f" % (mean, most)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--probe", required=True, help="the startup_probe program")
    p.add_argument("--library", action="append", default=[], help="NAME=LIB: a front library to inject")
    p.add_argument("--ranks", default="16,64,256")
    p.add_argument("--loops", type=int, default=100)
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--timeout", type=float, default=900)
    p.add_argument("--skip-none", action="store_true", help="leave out the run without the library")
    args = p.parse_args()
    variants = [] if args.skip_none else [("none", None)]
    variants += [tuple(spec.split("=", 1)) for spec in args.library]
    names = ["init", "first", "comm_first", "comm_second", "loop_per_comm", "agreement", "reads"]
    print("| ranks | library | " + " | ".join(names) + " |")
    print("| ---: | --- |" + " ---: |" * len(names))
    for ranks in [int(n) for n in args.ranks.split(",")]:
        for name, library in variants:
            row = best_of(args, ranks, library)
            print("| %d | %s | %s |" % (ranks, name, " | ".join(cell(row, n) for n in names)), flush=True)


if __name__ == "__main__":
    main()
