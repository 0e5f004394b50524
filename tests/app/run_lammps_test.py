#!/usr/bin/python3
"""A real MPI application, Debian's LAMMPS (`lmp`, built for Open MPI), run
with and without libmlallreduce (issue 25, item 3).

Four runs of lammps_rdf.in on NP ranks (oversubscribed): plain, then with the
library preloaded on virtual nodes of 2 ranks, forced through each algorithm
(MULTILANE_ALGO=lane, hier, split; split with MULTILANE_RANKS_PER_GPU=2 so
that its GPU groups hold 2 ranks) and MULTILANE_STATS=1.  Each preloaded run
must give the plain run's physical output:
- final.dump (id, type, position and velocity of every atom after the last
  step, %.17g): byte for byte.  The dynamics (NVE) reads no allreduced sum but
  the integer neighbour-check flag, so any wrong result there shows here;
- rdf.txt (g(r) and coordination numbers of the 3 type pairs on 2000 bins at
  each RDF evaluation, %.17g): byte for byte.  Its allreduce sums counts, which
  doubles add exactly in any order;
- the thermo rows (step, temp, pe, ke, etotal, press every 10 steps, %.17g):
  the same steps, and values equal to a relative 1e-12 (the library promises
  the system MPI's result up to reassociation of the sum; the script says when
  they are bitwise equal, which they are here);
- the neighbour-list builds, dangerous builds and total neighbour count: exact.
The stats line of each preloaded run must show that the forced algorithm
served every MPI_Allreduce of LAMMPS (ALGO=calls, calls > 0, no passthrough,
none unsupported) and at least the bytes of the RDF arrays; the plain run must
print no stats line.

A missing `lmp` fails the test (scripts/install-deps.sh installs `lammps`).
"""
import os
import re
import shutil
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, ".."), os.path.join(HERE, "..", "mpi")]
from check_run import STATS_PREFIX, stats_fields  # noqa: E402
from e2e import check, client_arguments, expect, log, run  # noqa: E402

# compute rdf all rdf 2000 1 1 1 2 2 2: 3 pairs x 2000 bins of doubles per evaluation.
RDF_ARRAY_BYTES = 3 * 2000 * 8
ALGORITHMS = {
    "lane": ["MULTILANE_ALGO=lane", "MULTILANE_RANKS_PER_NODE=2"],
    "hier": ["MULTILANE_ALGO=hier", "MULTILANE_RANKS_PER_NODE=2"],
    "split": ["MULTILANE_ALGO=split", "MULTILANE_RANKS_PER_NODE=2", "MULTILANE_RANKS_PER_GPU=2"],
}


