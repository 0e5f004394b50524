#!/usr/bin/python3
"""A profile's mpi=NAME runs the system MPI's algorithm NAME, seen from inside
Open MPI: coll_base_counter.so (preloaded beside the library) counts the calls
of coll/tuned's ring on communicators other than MPI_COMM_WORLD, where the
library runs a chosen algorithm (its copy of the caller's communicator).
profile_choice_app makes 5 sums (commutative, 2 MiB on 4 ranks) and 3 calls of
a non-commutative op, each checked exactly.  With `host 0 inf passthrough
mpi=ring` every rank must count exactly 5 rings (the non-commutative calls
keep the MPI's own choice: a ring would reorder them), and so must the
library's stats line (mpi:ring=5) and job report (bins[].system_algos); with
plain passthrough, or when the user turned coll/tuned's dynamic rules off
(their setting wins, one warning says so), none.

With --by-rank, also: a coll/tuned setting in the environment of ranks 2-3 only,
and an MCA parameter file in rank 3's HOME only: no ring anywhere, exact
results, one warning from the lowest rank that cannot apply it.  And the
user's forced algorithm (dynamic rules on and an algorithm) wins.

    profile_choice_observed.py [--by-rank BY_RANK_SH] SHIM PRELOAD MPIEXEC [FLAGS...] -- APP
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

from coll_counts import take_counts

RANKS, SUMS = 4, 5
RING = "multilane-profile 1 ranks=4; host 0 inf passthrough mpi=ring"
PLAIN = "multilane-profile 1 ranks=4; host 0 inf passthrough"


def warning(rank, why):
    """The one line saying mpi=ring is not applied, from the lowest rank that cannot apply it."""
    return (r"^multilane: warning: the profile names the system MPI.s own algorithm \(mpi=ring\) but on rank "
            + str(rank) + " of the communicator " + why)


def run(shim, preload, launcher, app, profile, extra=(), by_rank=()):
    """Runs the app on RANKS ranks; by_rank: a prefix giving ranks their own settings."""
    folder = tempfile.mkdtemp(prefix="coll-base-counts-")
    cmd = launcher[:1] + ["-n", str(RANKS)] + launcher[1:] + [
        "-x", f"LD_PRELOAD={shim}:{preload}", "-x", f"COLL_BASE_COUNTS_DIR={folder}",
        "-x", f"MULTILANE_PROFILE={profile}"]
    for kv in extra:
        cmd += ["-x", kv]
    cmd += ["-x", "MULTILANE_STATS=1"] + list(by_rank) + [app]
    print(" ".join(cmd), flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    print(p.stdout[-3000:], p.stderr[-3000:], sep="\n")
    assert p.returncode == 0, f"profile_choice_app exited with status {p.returncode}"
    assert p.stdout.count("profile-choice-app: ok") == RANKS, "not every rank's results were exact"
    rings = [counts["ring"] for counts in take_counts(folder, RANKS)]
    return rings, p.stderr


def report_rings(folder):
    """The calls of mpi=ring that the job report's bins count (bins[].system_algos)."""
    (name,) = glob.glob(os.path.join(folder, "multilane-report-*.json"))
    with open(name) as f:
        return sum(b.get("system_algos", {}).get("ring", 0) for b in json.load(f)["bins"])


def count(regex, text):
    return len(re.findall(regex, text, re.M))


def check_users_settings(shim, preload, launcher, app):
    """The user's own coll/tuned choices win (docs/algorithms.md), one line says so."""
    rings, err = run(shim, preload, launcher, app, RING, ["OMPI_MCA_coll_tuned_use_dynamic_rules=0"])
    assert rings == [0] * RANKS, f"the user's dynamic rules off must win, counted {rings}"
    assert count(warning(0, "you set OMPI_MCA_coll_tuned_use_dynamic_rules=0: your settings win"), err) == 1, \
        "expected one warning that mpi=ring is not applied"
    # The user turned the rules on and forced basic_linear (1): theirs runs.
    rings, err = run(shim, preload, launcher, app, RING, ["OMPI_MCA_coll_tuned_use_dynamic_rules=1",
                                                          "OMPI_MCA_coll_tuned_allreduce_algorithm=1"])
    assert rings == [0] * RANKS, f"the user's forced algorithm must win over the profile's, counted {rings}"
    assert count(warning(0, "you set OMPI_MCA_coll_tuned_allreduce_algorithm: your settings win"), err) == 1, \
        "expected one warning that the user's forced algorithm wins"
    # The rules on and nothing chosen: the profile's choice applies.
    rings, err = run(shim, preload, launcher, app, RING, ["OMPI_MCA_coll_tuned_use_dynamic_rules=1"])
    assert rings == [SUMS] * RANKS, f"dynamic rules on, nothing forced: mpi=ring must apply, counted {rings}"
    assert count("multilane: warning", err) == 0, "mpi=ring applied, yet a warning was printed"


