#!/usr/bin/python3
"""End to end against the INSTALLED Debian packages (multilane,
slurm-spank-multilane), with the source and build trees out of reach.

    installed_e2e.py --work DIR --hidden SOURCE_TREE --version X.Y.Z --guide ADMIN_MD

deb_e2e.sh runs it from a copy in DIR (with local-slurm.sh, layout_probe.c,
guide_blocks.py and docs/admin.md beside it), in a mount namespace where the
source tree is hidden under an empty tmpfs: a path into the build tree
cannot work here.  Every program comes from /usr: the command, the probe,
the library, the plugin (named by the plugstack line the package ships), the
cli_filter.  The guide's tune, enable and disable blocks are read from
ADMIN_MD (guide_blocks.py) and run as written, with what this machine needs
added where the guide allows it (run_guide_block, step_tune_partition).

Steps, in the order of docs/admin.md (deb_e2e.sh installed the packages):
  1. a local Slurm whose plugstack.conf includes /etc/slurm/plugstack.conf.d
     (the package's file, its line still commented out): --multilane is not
     an option yet;
  2. the guide's tune block (`multilane tune --partition gpu`, for Open MPI
     and for MPICH) publishes into the system database the package made
     (/var/lib/multilane/profiles.db);
  3. the guide's enable block removes the '#' of the package's plugstack
     line and restarts slurmd; the admin copies the installed cli_filter.lua
     beside slurm.conf, adds CliFilterPlugins and runs `scontrol reconfigure`;
  4. `multilane doctor` exits 0, names the installed library and probe, and
     (with SLURM_CONF) the enabled plugin, cli_filter and partition profile;
  5. `sbatch --gpus=2 --multilane` gets the tuned tasks per GPU, every rank
     runs with the library, and slurmd's log has the plugin's job prolog line
     (what the restart is for); `srun --multilane=report:DIR` writes a job
     report that the installed `multilane report` reads;
  6. `multilane run -- mpirun ...` outside an allocation takes the partition's
     profile; with MULTILANE_ALGO=lane every call runs the lane algorithm;
  7. MPICH from multilane-mpich: `multilane tune --mpi mpich` into a user
     database, then `multilane run -- mpiexec.mpich`: the front picks the
     MPICH build and every call runs lane;
  8. the removal steps: the guide's disable block (the line commented out,
     slurmd restarted), the cli_filter removed; a job that still passes
     --multilane is refused, a plain one runs (deb_e2e.sh then removes the
     packages with the guide's removal block and purges them).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

# tests/e2e.py: deb_e2e.sh copies it beside this script (the tree is hidden
# while it runs); from the tree it is one folder up.
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from e2e import OPENMPI_TEST_ENV, check, home_variables, log, rank_lines, run as e2e_run  # noqa: E402
# guide_blocks.py: beside this script, in the tree and in deb_e2e.sh's copy.
sys.path.append(os.path.dirname(os.path.abspath(__file__)))
import guide_blocks  # noqa: E402

ARGS = None
LIBDIR = "/usr/lib/x86_64-linux-gnu"
SYSTEM_DB = "/var/lib/multilane/profiles.db"
PLUGSTACK = "/etc/slurm/plugstack.conf.d/multilane.conf"


def env_base():
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("MULTILANE_") and k not in ("LD_PRELOAD", "LD_LIBRARY_PATH")}
    # The work folder is the home: an XDG_STATE_HOME of the caller's would
    # outrank HOME and take the history and user database elsewhere (db/paths.cc).
    env.update(OPENMPI_TEST_ENV, OMPI_MCA_btl_base_warn_component_unused="0",
               PATH="/usr/sbin:/usr/bin:/sbin:/bin", **home_variables(ARGS.work))
    return env


def run(cmd, env=None, timeout=300, check_rc=True, cwd=None):
    """e2e.run in env_base() and the work folder unless told otherwise."""
    return e2e_run(cmd, check=check_rc, env=env or env_base(), timeout=timeout, cwd=cwd or ARGS.work)


def assert_not_hidden_tree(text, what):
    check(ARGS.hidden not in text, f"{what} names the source/build tree {ARGS.hidden}:\n{text}")


def step_doctor():
    check(os.path.realpath(shutil.which("multilane", path=env_base()["PATH"])) == "/usr/bin/multilane",
          "multilane on PATH is not /usr/bin/multilane")
    check(not os.path.exists(ARGS.hidden + "/CMakeLists.txt"), f"the source tree {ARGS.hidden} is still visible")
    version = run(["multilane", "--version"]).stdout.strip()
    check(version == ARGS.version, f"multilane --version says {version!r}, the package {ARGS.version}")
    p = run(["multilane", "doctor"], check_rc=False)
    log(p.stdout + p.stderr)
    check(p.returncode == 0, f"multilane doctor exited {p.returncode} on a good installed setup")
    check(f"{LIBDIR}/libmlallreduce.so.0" in p.stdout, "doctor does not name the installed library")
    check("/usr/libexec/multilane/mlprobe" in p.stdout, "doctor does not name the installed probe")
    assert_not_hidden_tree(p.stdout + p.stderr, "doctor")


def build_probe():
    """layout_probe.c (the Slurm tests' MPI program) built with mpicc against
    the installed header only."""
    exe = os.path.join(ARGS.work, "layout_probe")
    run(["mpicc", "-O1", os.path.join(ARGS.work, "layout_probe.c"), "-o", exe, "-ldl"])
    return exe


def mapped_libraries(text):
    return sorted(set(re.findall(r"(/\S*libmlallreduce\S*)", text)))


def step_run(probe):
    # Outside an allocation no partition is known: the profile `tune
    # --partition gpu` made serves (issue 26: it was a miss that said to probe).
    p = run(["multilane", "run", "--", "mpirun", "-np", "4", "-x", "MULTILANE_RANKS_PER_NODE=2", probe, "3"])
    log(p.stdout + p.stderr)
    check(re.search(r"multilane: profile \d+ of node type .*, partition gpu\)", p.stderr),
          f"multilane run outside an allocation did not take the partition's profile:\n{p.stderr}")
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
    check(libs == [f"{LIBDIR}/libmlallreduce.so.{ARGS.version}"], f"the library was mapped from {libs}")


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
    """A local Slurm whose plugstack.conf is Debian's (an include of
    /etc/slurm/plugstack.conf.d/*.conf, where the package's file is), with
    no cli_filter: the cluster as the packages leave it before the admin
    enables anything (docs/admin.md, "Install")."""

    def __init__(self):
        self.dir = os.path.join(ARGS.work, "slurm")
        os.makedirs(self.dir, exist_ok=True)
        os.chmod(ARGS.work, 0o755)
        env = env_base()
        env["MLA_SLURM_CLI_FILTER"] = "0"  # the admin adds it, below
        # Ports of its own: the Slurm tests of a build may run at the same
        # time.  The caller's MLA_SLURMCTLD_PORT and MLA_SLURMD_PORT win.
        env.setdefault("MLA_SLURMCTLD_PORT", "16917")
        env.setdefault("MLA_SLURMD_PORT", "16918")
        self.script = os.path.join(ARGS.work, "local-slurm.sh")
        p = subprocess.run(["bash", self.script, "start", self.dir, f"include {os.path.dirname(PLUGSTACK)}/*.conf"],
                           capture_output=True, text=True, env=env, timeout=120)
        if p.returncode != 0:
            self.stop()
            raise AssertionError(f"local Slurm did not start:\n{p.stdout}\n{p.stderr}")
        self.conf = os.path.join(self.dir, "slurm.conf")
        self.env = env_base()
        self.env["SLURM_CONF"] = self.conf

    def restart_slurmd(self):
        """`systemctl restart slurmd`, as the guide says after changing the plugstack line."""
        p = subprocess.run(["bash", self.script, "restart-slurmd", self.dir], capture_output=True, text=True,
                           env=self.env, timeout=120)
        check(p.returncode == 0, f"slurmd did not restart:\n{p.stdout}\n{p.stderr}")

    def slurmd_log(self):
        with open(os.path.join(self.dir, "log", "slurmd-localhost.log"), errors="replace") as f:
            return f.read()

    def stop(self):
        subprocess.run(["bash", self.script, "stop", self.dir], capture_output=True, text=True, timeout=60)


def check_plugstack_line(enabled):
    """The package's plugstack file holds one plugin line, naming the
    installed plugin, enabled (no '#') or not as expected; returns it."""
    with open(PLUGSTACK) as f:
        lines = [l for l in f.read().splitlines() if re.match(r"^#?\s*(optional|required)\s", l)]
    check(len(lines) == 1, f"{PLUGSTACK} does not hold one plugin line: {lines}")
    check(lines[0].startswith("#") != enabled,
          f"{PLUGSTACK}'s plugin line is {'' if enabled else 'not '}commented out where the guide's steps "
          f"{'enabled' if enabled else 'disabled'} it: {lines[0]}")
    check(lines[0].lstrip("#").split()[1].startswith(f"{LIBDIR}/slurm-wlm/spank_multilane.so"),
          f"the shipped line does not name the installed plugin: {lines[0]}")
    return lines[0]


def guide_commands(name):
    """The commands of the guide's block `name` (ARGS.guide), as argument lists."""
    with open(ARGS.guide) as f:
        text = guide_blocks.block(f.read(), name, ARGS.guide)
    log(f"docs/admin.md's '{name}' block:\n" + "".join("    " + l + "\n" for l in text.splitlines()))
    return guide_blocks.commands(text)


def run_guide_block(s, name):
    """Runs the guide's block `name` as written, but for `systemctl restart
    slurmd`: this machine runs the test's Slurm without systemd, so that
    command is the test Slurm's own restart of its slurmd (restart_slurmd)."""
    for argv in guide_commands(name):
        if argv == ["systemctl", "restart", "slurmd"]:
            log("(systemctl restart slurmd: the test Slurm's restart-slurmd, no systemd here)")
            s.restart_slurmd()
        else:
            check(argv[0] != "systemctl", f"the guide's '{name}' block runs {' '.join(argv)}, which this test "
                  "cannot map onto its Slurm: map it in run_guide_block")
            run(argv, env=s.env)


def set_cli_filter(s, enabled):
    """The guide's cli_filter steps: copy the installed cli_filter.lua beside
    slurm.conf and add CliFilterPlugins=cli_filter/lua, then `scontrol
    reconfigure`; removing multilane undoes both."""
    lua = os.path.join(s.dir, "cli_filter.lua")
    with open(s.conf) as f:
        conf = [l for l in f.read().splitlines() if not l.startswith("CliFilterPlugins=")]
    if enabled:
        shutil.copy("/usr/share/multilane/cli_filter.lua", lua)
        conf.append("CliFilterPlugins=cli_filter/lua")
    elif os.path.exists(lua):
        os.remove(lua)
    with open(s.conf, "w") as f:
        f.write("\n".join(conf) + "\n")
    run(["scontrol", "reconfigure"], env=s.env)


def step_slurm_before(s):
    """Installing changes nothing for jobs: --multilane is not an option yet."""
    p = run(["sbatch", "--wrap", "true", "--multilane"], env=s.env, check_rc=False)
    check(p.returncode != 0 and "unrecognized option" in p.stderr and "multilane" in p.stderr,
          f"--multilane before the admin enabled it:\n{p.stdout}{p.stderr}")


# What the guide's tunes get here, appended: this 2-core machine's tune (a
# 3 s budget, two sizes, 2 ranks as one node of 2 ranks per GPU; the system
# database takes no oversubscribed profile).  The guide must set none of them.
TEST_TUNE_OPTIONS = ["--budget", "3", "--sizes", "64K:256K", "--np", "2", "--virtual-nodes", "1",
                     "--ranks-per-gpu", "2"]


def step_tune_partition(s):
    """The guide's tune block: the partition tuned first, into the system
    database the package made, for every installed family (multilane-mpich
    is: doctor holds each family to a profile)."""
    families = []
    for argv in guide_commands("tune"):
        check(argv[:2] == ["multilane", "tune"] and "--partition" in argv,
              f"the guide's tune block has a command that is not `multilane tune --partition`: {argv}")
        set_here = [o for o in TEST_TUNE_OPTIONS[::2] if o in argv]
        check(not set_here, f"the guide's tune sets {set_here}, which this test sets for its 2-core machine")
        family = argv[argv.index("--mpi") + 1] if "--mpi" in argv else "openmpi"
        families.append(family)
        p = run(argv + TEST_TUNE_OPTIONS, env=s.env, timeout=600)
        log((p.stdout + p.stderr)[-2000:])
        check(os.path.exists(SYSTEM_DB), f"tune --partition did not write {SYSTEM_DB}")
        r = run(["multilane", "resolve", "--db", SYSTEM_DB, "--partition", "gpu", "--any-node-type", "--mpi", family])
        log(r.stdout + r.stderr)
        check("found=yes" in r.stdout, f"no {family} partition profile after the tune:\n{r.stdout}")
    check(sorted(families) == ["mpich", "openmpi"],
          f"the guide's tune block tunes {families}, not every installed family (openmpi, mpich)")
    s_ = run(["multilane", "show", "--db", SYSTEM_DB])
    check("profile" in s_.stdout, f"multilane show lists no profile:\n{s_.stdout}")


def step_enable(s):
    """The guide's enable block (remove the '#', restart slurmd), then the
    cli_filter."""
    check_plugstack_line(False)
    run_guide_block(s, "enable")
    log(f"slurm: plugstack line enabled: {check_plugstack_line(True)}")
    set_cli_filter(s, True)


def step_slurm_doctor(s):
    p = run(["multilane", "doctor"], env=s.env, check_rc=False)
    log(p.stdout + p.stderr)
    check(p.returncode == 0 and p.stdout.strip().endswith("all good"),
          f"multilane doctor exited {p.returncode} on the enabled cluster")
    check("the plugin loads and matches Slurm" in p.stdout and "settings match the plugstack line" in p.stdout,
          "doctor did not check the enabled plugin and cli_filter")
    check("partition gpu: profile" in p.stdout, "doctor does not see the partition's profile")


def step_slurm(s, probe):
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
    check(libs == [f"{LIBDIR}/libmlallreduce.so.{ARGS.version}"], f"the job's library was mapped from {libs}")
    check(not [l for l in text.splitlines() if "multilane:" in l], "the job printed multilane lines")
    # The job prolog ran the plugin in slurmd (where the per-job MPS daemon
    # starts): only a slurmd restarted after the plugstack edit does that.
    check(re.search(r"multilane: job script: option .*, multilane on", s.slurmd_log()),
          "slurmd's log has no job prolog line of the plugin: was slurmd restarted after the plugstack edit?")

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

    # The tuned profile of this 2-core machine keeps the system MPI: a user's
    # own MULTILANE_ALGO makes the installed library run an algorithm of its
    # own in a --multilane step, under this Slurm's PMIx.
    env = dict(s.env, MULTILANE_ALGO="lane")
    q = run(["srun", "--gpus=2", "--multilane", "--mpi=pmix", probe, "3"], env=env)
    rows = rank_lines(q.stdout)
    log(f"--- srun --multilane, MULTILANE_ALGO=lane\n{q.stdout}")
    check(len(rows) == 4 and all(r["ok"] == "1" and r["lane"] == "3" and r["passthrough"] == "0" for r in rows),
          f"the installed library did not run lane in a Slurm step: {rows}")


def step_disable(s, probe):
    """The guide's removal, before the packages go: its disable block
    (comment the line out, restart slurmd), then remove the cli_filter.
    Scripts that still pass --multilane are then refused (the guide says to
    find them first); the others run unchanged."""
    run_guide_block(s, "disable")
    check_plugstack_line(False)
    set_cli_filter(s, False)
    p = run(["sbatch", "--wrap", "true", "--multilane"], env=s.env, check_rc=False)
    check(p.returncode != 0 and "unrecognized option" in p.stderr,
          f"a --multilane job after the removal steps:\n{p.stdout}{p.stderr}")
    p = run(["srun", "-n", "2", probe, "2"], env=s.env)
    rows = rank_lines(p.stdout)
    check(len(rows) == 2 and all(r["ok"] == "1" and r["preload"] == "0" for r in rows),
          f"a plain job after the removal steps: {rows}")


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True, help="the folder holding this script's copy")
    ap.add_argument("--hidden", required=True, help="the source tree, hidden in this mount namespace")
    ap.add_argument("--version", required=True,
                    help="the installed multilane package's upstream version (deb_e2e.sh reads it from dpkg)")
    ap.add_argument("--guide", required=True, help="docs/admin.md, whose blocks the steps run (guide_blocks.py)")
    ARGS = ap.parse_args()
    # docs/admin.md in order: install (deb_e2e.sh), tune the partition,
    # enable the plugstack line and restart slurmd, the cli_filter, doctor,
    # jobs; then the removal steps (deb_e2e.sh removes the packages).
    s = None
    try:
        s = Slurm()
        log("=== slurm: before the admin enables multilane")
        step_slurm_before(s)
        log("=== the guide's tune block: tune --partition gpu, each family")
        step_tune_partition(s)
        log("=== the guide's enable block: plugstack line, slurmd restart; the cli_filter")
        step_enable(s)
        log("=== doctor")
        step_doctor()
        step_slurm_doctor(s)
        probe = build_probe()
        log("=== slurm jobs")
        step_slurm(s, probe)
        log("=== run (outside an allocation: the partition's profile)")
        step_run(probe)
        log("=== mpich")
        step_mpich()
        log("=== removal steps")
        step_disable(s, probe)
    except (AssertionError, subprocess.TimeoutExpired, guide_blocks.GuideError) as e:
        print(f"FAIL: {e}")
        return 1
    finally:
        if s is not None:
            s.stop()
    print("PASS: the installed packages work with the build tree out of reach")
    return 0


if __name__ == "__main__":
    sys.exit(main())
