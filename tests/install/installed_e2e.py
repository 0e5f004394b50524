#!/usr/bin/python3
"""End to end against the INSTALLED Debian packages (multilane,
slurm-spank-multilane), with the source and build trees out of reach.

    installed_e2e.py --work DIR

deb_e2e.sh runs it from a copy in DIR (with local-slurm.sh and
layout_probe.c beside it), in a mount namespace where the source tree is
hidden under an empty tmpfs: a path into the build tree cannot work here.
Every program comes from /usr: the command, the probe, the library, the
plugin (named by the plugstack line the package ships), the cli_filter.

Steps:
  1. `multilane tune --system` (small budget) publishes into the system
     database the package made (/var/lib/multilane/profiles.db);
  2. `multilane doctor` exits 0 and names the installed library and probe;
  3. `multilane run -- mpirun ...` of an MPI program built against the
     installed header: the library is injected from /usr (its /proc maps),
     and with MULTILANE_ALGO=lane every call runs the lane algorithm (the
     2-core tune keeps the system MPI, so the profile alone runs passthrough);
  3b. MPICH from multilane-mpich: `multilane tune --mpi mpich` into a user
     database, then `multilane run -- mpiexec.mpich` of the same program built
     with mpicc.mpich: the front picks the MPICH build and every call runs lane;
  4. a local Slurm whose plugstack.conf holds the line of
     /etc/slurm/plugstack.conf.d/multilane.conf, uncommented as the admin
     does, and the installed cli_filter.lua: `sbatch --gpus=2 --multilane`
     gets the tuned tasks per GPU and every rank runs with the library;
  5. `srun --multilane=report:DIR` writes a job report that the installed
     `multilane report` reads.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

ARGS = None
LIBDIR = "/usr/lib/x86_64-linux-gnu"
SYSTEM_DB = "/var/lib/multilane/profiles.db"
PLUGSTACK = "/etc/slurm/plugstack.conf.d/multilane.conf"


def log(msg):
    print(msg, flush=True)


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


def env_base():
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("MULTILANE_") and k not in ("LD_PRELOAD", "LD_LIBRARY_PATH")}
    env.update({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
                "OMPI_MCA_rmaps_base_oversubscribe": "1", "OMPI_MCA_btl_base_warn_component_unused": "0",
                "PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": ARGS.work})
    return env


def run(cmd, env=None, timeout=300, check_rc=True, cwd=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env or env_base(), timeout=timeout,
                       cwd=cwd or ARGS.work)
    if check_rc and p.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} exited {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}")
    return p


def assert_not_hidden_tree(text, what):
    check(ARGS.hidden not in text, f"{what} names the source/build tree {ARGS.hidden}:\n{text}")


def rank_lines(text):
    rows = []
    for line in text.splitlines():
        if line.startswith("rank="):
            rows.append(dict(kv.split("=", 1) for kv in line.split()))
    return sorted(rows, key=lambda r: int(r["rank"]))


def step_doctor():
    check(os.path.realpath(shutil.which("multilane", path=env_base()["PATH"])) == "/usr/bin/multilane",
          "multilane on PATH is not /usr/bin/multilane")
    check(not os.path.exists(ARGS.hidden + "/CMakeLists.txt"), f"the source tree {ARGS.hidden} is still visible")
    p = run(["multilane", "doctor"], check_rc=False)
    log(p.stdout + p.stderr)
    check(p.returncode == 0, f"multilane doctor exited {p.returncode} on a good installed setup")
    check(f"{LIBDIR}/libmlallreduce.so.0" in p.stdout, "doctor does not name the installed library")
    check("/usr/libexec/multilane/mlprobe" in p.stdout, "doctor does not name the installed probe")
    assert_not_hidden_tree(p.stdout + p.stderr, "doctor")


def step_tune():
    p = run(["multilane", "tune", "--system", "--budget", "3", "--sizes", "64K:256K", "--np", "2",
             "--virtual-nodes", "1", "--ranks-per-gpu", "2"], timeout=600)  # the system database takes no oversubscribed profile
    log((p.stdout + p.stderr)[-2000:])
    check(os.path.exists(SYSTEM_DB), f"tune --system did not write {SYSTEM_DB}")
    r = run(["multilane", "resolve", "--db", SYSTEM_DB, "--partition", "gpu", "--any-node-type"], check_rc=False)
    log(r.stdout + r.stderr)
    s = run(["multilane", "show", "--db", SYSTEM_DB])
    check("profile" in s.stdout, f"multilane show lists no profile:\n{s.stdout}")


def build_probe():
    """layout_probe.c (the Slurm tests' MPI program) built with mpicc against
    the installed header only."""
    exe = os.path.join(ARGS.work, "layout_probe")
    run(["mpicc", "-O1", os.path.join(ARGS.work, "layout_probe.c"), "-o", exe, "-ldl"])
    return exe


def mapped_libraries(text):
    return sorted(set(re.findall(r"(/\S*libmlallreduce\S*)", text)))


def step_run(probe):
    p = run(["multilane", "run", "--", "mpirun", "-np", "4", "-x", "MULTILANE_RANKS_PER_NODE=2", probe, "3"])
    log(p.stdout + p.stderr)
    rows = rank_lines(p.stdout)
    check(len(rows) == 4 and all(r["ok"] == "1" and r["preload"] == "1" and r["calls"] == "3" for r in rows),
          f"multilane run did not run every rank with the library: {rows}")
    # A real algorithm from the installed library (issue 27: every installed
    # run was passthrough).
    p = run(["multilane", "run", "--", "mpirun", "-np", "4", "-x", "MULTILANE_RANKS_PER_NODE=2",
             "-x", "MULTILANE_ALGO=lane", probe, "3"])
    log(p.stdout + p.stderr)
    rows = rank_lines(p.stdout)
    check(len(rows) == 4 and all(r["ok"] == "1" and r["calls"] == "3" and r["lane"] == "3" and r["passthrough"] == "0"
                                 for r in rows),
          f"MULTILANE_ALGO=lane under multilane run did not run lane on every call: {rows}")
    p = run(["multilane", "run", "--", "mpirun", "-np", "1", "cat", "/proc/self/maps"])
    libs = mapped_libraries(p.stdout)
    # cat makes no MPI call: the front alone, which opens a family build only
    # at a process's first MPI call.
    check(libs == [f"{LIBDIR}/libmlallreduce.so.0.1.0"], f"the library was mapped from {libs}")


def step_mpich():
    """An MPICH job from the packages: multilane-mpich's probe tunes, its
    library runs the lane algorithm under hydra."""
    exe = os.path.join(ARGS.work, "layout_probe_mpich")
    run(["mpicc.mpich", "-O1", os.path.join(ARGS.work, "layout_probe.c"), "-o", exe, "-ldl"])
    db = os.path.join(ARGS.work, "mpich.db")
    p = run(["multilane", "tune", "--mpi", "mpich", "--np", "2", "--virtual-nodes", "2", "--sizes", "64K:256K",
             "--budget", "5", "--db", db], timeout=600)
    log((p.stdout + p.stderr)[-1500:])
    check("mlprobe-mpich" in p.stdout + p.stderr, "the MPICH tune did not run the installed mlprobe-mpich")
    env = env_base()
    env.update({"MULTILANE_ALGO": "lane", "MULTILANE_RANKS_PER_NODE": "1", "MULTILANE_VERBOSE": "1"})
    # 2 ranks: MPICH's ch4 device polls without yielding (tests/mpich/CMakeLists.txt).
    p = run(["multilane", "run", "--db", db, "--", "mpiexec.mpich", "-n", "2", exe, "3"], env=env)
    out = p.stdout + p.stderr
    log(out)
    check(len([l for l in out.splitlines() if l.startswith("multilane: MPI family mpich (MPICH Version: ")]) == 1,
          "the front did not pick the installed MPICH build")
    rows = rank_lines(p.stdout)
    check(len(rows) == 2 and all(r["ok"] == "1" and r["preload"] == "1" and r["calls"] == "3" and r["lane"] == "3"
                                 for r in rows),
          f"the MPICH job did not run lane on every call: {rows}")
    assert_not_hidden_tree(out, "the MPICH job")


class Slurm:
    def __init__(self):
        self.dir = os.path.join(ARGS.work, "slurm")
        os.makedirs(self.dir, exist_ok=True)
        os.chmod(ARGS.work, 0o755)
        with open(PLUGSTACK) as f:
            lines = [l for l in f.read().splitlines() if re.match(r"^#\s*(optional|required)\s", l)]
        check(len(lines) == 1, f"{PLUGSTACK} does not hold one commented-out plugin line: {lines}")
        self.line = lines[0].lstrip("#").strip()
        check(self.line.split()[1].startswith(f"{LIBDIR}/slurm-wlm/spank_multilane.so"),
              f"the shipped line does not name the installed plugin: {self.line}")
        shutil.copy("/usr/share/multilane/cli_filter.lua", os.path.join(self.dir, "cli_filter.lua"))
        env = env_base()
        env["MLA_SLURM_CLI_FILTER"] = "1"
        # Ports of its own: the Slurm tests of a build may run at the same time.
        env["MLA_SLURMCTLD_PORT"], env["MLA_SLURMD_PORT"] = "16917", "16918"
        self.script = os.path.join(ARGS.work, "local-slurm.sh")
        p = subprocess.run(["bash", self.script, "start", self.dir, self.line], capture_output=True, text=True,
                           env=env, timeout=120)
        if p.returncode != 0:
            self.stop()
            raise AssertionError(f"local Slurm did not start:\n{p.stdout}\n{p.stderr}")
        self.env = env_base()
        self.env["SLURM_CONF"] = os.path.join(self.dir, "slurm.conf")
        log(f"slurm: plugstack line: {self.line}")

    def stop(self):
        subprocess.run(["bash", self.script, "stop", self.dir], capture_output=True, text=True, timeout=60)


def step_slurm(probe):
    s = Slurm()
    try:
        job = os.path.join(ARGS.work, "job.sh")
        out = os.path.join(ARGS.work, "job.out")
        with open(job, "w") as f:
            f.write("#!/bin/bash\necho batch ntasks=$SLURM_NTASKS\n"
                    f"srun --mpi=pmix {probe} 5\n"
                    "srun --mpi=pmix -n 1 cat /proc/self/maps\n")
        os.chmod(job, 0o755)
        p = run(["sbatch", "--wait", "-o", out, "--gpus=2", "--multilane", job], env=s.env, timeout=300,
                check_rc=False)
        text = open(out).read() if os.path.exists(out) else ""
        shown = "\n".join(l for l in text.splitlines() if not re.match(r"^[0-9a-f]+-[0-9a-f]+ ", l))
        log(f"--- sbatch --gpus=2 --multilane (exit {p.returncode})\n{p.stdout}{p.stderr}{shown}\n"
            f"(and the /proc/self/maps of one task: libmlallreduce from {mapped_libraries(text)})\n---")
        check(p.returncode == 0, "the --multilane job failed")
        check("batch ntasks=4" in text, "the installed cli_filter did not give 2 tasks per GPU (4 tasks)")
        rows = rank_lines(text)
        check(len(rows) == 4, f"expected 4 ranks, got {rows}")
        check([r["gpu"] for r in rows] == ["0", "0", "1", "1"], f"GPU binding {[r['gpu'] for r in rows]}")
        check(all(r["ok"] == "1" and r["preload"] == "1" and r["calls"] == "5" for r in rows),
              f"the ranks did not run with the library: {rows}")
        # The maps are cat's, which makes no MPI call: the front alone (as in
        # step_run); the ranks' counters above come from the Open MPI build
        # the front opened at their first MPI call.
        libs = mapped_libraries(text)
        check(libs == [f"{LIBDIR}/libmlallreduce.so.0.1.0"], f"the job's library was mapped from {libs}")
        check(not [l for l in text.splitlines() if "multilane:" in l], "the job printed multilane lines")

        reports = os.path.join(ARGS.work, "reports")
        os.makedirs(reports)
        run(["srun", "--gpus=2", f"--multilane=report:{reports}", probe, "3"], env=s.env)
        files = [f for f in os.listdir(reports) if f.endswith(".json")]
        check(len(files) == 1, f"expected one job report in {reports}, found {files}")
        doc = json.load(open(os.path.join(reports, files[0])))
        check(doc.get("format") == "multilane-job-report" and doc["job"]["ranks"] == 4, f"report: {doc.get('job')}")
        r = run(["multilane", "report", os.path.join(reports, files[0])])
        log(r.stdout)
        check("allreduce" in r.stdout and "4 rank(s)" in r.stdout, f"multilane report:\n{r.stdout}")
    finally:
        s.stop()


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True, help="the folder holding this script's copy")
    ap.add_argument("--hidden", required=True, help="the source tree, hidden in this mount namespace")
    ARGS = ap.parse_args()
    steps = [("tune", step_tune), ("doctor", step_doctor)]
    try:
        for name, fn in steps:
            log(f"=== {name}")
            fn()
        probe = build_probe()
        log("=== run")
        step_run(probe)
        log("=== mpich")
        step_mpich()
        log("=== slurm")
        step_slurm(probe)
    except (AssertionError, subprocess.TimeoutExpired) as e:
        print(f"FAIL: {e}")
        return 1
    print("PASS: the installed packages work with the build tree out of reach")
    return 0


if __name__ == "__main__":
    sys.exit(main())