def check_ranks_that_differ(shim, preload, launcher, app, by_rank):
    """Settings outside the start-up agreement that differ between ranks (a variable on some
    ranks, an MCA file in some ranks' HOME): every rank runs the MPI's own choice, exactly."""
    rings, err = run(shim, preload, launcher, app, RING,
                     by_rank=[by_rank, "2", "::", "OMPI_MCA_coll_tuned_priority=30", "::"])
    assert rings == [0] * RANKS, f"ranks 2-3 keep coll/tuned settings of their own: expected no ring, counted {rings}"
    assert count(warning(2, "you set OMPI_MCA_coll_tuned_priority: your settings win"), err) == 1, \
        "expected one warning from rank 2"
    assert count("multilane: warning", err) == 1, "expected exactly one warning"
    home = tempfile.mkdtemp(prefix="mca-home-")
    os.makedirs(os.path.join(home, ".openmpi"))
    with open(os.path.join(home, ".openmpi", "mca-params.conf"), "w") as f:
        f.write("coll_tuned_priority = 30\n")
    rings, err = run(shim, preload, launcher, app, RING, by_rank=[by_rank, "3", "::", f"HOME={home}", "::"])
    assert rings == [0] * RANKS, f"rank 3's HOME holds an MCA file: expected no ring, counted {rings}"
    assert count(warning(3, "coll/tuned is set in " + re.escape(home)), err) == 1, "expected one warning from rank 3"


def main():
    args = sys.argv[1:]
    by_rank = None
    if args[0] == "--by-rank":
        by_rank, args = args[1], args[2:]
    shim, preload, rest = args[0], args[1], args[2:]
    sep = rest.index("--")
    launcher, app = rest[:sep], rest[sep + 1]
    rings, err = run(shim, preload, launcher, app, RING)
    assert rings == [SUMS] * RANKS, f"mpi=ring: expected {SUMS} rings per rank (the sums only), counted {rings}"
    assert count("multilane: warning", err) == 0, "mpi=ring applied, yet a warning was printed"
    # The stats line counts what the library chose: the rings among the passthrough calls.
    assert count(rf"^multilane: stats: rank 0: calls=\d+ passthrough=\d+ mpi:ring={SUMS} lane=0 ", err) == 1, \
        f"expected the stats line to count {SUMS} calls of mpi:ring"
    rings, err = run(shim, preload, launcher, app, PLAIN)
    assert rings == [0] * RANKS, f"plain passthrough: expected no ring on the library's communicators, counted {rings}"
    assert count(r"^multilane: stats: rank 0: calls=\d+ passthrough=\d+ lane=0 ", err) == 1, \
        "plain passthrough: expected the stats line to name no system algorithm"
    # The job report's bins count them too (its own collectives at MPI_Finalize
    # add rings of their own to the shim's count, so only the report is read).
    for profile, want in ((RING, SUMS), (PLAIN, 0)):
        reports = tempfile.mkdtemp(prefix="reports-")
        run(shim, preload, launcher, app, profile, [f"MULTILANE_REPORT={reports}"])
        assert report_rings(reports) == want, f"{profile}: the job report must count {want} calls of mpi=ring"
    check_users_settings(shim, preload, launcher, app)
    if by_rank:
        check_ranks_that_differ(shim, preload, launcher, app, by_rank)
    print("profile_choice_observed: ok")


if __name__ == "__main__":
    main()
