#!/usr/bin/python3
"""A profile's mpi=NAME under MPICH: the library writes the variable MPICH reads
at every call just before the call and puts it back after it.  cvar_seen_app
reads MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM and MPIR_CVAR_DEVICE_COLLECTIVES from
inside the call (in its user-defined op, while MPICH combines the data) and
after it.  The values meaning recursive_doubling and none are learned from
MPICH itself (a run without multilane, the user's environment setting them);
with `host 0 inf passthrough mpi=recursive_doubling` every rank must see them
inside the call and MPICH's defaults after it, and the stats line must count
the calls as mpi:recursive_doubling; with plain passthrough the defaults
inside too, and no such count; and with the user's own
MPICH_ALLREDUCE_INTRA_ALGORITHM their value, and one warning that their
setting wins.

    profile_choice_mpich.py BY_RANK_SH FRONT MPIEXEC -- APP
"""
import re
import subprocess
import sys

RANKS = 2
RD = "multilane-profile 1; host 0 inf passthrough mpi=recursive_doubling"
PLAIN = "multilane-profile 1; host 0 inf passthrough"
WARNING = (r"^multilane: warning: the profile names the system MPI.s own algorithm \(mpi=recursive_doubling\) but on "
           r"rank 0 of the communicator you set MPICH_ALLREDUCE_INTRA_ALGORITHM")
# A selection file variable set, empty, on rank 1 only: MPICH ignores it, yet
# it is the user's setting there, so that rank cannot apply the profile's.
MIXED_WARNING = (r"^multilane: warning: the profile names the system MPI.s own algorithm \(mpi=recursive_doubling\) "
                 r"but on rank 1 of the communicator you set MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE")


def run(mpiexec, app, env, front=None, by_rank=()):
    cmd = [mpiexec, "-n", str(RANKS)]
    for k, v in env.items():
        cmd += ["-genv", k, v]
    if front:
        cmd += ["-genv", "LD_PRELOAD", front, "-genv", "MULTILANE_ALL_RANKS", "1"]
    cmd += list(by_rank) + [app]
    print(" ".join(cmd), flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    print(p.stdout[-2000:], p.stderr[-2000:], sep="\n")
    assert p.returncode == 0, f"cvar_seen_app exited with status {p.returncode}"
    seen = re.findall(r"^cvar-seen: rank \d+ inside=(-?\d+),(-?\d+) after=(-?\d+),(-?\d+) wrong=0$", p.stdout, re.M)
    assert len(seen) == RANKS, f"expected {RANKS} exact results, got {len(seen)}"
    assert len(set(seen)) == 1, f"the ranks saw different variables: {seen}"
    inside, after = tuple(map(int, seen[0][:2])), tuple(map(int, seen[0][2:]))
    return inside, after, len(re.findall(WARNING, p.stderr, re.M)), p.stderr


def main():
    by_rank, front, rest = sys.argv[1], sys.argv[2], sys.argv[3:]
    sep = rest.index("--")
    mpiexec, app = rest[0], rest[sep + 1]
    defaults, _, _, _ = run(mpiexec, app, {})
    chosen, _, _, _ = run(mpiexec, app, {"MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM": "recursive_doubling",
                                      "MPIR_CVAR_DEVICE_COLLECTIVES": "none"})
    assert chosen != defaults, f"MPICH's own setting changed nothing: {chosen}"

    inside, after, _, err = run(mpiexec, app, {"MULTILANE_PROFILE": RD, "MULTILANE_STATS": "1"}, front)
    assert inside == chosen, f"mpi=recursive_doubling: MPICH saw {inside} inside the call, expected {chosen}"
    assert after == defaults, f"mpi=recursive_doubling: the variables were not put back: {after}, expected {defaults}"
    # The stats line counts the calls the profile's algorithm ran, as part of passthrough.
    ran = re.findall(r"^multilane: stats: rank 0: calls=\d+ passthrough=(\d+) mpi:recursive_doubling=(\d+) ", err, re.M)
    assert len(ran) == 1 and ran[0][0] == ran[0][1] != "0", f"expected passthrough=N mpi:recursive_doubling=N: {ran}"
    inside, _, _, err = run(mpiexec, app, {"MULTILANE_PROFILE": PLAIN, "MULTILANE_STATS": "1"}, front)
    assert inside == defaults, f"plain passthrough: MPICH saw {inside}, expected its defaults {defaults}"
    assert "mpi:" not in err, "plain passthrough: the stats line must name no system algorithm"

    users, _, _, _ = run(mpiexec, app, {"MPICH_ALLREDUCE_INTRA_ALGORITHM": "nb"})
    inside, _, warnings, _ = run(mpiexec, app, {"MULTILANE_PROFILE": RD, "MPICH_ALLREDUCE_INTRA_ALGORITHM": "nb"}, front)
    assert inside == users, f"the user's MPICH_ALLREDUCE_INTRA_ALGORITHM must win: saw {inside}, theirs gives {users}"
    assert warnings == 1, f"expected one warning that mpi=recursive_doubling is not applied, saw {warnings}"

    # Ranks that differ in a setting outside the start-up agreement: every
    # rank runs MPICH's own choice (run() checks that all saw the same), and
    # the lowest rank that cannot apply it says so, once.
    inside, _, _, err = run(mpiexec, app, {"MULTILANE_PROFILE": RD}, front,
                            [by_rank, "1", "::", "MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE=", "::"])
    assert inside == defaults, f"rank 1 keeps a setting of its own: every rank must run MPICH's default, saw {inside}"
    assert len(re.findall(MIXED_WARNING, err, re.M)) == 1, "expected one warning from rank 1"
    assert len(re.findall("multilane: warning", err)) == 1, "expected exactly one warning"
    print("profile_choice_mpich: ok")


if __name__ == "__main__":
    main()
