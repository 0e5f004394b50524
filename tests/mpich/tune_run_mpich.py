#!/usr/bin/python3
"""`multilane tune --mpi mpich` then `multilane run` of MPICH and Open MPI jobs.

Usage: tune_run_mpich.py MULTILANE PLAIN_MPICH PLAIN_OPENMPI WORKDIR

The tune probes with mlprobe-mpich under mpiexec.mpich (2 ranks as 2 virtual
nodes of 1) and stores a profile for MPICH's version; `run` of an
mpiexec.mpich job finds it and the front picks the MPICH build; `run` of an
Open MPI job misses it (profiles of one MPI are misses for the other) and
runs the job unchanged.  An `mpirun` that is hydra (a script: neither its
name nor a link tells) gets -genv and the MPICH profile (issue 23 N5), and a
wrapper script that starts the job gets the library through its
environment.  Every job must print its ranks' "ok" lines.
"""
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from e2e import check, run_shown  # noqa: E402

multilane, plain_mpich, plain_openmpi, work = sys.argv[1:5]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
db = os.path.join(work, "profiles.db")
env = dict(os.environ, MULTILANE_VERBOSE="1")


def run(cmd, run_env=None):
    """The command's stdout and stderr, logged; it must succeed."""
    p = run_shown(cmd, "tune_run_mpich", env=run_env or env, timeout=240)
    check(p.returncode == 0, f"{' '.join(cmd)}: exit status {p.returncode}")
    return p.stdout + p.stderr


def lines(text, start):
    return [l for l in text.splitlines() if l.startswith(start)]


out = run([multilane, "tune", "--mpi", "mpich", "--np", "2", "--virtual-nodes", "2", "--sizes", "64K:256K",
           "--budget", "30", "--db", db])
check("MPI MPICH Version: " in out, "the fingerprint does not name MPICH")
check("multilane tune: mpiexec.mpich -genv MULTILANE_ALL_RANKS 1 -genv MULTILANE_RANKS_PER_NODE 1 -n 2 " in out and "mlprobe-mpich" in out,
      "the tune did not probe with MPICH (hydra's -genv, its -n)")
check(lines(out, "profile 1 stored in"), "no profile stored")

out = run([multilane, "run", "--db", db, "--", "mpiexec.mpich", "-n", "2", plain_mpich])
check(len(lines(out, "multilane: profile 1 of node type")) == 1, "the MPICH job did not get the MPICH profile")
check(len(lines(out, "multilane: MPI family mpich (MPICH Version: ")) == 1, "the front did not pick the MPICH build")
check(len(lines(out, "plain_allreduce ok rank")) == 2, "not every rank finished right")

# Issue 23 N5: an `mpirun` that is hydra (MPICH as the default MPI, Intel
# MPI): a script here, so that neither its name nor a link tells.  It gets
# hydra's -genv, never Open MPI's -x (which hydra refuses), and the MPICH
# profile.
bindir = os.path.join(work, "bin")
os.makedirs(bindir)
with open(os.path.join(bindir, "mpirun"), "w") as f:
    f.write("#!/bin/sh\nexec mpiexec.hydra \"$@\"\n")
os.chmod(os.path.join(bindir, "mpirun"), 0o755)
hydra_env = dict(env, PATH=bindir + ":" + os.environ["PATH"])
out = run([multilane, "run", "--db", db, "--dry-run", "--", "mpirun", "-n", "2", plain_mpich], run_env=hydra_env)
check("command: mpirun -genv LD_PRELOAD " in out and " -x " not in out, "hydra's mpirun did not get -genv")
# The profile's entries as the dry run passes them (MULTILANE_PROFILE=..., up to
# the blank line): how many the tune made depends on what won (a system
# algorithm of MPICH's may win a size, issue 28).
profile = out.split("MULTILANE_PROFILE=", 1)[1].split("\n\n", 1)[0]
entries = len([l for l in profile.splitlines() if l.startswith(("host ", "device "))])
check(entries >= 1, f"the dry run passes no profile entry: {profile}")
out = run([multilane, "run", "--db", db, "--", "mpirun", "-n", "2", plain_mpich], run_env=hydra_env)
check(len(lines(out, "multilane: profile 1 of node type")) == 1, "the hydra mpirun job did not get the MPICH profile")
check(len(lines(out, "multilane: MPI family mpich (MPICH Version: ")) == 1, "the front did not pick the MPICH build")
check(len(lines(out, "multilane: version ")) == 1 and f"profile from MULTILANE_PROFILE ({entries} {'entry' if entries == 1 else 'entries'})" in out,
      "the profile did not reach the ranks whole through -genv")
check(len(lines(out, "plain_allreduce ok rank")) == 2, "not every rank of the hydra mpirun job finished right")

# A wrapper script that starts the job itself: run unchanged, the library's
# variables reach it (and hydra's ranks) through the environment.
wrapper = os.path.join(work, "wrapper.sh")
with open(wrapper, "w") as f:
    f.write("#!/bin/sh\nexec mpiexec.mpich -n 2 \"$@\"\n")
os.chmod(wrapper, 0o755)
out = run([multilane, "run", "--db", db, "--mpi", "mpich", "--", wrapper, plain_mpich])
check(len(lines(out, "multilane: MPI family mpich (MPICH Version: ")) == 1, "the wrapper's ranks missed the library")
check(len(lines(out, "plain_allreduce ok rank")) == 2, "not every rank of the wrapper's job finished right")

out = run([multilane, "run", "--db", db, "--", "mpirun", "-np", "2", plain_openmpi])
check(len(lines(out, "multilane: no profile for node type")) == 1, "the Open MPI job did not miss the MPICH profile")
check("MPI Open MPI v" in out, "the miss does not name Open MPI")
check(len(lines(out, "plain_allreduce ok rank")) == 2, "not every rank finished right")
print("tune_run_mpich: ok")
