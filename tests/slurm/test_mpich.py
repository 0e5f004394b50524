#!/usr/bin/python3
"""Slurm end to end: an MPICH job under --multilane (built only with the MPICH
family).

    test_mpich.py CASE ARGS...  (or --list: the case names)

The local Slurm, the options and the shared steps are in slurm_fixtures.py."""
import sys

from slurm_fixtures import ARGS, Slurm, publish_profile, rank_lines, main
from e2e import check  # noqa: E402  (tests/e2e.py: slurm_fixtures puts it on the path)


def case_mpich_sbatch_multilane(root):
    """Issue 24: an MPICH job under `sbatch --multilane` runs with its MPICH
    profile.  The database holds this node type's Open MPI profile (every
    call to hier) and its MPICH profile (every call to lane); the step's
    program is linked with MPICH, so the plugin's look-up (`multilane resolve
    --program`) takes the MPICH profile and every allreduce runs lane.  The
    user's mpi:openmpi then wins over the program (hier), and a family
    without a profile is a miss that leaves the job exact and unchanged."""
    s = Slurm(root, {})
    try:
        publish_profile(s.db, ["host 0 inf hier"], 1, " ranks_per_gpu=1")
        job = f"srun --mpi=pmi2 {ARGS.probe_mpich} 5\n"
        # Before the MPICH profile exists: a miss for MPICH, not Open MPI's profile.
        p, out = s.sbatch(["--gpus=2", "--multilane=verbose"], job, name="mpich-miss")
        rows = rank_lines(out)
        check(p.returncode == 0 and len(rows) == 2, f"the MPICH job failed or lost ranks: {len(rows)} ranks")
        for r in rows:
            check(r["ok"] == "1" and r["hier"] == "0" and r["lane"] == "0",
                  f"rank {r['rank']}: an MPICH job ran Open MPI's profile: hier={r['hier']} lane={r['lane']}")
        publish_profile(s.db, ["host 0 inf lane"], 1, " ranks_per_gpu=1", family="mpich")
        for option, algo in (("--multilane", "lane"), ("--multilane=mpi:openmpi", "hier"), ("--multilane=mpi:mpich", "lane")):
            p, out = s.sbatch(["--gpus=2", option], job, name="mpich")
            check(p.returncode == 0, f"{option}: the job failed")
            rows = rank_lines(out)
            check(len(rows) == 2, f"{option}: expected 2 ranks (1 per GPU, the profile's), got {len(rows)}")
            for r in rows:
                check(r["ok"] == "1" and r["preload"] == "1", f"{option}: rank {r['rank']}: ok={r['ok']} preload={r['preload']}")
                check(r["calls"] == "5" and r[algo] == "5",
                      f"{option}: rank {r['rank']}: calls={r['calls']} {algo}={r[algo]} (lane={r['lane']} hier={r['hier']}), "
                      f"expected every call to run {algo}")
        r = s.cmd(["sbatch", "--wait", "--gpus=2", "--multilane=mpi:intel", "--wrap", "true"], check_rc=False)
        check(r.returncode != 0 and "'mpi:intel' is not valid: write mpi:FAMILY with FAMILY openmpi or mpich" in r.stderr,
              f"a bad family was not refused with the fix: {r.stderr}")
    finally:
        s.stop()


if __name__ == "__main__":
    sys.exit(main(globals()))