def lammps_run(a, name, env, extra):
    """Runs LAMMPS in WORKDIR/name and returns (its folder, its output lines)."""
    folder = os.path.join(a.workdir, name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    cmd = [a.mpirun, "--oversubscribe", "--bind-to", "none", "-np", str(a.np)]
    for kv in extra:
        cmd += ["-x", kv]
    cmd += [a.lmp, "-in", a.input, "-log", "log.lammps", "-screen", "none"]
    started = time.monotonic()
    p = run(cmd, env=env, cwd=folder, timeout=a.timeout)
    log(f"{name}: {time.monotonic() - started:.1f} s: {' '.join(cmd)}")
    return folder, (p.stdout + "\n" + p.stderr).splitlines()


def read(folder, name, mode="r"):
    path = os.path.join(folder, name)
    check(os.path.exists(path), f"FAILED: LAMMPS wrote no {path}")
    with open(path, mode) as f:
        return f.read()


def thermo_rows(folder):
    """The thermo table of log.lammps: a list of (step, [floats])."""
    rows, inside = [], False
    for line in read(folder, "log.lammps").splitlines():
        words = line.split()
        if words[:1] == ["Step"]:
            inside = True
        elif line.startswith("Loop time"):
            inside = False
        elif inside and words:
            rows.append((int(words[0]), [float(w) for w in words[1:]]))
    check(len(rows) > 1, f"FAILED: no thermo rows in {folder}/log.lammps")
    return rows


def neighbour_counts(folder):
    """The counts LAMMPS prints after the run (sums over the ranks)."""
    text = read(folder, "log.lammps")
    keys = ("Total # of neighbors", "Neighbor list builds", "Dangerous builds")
    found = {k: re.search(re.escape(k) + r" = (\d+)", text) for k in keys}
    check(all(found.values()), f"FAILED: {folder}/log.lammps lacks the neighbour counts")
    return {k: int(m.group(1)) for k, m in found.items()}


def expect_same_file(name, what, plain, mine):
    """final.dump or rdf.txt of `mine` byte for byte the plain run's; else the first differing line."""
    x, y = read(plain, what, "rb"), read(mine, what, "rb")
    if x != y:
        xs, ys = x.decode(errors="replace").splitlines(), y.decode(errors="replace").splitlines()
        i = next((i for i, (u, v) in enumerate(zip(xs, ys)) if u != v), min(len(xs), len(ys)))
        log(f"{name}: {what} line {i + 1}:\n  plain:        {xs[i] if i < len(xs) else '(end)'}"
            f"\n  with library: {ys[i] if i < len(ys) else '(end)'}")
    return x == y


def rdf_evaluations(rdf_text):
    """How many RDF arrays fix ave/time wrote (its "TimeStep Rows" block headers)."""
    return sum(1 for line in rdf_text.splitlines() if not line.startswith("#") and len(line.split()) == 2)


def compare_thermo(name, plain, mine):
    check([s for s, _ in plain] == [s for s, _ in mine], f"FAILED: {name}: thermo steps differ")
    bitwise = True
    for (step, x), (_, y) in zip(plain, mine):
        check(len(x) == len(y), f"FAILED: {name}: step {step}: thermo columns differ")
        for i, (u, v) in enumerate(zip(x, y)):
            check(abs(u - v) <= 1e-12 * max(abs(u), abs(v)),
                  f"FAILED: {name}: step {step} thermo column {i + 1}: {v!r} with the library, {u!r} without")
            bitwise = bitwise and u == v
    log(f"ok: {name}: {len(plain)} thermo rows equal the plain run's" + (" bitwise" if bitwise else " to 1e-12"))


def check_stats(name, lines, min_bytes):
    stats = [l.strip() for l in lines if l.strip().startswith(STATS_PREFIX)]
    check(len(stats) == 1, f"FAILED: {name}: {len(stats)} '{STATS_PREFIX}' lines, want 1: {stats}")
    log(f"{name}: {stats[0]}")
    f = stats_fields(stats[0])
    expect(f.get("calls", 0) > 0 and f.get(name) == f["calls"],
           f"{name}: the forced algorithm served every one of LAMMPS's {f.get('calls')} MPI_Allreduce calls")
    expect(f.get("passthrough") == 0 and f.get("unsupported") == 0, f"{name}: none passed through, none unsupported")
    expect(f.get("bytes", 0) >= min_bytes, f"{name}: the RDF arrays went through it ({f.get('bytes')} >= {min_bytes} bytes)")


def main():
    ap = client_arguments(timeout=150)
    ap.add_argument("--lmp", default="/usr/bin/lmp")
    ap.add_argument("--input", default=os.path.join(HERE, "lammps_rdf.in"))
    a = ap.parse_args()
    a.preload = ":".join(os.path.abspath(x) for x in a.preload.split(":") if x)  # the runs start in their own folders
    check(os.access(a.lmp, os.X_OK),
          f"FAILED: LAMMPS is not installed ({a.lmp} not found): this test needs Debian's package lammps; "
          "run bash scripts/install-deps.sh as root (or apt-get install lammps)")

    env = {k: v for k, v in os.environ.items() if not k.startswith("MULTILANE_") and k != "LD_PRELOAD"}
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    os.makedirs(a.workdir, exist_ok=True)

    plain, lines = lammps_run(a, "plain", env, [])
    expect(not any(l.strip().startswith(STATS_PREFIX) for l in lines), "plain: no stats line without the library")
    plain_rdf = read(plain, "rdf.txt")
    evaluations = rdf_evaluations(plain_rdf)
    check(evaluations > 0, "FAILED: plain: rdf.txt holds no RDF")
    for name, settings in ALGORITHMS.items():
        extra = ["LD_PRELOAD=" + a.preload, "MULTILANE_STATS=1"] + settings
        mine, lines = lammps_run(a, name, env, extra)
        check_stats(name, lines, evaluations * RDF_ARRAY_BYTES)
        expect(expect_same_file(name, "final.dump", plain, mine),
               f"{name}: final.dump (every atom's position and velocity) byte-identical to the plain run's")
        expect(expect_same_file(name, "rdf.txt", plain, mine), f"{name}: rdf.txt ({evaluations} RDFs) byte-identical")
        compare_thermo(name, thermo_rows(plain), thermo_rows(mine))
        expect(neighbour_counts(mine) == neighbour_counts(plain), f"{name}: neighbour counts equal")
    log("run_lammps_test.py: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
