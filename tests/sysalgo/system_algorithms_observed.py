#!/usr/bin/python3
"""The benchmark's mpi:NAME rows run the system MPI's algorithm NAME, seen
from inside Open MPI: coll_base_counter.so (preloaded) counts the calls of
each of coll/tuned's allreduce functions on communicators other than
MPI_COMM_WORLD.  A run of the plain mpi row must make none (it runs on
MPI_COMM_WORLD); a run of every mpi:NAME row, one size, must call each
NAME's function exactly once per call of the row on every rank (the ring's
function up to once more per call of the segmented ring, which below one
1 MiB segment per rank runs the plain ring: Open MPI 4.1.4 calls it through
the dynamic linker, 4.1.6 directly).

    system_algorithms_observed.py SHIM MPIEXEC [FLAGS...] -- BENCH
"""
import re
import subprocess
import sys
import tempfile

from coll_counts import take_counts

# mpi:NAME -> Open MPI's function (ompi_coll_base_allreduce_intra_<function>)
FUNCTIONS = {"basic_linear": "basic_linear", "nonoverlapping": "nonoverlapping",
             "recursive_doubling": "recursivedoubling", "ring": "ring",
             "segmented_ring": "ring_segmented", "rabenseifner": "redscat_allgather"}
RANKS, ITERS, WARMUP = 4, 5, 1
CALLS = ITERS + WARMUP + 1  # timed, warm-up, and the checked call


def counts(shim, launcher, bench, algos):
    folder = tempfile.mkdtemp(prefix="coll-base-counts-")
    cmd = launcher[:1] + ["-n", str(RANKS)] + launcher[1:] + ["-x", f"LD_PRELOAD={shim}",
                                                              "-x", f"COLL_BASE_COUNTS_DIR={folder}", bench, "-b", "256K",
                                                              "-e", "256K", "-n", str(ITERS), "-w", str(WARMUP),
                                                              "-a", algos]
    print(" ".join(cmd), flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    print(p.stdout[-3000:], p.stderr[-3000:], sep="\n")
    assert p.returncode == 0, f"mlallreduce_bench exited with status {p.returncode}"
    ranks = take_counts(folder, RANKS)
    return p.stdout, ranks


def main():
    shim, rest = sys.argv[1], sys.argv[2:]
    sep = rest.index("--")
    launcher, bench = rest[:sep], rest[sep + 1]
    out, plain = counts(shim, launcher, bench, "mpi")
    system = re.search(r"^# system algorithms \(mpi:NAME\): Open MPI coll/tuned: (.*)$", out, re.M)
    assert system, "the benchmark names no Open MPI coll/tuned algorithms"
    names = system.group(1).split()
    missing = sorted(set(FUNCTIONS) - set(names))
    assert not missing, f"coll/tuned does not offer {missing} (offered: {names})"
    out, forced = counts(shim, launcher, bench, ",".join("mpi:" + n for n in FUNCTIONS))
    bad = []
    for rank, (before, after) in enumerate(zip(plain, forced)):
        if any(before.values()):
            bad.append(f"rank {rank}: the plain mpi row made calls off MPI_COMM_WORLD: {before}")
        for name, fn in FUNCTIONS.items():
            want = range(CALLS, 2 * CALLS + 1) if fn == "ring" else range(CALLS, CALLS + 1)
            if after[fn] not in want:
                bad.append(f"mpi:{name} on rank {rank}: {fn} ran {after[fn]} times, {want.start}"
                           + (f" to {want.stop - 1}" if len(want) > 1 else "") + " expected")
    assert not bad, "the forced algorithms did not run as chosen:\n" + "\n".join(bad)
    wrong = [l for l in out.splitlines() if re.match(r"\s+\d+", l) and l.split()[8] != "0"]
    assert not wrong, f"wrong values: {wrong}"
    print(f"PASS: each of the {len(FUNCTIONS)} forced coll/tuned algorithms ran {CALLS} times per rank, none unforced")


if __name__ == "__main__":
    main()
