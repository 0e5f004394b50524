#!/usr/bin/python3
"""A profile's mpi=NAME runs the system MPI's algorithm NAME, seen from inside
Open MPI: coll_base_counter.so (preloaded beside the library) counts the calls
of coll/tuned's ring on communicators other than MPI_COMM_WORLD, where the
library runs a chosen algorithm (its copy of the caller's communicator).
profile_choice_app makes 5 sums (commutative, 2 MiB on 4 ranks) and 3 calls of
a non-commutative op, each checked exactly.  With `host 0 inf passthrough
mpi=ring` every rank must count exactly 5 rings (the non-commutative calls
keep the MPI's own choice: a ring would reorder them); with plain passthrough,
or when the user turned coll/tuned's dynamic rules off (their setting wins,
one warning says so), none.

    profile_choice_observed.py SHIM PRELOAD MPIEXEC [FLAGS...] -- APP
"""
import re
import subprocess
import sys
import tempfile

from coll_counts import take_counts

RANKS, SUMS = 4, 5
RING = "multilane-profile 1 ranks=4; host 0 inf passthrough mpi=ring"
PLAIN = "multilane-profile 1 ranks=4; host 0 inf passthrough"
WARNING = (r"^multilane: warning: the profile names the system MPI.s own algorithm \(mpi=ring\) but you set "
           r"OMPI_MCA_coll_tuned_use_dynamic_rules=0: your settings win")


def run(shim, preload, launcher, app, profile, extra=()):
    folder = tempfile.mkdtemp(prefix="coll-base-counts-")
    cmd = launcher[:1] + ["-n", str(RANKS)] + launcher[1:] + [
        "-x", f"LD_PRELOAD={shim}:{preload}", "-x", f"COLL_BASE_COUNTS_DIR={folder}",
        "-x", f"MULTILANE_PROFILE={profile}"]
    for kv in extra:
        cmd += ["-x", kv]
    cmd.append(app)
    print(" ".join(cmd), flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    print(p.stdout[-3000:], p.stderr[-3000:], sep="\n")
    assert p.returncode == 0, f"profile_choice_app exited with status {p.returncode}"
    assert p.stdout.count("profile-choice-app: ok") == RANKS, "not every rank's results were exact"
    rings = [counts["ring"] for counts in take_counts(folder, RANKS)]
    warnings = len(re.findall(WARNING, p.stderr, re.M))
    return rings, warnings


def main():
    shim, preload, rest = sys.argv[1], sys.argv[2], sys.argv[3:]
    sep = rest.index("--")
    launcher, app = rest[:sep], rest[sep + 1]
    rings, warnings = run(shim, preload, launcher, app, RING)
    assert rings == [SUMS] * RANKS, f"mpi=ring: expected {SUMS} rings per rank (the sums only), counted {rings}"
    assert warnings == 0, "mpi=ring applied, yet a warning said it was not"
    rings, _ = run(shim, preload, launcher, app, PLAIN)
    assert rings == [0] * RANKS, f"plain passthrough: expected no ring on the library's communicators, counted {rings}"
    rings, warnings = run(shim, preload, launcher, app, RING, ["OMPI_MCA_coll_tuned_use_dynamic_rules=0"])
    assert rings == [0] * RANKS, f"the user's dynamic rules off must win, counted {rings}"
    assert warnings == 1, f"expected one warning that mpi=ring is not applied, saw {warnings}"
    print("profile_choice_observed: ok")


if __name__ == "__main__":
    main()
