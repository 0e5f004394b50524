#!/usr/bin/python3
"""The shared part of the Slurm end-to-end tests (tests/slurm/test_*.py, one
file per feature): a local Slurm with spank_multilane.so (munge, slurmctld,
slurmd on localhost, started by scripts/slurm/local-slurm.sh), with Debian's
Open MPI under `srun --mpi=pmix`; the profiles the cases publish; and main(),
which runs one case.

    test_FEATURE.py CASE --source DIR --multilane ... (CMake passes them)
    test_FEATURE.py --list                            (the case names)

Each case starts its own Slurm in a fresh folder and stops it at the end.
The node claims 8 CPUs and 2 fake GPUs (character devices), so the layout
(tasks per GPU, CUDA_VISIBLE_DEVICES, CPU binding) is real Slurm behaviour;
what runs on the "GPUs" is host-memory MPI.

A cluster of more than one node runs on network namespace nodes
(`local-slurm.sh --nodes N --netns --rails 2 --rate 10gbit`): each node
has its own address and two shaped rails, Open MPI's TCP is kept on the
rails (OMPI_MCA_btl_tcp_if_include=rail0,rail1), and a case that moves MPI
data between the nodes checks with Slurm.rail_counters / check_rails that
bytes crossed every rail (or the rails together, for mostly small
messages).  MLA_SLURMCTLD_PORT and MLA_SLURMD_PORT, when set, move the
cluster's ports (a second checkout's tests beside CI's); a cluster whose
case CTest killed is stopped by the next case's start (MLA_SLURM_OWNER).
"""
import argparse
import hashlib
import json
import os
import pwd
import re
import shutil
import subprocess
import sys
import tempfile
import time

ARGS = argparse.Namespace()  # the command line, filled in by main()
TEST_USER = "mltest"


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from e2e import cases_in, check, home_variables, listed, log, rank_lines, run, run_case  # noqa: E402,F401  (tests/e2e.py, the scripts' shared helpers; rank_lines for the feature scripts)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "slurm"))
import netns_check  # noqa: E402  (scripts/slurm/netns_check.py: the rails' byte counters)

# Multi-node clusters run on network namespace nodes with this many rails.
RAILS = 2
# The rate each rail is shaped to (local-slurm.sh --rate): far above what the
# tests' steps move on the 2-core machine, so that the shaping never slows a
# test down against loopback; the tests check the rails' counters, not their
# speed (a measurement starts its own cluster at the rate it studies).
RAIL_RATE = "10gbit"
# The bytes each rail must carry on each node in a step that moves MPI data
# between the nodes, and the rails together each way (check_rails): far
# above what reaches an idle rail (nothing: IPv6 is off there, and ARP
# frames are 42 B), far below a step's allreduces.
RAIL_MIN_BYTES = 64 * 1024


class Slurm:
    """A local Slurm with the plugin in a test-owned plugstack.conf."""

    def __init__(self, root, plugin_args, cli_filter=True, required=True, nodes=1, mpi_default=None, nice=0):
        self.root = root
        self.nodes = nodes
        self.dir = os.path.join(root, "slurm")
        self.db = os.path.join(root, "system", "profiles.db")
        os.makedirs(os.path.dirname(self.db), exist_ok=True)
        os.chmod(root, 0o1777)  # the second user's jobs write their output here
        os.chmod(os.path.dirname(self.db), 0o755)
        args = {
            "library": ARGS.library,
            "multilane": ARGS.multilane,
            "database": self.db,
        }
        args.update(plugin_args)
        words = " ".join(f"{k}={v}" for k, v in args.items() if v is not None)
        line = f"{'required' if required else 'optional'} {ARGS.plugin} {words}"
        env = dict(os.environ)
        env["MLA_SLURM_CLI_FILTER"] = "1" if cli_filter else "0"
        script = os.path.join(ARGS.source, "scripts", "slurm", "local-slurm.sh")
        os.makedirs(self.dir, exist_ok=True)
        if cli_filter:
            with open(os.path.join(ARGS.source, "spank", "cli_filter.lua")) as f:
                lua = f.read()
            lua = re.sub(r'^local MULTILANE = .*$', f'local MULTILANE = "{ARGS.multilane}"', lua, flags=re.M)
            lua = re.sub(r'^local DATABASE = .*$', f'local DATABASE = "{self.db}"', lua, flags=re.M)
            default = plugin_args.get("default") or "off"
            lua = re.sub(r'^local DEFAULT = .*$', f'local DEFAULT = "{default}"', lua, flags=re.M)
            with open(os.path.join(self.dir, "cli_filter.lua"), "w") as f:
                f.write(lua)
        self.env = dict(os.environ)
        self.env["SLURM_CONF"] = os.path.join(self.dir, "slurm.conf")
        for k in list(self.env):
            if k.startswith("MULTILANE_") or k.startswith("SLURM_SPANK") or k == "LD_PRELOAD":
                del self.env[k]
        # The case's own home: jobs get the submitter's HOME and XDG_*
        # (sbatch and srun --export=ALL; with --export=NONE slurmd would give
        # them the user's home from the password file, the real one), and
        # with them the user's database and job history (db/paths.cc).  A
        # job report of two_nodes_sbatch_multilane went into the real
        # ~/.local/state/multilane/history without it (issue 41).
        home = os.path.join(root, "home")
        os.makedirs(home, exist_ok=True)
        self.env.update(home_variables(home))
        # Open MPI ranks yield when idle: the test nodes claim 8 CPUs on a
        # 2-core machine, and under srun (unlike mpirun --oversubscribe)
        # nothing tells Open MPI so; a spinning rank starves the others.
        self.env["OMPI_MCA_mpi_yield_when_idle"] = "1"
        nodes_args = []
        if nodes > 1:
            # Nodes with a network of their own (local-slurm.sh --netns):
            # each node a network namespace with its own address (mgmt, what
            # Slurm uses) and RAILS shaped NICs; Open MPI's TCP between the
            # nodes on the rails only (not mgmt, not loopback), spread over
            # them.  check_rails() counts the bytes each rail moved.
            nodes_args = ["--nodes", str(nodes), "--netns", "--rails", str(RAILS), "--rate", RAIL_RATE]
            self.env["OMPI_MCA_btl_tcp_if_include"] = ",".join(f"rail{r}" for r in range(RAILS))
        self.script = script
        start = ["bash", script, "start", self.dir] + nodes_args
        if nice:  # the daemons, and so the jobs' tasks, at this niceness (root only)
            start = ["nice", "-n", str(nice)] + start
        start += (["--mpi-default", mpi_default] if mpi_default else []) + [line]
        # The ports come from MLA_SLURMCTLD_PORT and MLA_SLURMD_PORT when set
        # (env is this process's environment): a second checkout's tests
        # beside CI's move them.  This process owns the cluster: should CTest
        # kill it on its timeout before stop(), the next start of a cluster
        # stops this one and removes its namespaces and bridges.
        env["MLA_SLURM_OWNER"] = str(os.getpid())
        p = subprocess.run(start, capture_output=True, text=True, env=env, timeout=120)
        if p.returncode != 0:
            self.stop()
            raise AssertionError(f"local Slurm did not start:\n{p.stdout}\n{p.stderr}")
        log(f"slurm: started in {self.dir}; plugstack: {line}")

    def stop(self):
        """Stops the daemons and, for namespace nodes, removes the
        namespaces, veths and bridges; a case calls it in `finally`, so a
        failing case leaves nothing running either."""
        p = subprocess.run(["bash", self.script, "stop", self.dir], capture_output=True, text=True, timeout=60)
        if p.returncode != 0:
            log(f"local-slurm.sh stop {self.dir}: exit {p.returncode}\n{p.stdout}{p.stderr}")

    def rail_counters(self):
        """The byte counters of every node's mgmt and rail interfaces
        (netns_check.py's reader): take them before a step that moves MPI
        data between the nodes and give them to check_rails after it."""
        check(self.nodes > 1, "rail counters: a one-node cluster has no rails")
        return netns_check.read_counters(self.dir)

    def check_rails(self, before, what, every_rail=True, min_bytes=RAIL_MIN_BYTES):
        """Checks that the MPI traffic of WHAT (the steps run since BEFORE,
        from rail_counters) crossed the rails: each node's rails together
        sent and received at least MIN_BYTES each way, and with EVERY_RAIL
        each rail of each node moved at least MIN_BYTES (sent and received
        together).  What is true of both platforms' Open MPI (measured on
        these test steps): a message above the TCP eager limit (64 KiB) is
        striped over both rails, the smaller ones go on one rail (rail1; 0 B
        on rail0 in every run of the MPI suite, 11-37 MB on rail1, with 4.1.4
        and 5.0.7 alike), so a step of mostly small messages passes
        every_rail=False.  Which way the striped bytes go is not fixed: in
        some steps of 256 KiB allreduces only one node's sends were striped
        and the other node's went on rail1 (rail0 carried 2-19 KB one way
        against 0.2-4.5 MB the other: 4.1.4 in the probe under lane once;
        5.0.7 in every run of its own allreduce, the jobs that are not all
        in and mlprobe's system algorithms), while the other steps, tune's
        probe job among them (40-132 MB each way on each rail), striped
        both ways; hence a rail's two directions counted together.  The rails
        carry nothing else (IPv6 is off there; an ARP frame is 42 B).  Logs
        every interface's bytes, mgmt included."""
        change = netns_check.counter_change(before, netns_check.read_counters(self.dir))
        lines = [f"{node} {i}: tx {c['tx_bytes']:,} B rx {c['rx_bytes']:,} B"
                 for node, ifs in change.items() for i, c in ifs.items()]
        log(f"--- {what}: bytes on the nodes' interfaces\n  " + "\n  ".join(lines))
        short = []
        for node, ifs in change.items():
            rails = {i: c for i, c in ifs.items() if i.startswith("rail")}
            both = {k: sum(c[k] for c in rails.values()) for k in ("tx_bytes", "rx_bytes")}
            short += [f"{node} rails together {k} {v:,} B" for k, v in both.items() if v < min_bytes]
            if every_rail:
                short += [f"{node} {i} tx+rx {c['tx_bytes'] + c['rx_bytes']:,} B" for i, c in rails.items()
                          if c["tx_bytes"] + c["rx_bytes"] < min_bytes]
        want = "on each rail (tx+rx) and " if every_rail else ""
        check(not short, f"{what}: the MPI traffic between the nodes did not cross "
              f"{'every rail' if every_rail else 'the rails'} "
              f"(OMPI_MCA_btl_tcp_if_include={self.env.get('OMPI_MCA_btl_tcp_if_include')}; "
              f"want at least {min_bytes:,} B {want}each way on the rails together, on each node): " + "; ".join(short))

    def cmd(self, args, check_rc=True, user=None, timeout=300, cwd=None):
        return run(args, check=check_rc, env=self.env, user=user, timeout=timeout, cwd=cwd or self.root)

    def sbatch(self, options, script_body, user=None, name="job"):
        """Submits a batch script and waits for the job to end; returns
        (CompletedProcess, output file text).  The returncode is the job's
        exit code, or sbatch's own when the submission was refused."""
        out = os.path.join(self.root, f"{name}.out")
        path = os.path.join(self.root, f"{name}.sh")
        with open(path, "w") as f:
            f.write("#!/bin/bash\n" + script_body)
        os.chmod(path, 0o755)
        if os.path.exists(out):
            os.remove(out)
        p = self.cmd(["sbatch", "--parsable", "-o", out] + options + [path], check_rc=False, user=user)
        if p.returncode == 0:
            p.returncode = self.wait_job(p.stdout.strip().split(";")[0])
        text = open(out).read() if os.path.exists(out) else ""
        log(f"--- sbatch {' '.join(options)} (exit {p.returncode})\n{p.stdout}{p.stderr}{text}---")
        return p, text


    def wait_job(self, job, timeout=300):
        """The exit code of JOB once Slurm reports it ended (128 + the
        signal that ended it, 1 when it ended otherwise without a code).
        Polled every 0.2 s: `sbatch --wait` sleeps 2 s between its polls."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            q = self.cmd(["scontrol", "-o", "show", "job", job], check_rc=False)
            state = re.search(r"\bJobState=(\S+)", q.stdout)
            check(q.returncode == 0 and state, f"job {job} has no record: {q.stdout}{q.stderr}")
            if state.group(1) not in ("PENDING", "CONFIGURING", "RUNNING", "SUSPENDED", "REQUEUED", "RESIZING"):
                code, sig = map(int, re.search(r"\bExitCode=(\d+):(\d+)", q.stdout).groups())
                rc = code or (128 + sig if sig else 0)
                return rc if rc or state.group(1) in ("COMPLETED", "COMPLETING") else 1
            time.sleep(0.2)
        raise AssertionError(f"job {job} did not end in {timeout} s")


def probe_env():
    env = dict(os.environ)
    env["MULTILANE_LIBRARY"] = ARGS.library
    env["MULTILANE_PROBE"] = ARGS.mlprobe
    return env


def tuned_db(tune_args):
    """A database made by a real `multilane tune --db DB TUNE_ARGS` (not via
    Slurm), once per CTest run for each TUNE_ARGS: the first case that asks
    tunes into --tune-cache (emptied by the fixture test slurm_tune_cache
    before the Slurm cases run), the others reuse it; every case imports its
    own copy of the profile."""
    key = hashlib.sha256("\0".join(tune_args).encode()).hexdigest()[:16]
    folder = os.path.join(ARGS.tune_cache, key)
    if not os.path.isdir(folder):
        work = folder + ".work"  # a folder: the database's side files move with it
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        run([ARGS.multilane, "tune", "--db", os.path.join(work, "tuned.db")] + tune_args, env=probe_env(), timeout=300)
        os.rename(work, folder)
    return os.path.join(folder, "tuned.db")


def publish_lane_profile(db, partition=""):
    """Tunes this node type for real (a short budget), then publishes a copy
    of that profile whose table sends every host call to `lane`, so that the
    tests can tell from the library's counters that its profile was used."""
    publish_tuned_copy(db, ["--budget", "3", "--sizes", "64K:256K", "--np", "4", "--allow-oversubscribed",
                            "--virtual-nodes", "2", "--ranks-per-gpu", "2"] + (["--partition", partition] if partition else []),
                       ["host 0 inf lane"])


def publish_profile(db, lines, ranks_per_gpu, header_extra="", family="openmpi"):
    """Publishes a profile of this node type with the given entry lines
    (MEMORY FROM TO ALGO [ppg=N]) and ranks per GPU, made from a real short
    tune with FAMILY's MPI (for the node type and versions) as
    publish_lane_profile does."""
    publish_tuned_copy(db, ["--mpi", family, "--budget", "3", "--sizes", "64K:256K", "--np", "2", "--memory", "host"],
                       lines, header_extra, ranks_per_gpu)


def publish_tuned_copy(db, tune_args, lines, header_extra="", ranks_per_gpu=None):
    """Imports into DB a copy of the profile tuned_db(TUNE_ARGS) holds, its
    table replaced by LINES (MEMORY FROM TO ALGO [ppg=N]), HEADER_EXTRA added
    to its header line, its ranks per GPU set unless None, and dated after
    anything tuned for real."""
    tmp = tempfile.mkdtemp(prefix="mltune-")
    tuned = tuned_db(tune_args)
    doc_path = os.path.join(tmp, "profiles.json")
    run([ARGS.multilane, "export", "--db", tuned, doc_path])
    doc = json.load(open(doc_path))
    prof = doc["profiles"][0]
    prof["profile_text"] = prof["profile_text"].splitlines()[0] + header_extra + "\n" + "".join(l + "\n" for l in lines)
    prof["entries"] = []
    for l in lines:
        w = l.split()
        ppg = int(w[4][4:]) if len(w) > 4 else 0
        prof["entries"].append({"algo": w[3], "chunk_bytes": 0, "lanes": 0, "mem_kind": w[0], "min_bytes": 0,
                                "max_bytes": None, "mpi_time_us": -1, "ppg": ppg, "time_us": -1, "transport": ""})
    if ranks_per_gpu is not None:
        prof["ranks_per_gpu"] = ranks_per_gpu
    prof["tuned_at"] = "2099-01-01T00:00:00Z"  # newer than anything tuned for real
    with open(doc_path, "w") as f:
        json.dump(doc, f)
    run([ARGS.multilane, "import", "--db", db, doc_path])
    os.chmod(db, 0o644)
    shutil.rmtree(tmp, ignore_errors=True)


def process_running(pid):
    """Whether process PID exists and has not ended (a zombie has)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def multilane_lines(text):
    return [l for l in text.splitlines() if "multilane:" in l]


def ensure_test_user(root):
    try:
        pwd.getpwnam(TEST_USER)
    except KeyError:
        run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", TEST_USER])
    return pwd.getpwnam(TEST_USER).pw_uid


def write_mps_stand_in(root, start, stop, modes=False):
    """A stand-in for nvidia-cuda-mps-control (there is no NVIDIA driver
    here), ROOT/mps-control, that records how it was called in
    ROOT/mps-record/calls: with -d "start START" (with MODES, the pipe
    folder's and the job folder's modes and owners next), then it stays alive
    like the daemon until it reads a word, recorded as "WORD STOP" (START and
    STOP: shell words).  Returns (its path, the record folder)."""
    record = os.path.join(root, "mps-record")
    os.makedirs(record, exist_ok=True)
    os.chmod(record, 0o777)  # the job's user may run it
    stand_in = os.path.join(root, "mps-control")
    stat = f"""  stat -c '%a %U' "$CUDA_MPS_PIPE_DIRECTORY" >> {record}/calls
  stat -c 'jobdir %a %U' "$(dirname "$CUDA_MPS_PIPE_DIRECTORY")" >> {record}/calls
"""
    with open(stand_in, "w") as f:
        f.write(f"""#!/bin/sh
# stand-in for nvidia-cuda-mps-control (records its calls)
if [ "$1" = "-d" ]; then
  echo "start {start}" >> {record}/calls
{stat if modes else ""}  setsid sh -c 'echo $$ > "$CUDA_MPS_PIPE_DIRECTORY/daemon.pid"; exec sleep 300' </dev/null >/dev/null 2>&1 &
  exit 0
fi
read word
echo "$word {stop}" >> {record}/calls
kill "$(cat "$CUDA_MPS_PIPE_DIRECTORY/daemon.pid")"
""")
    os.chmod(stand_in, 0o755)
    return stand_in, record


PROBE_JOB = "srun --mpi=pmix {probe} 5\n"


def main(names):
    """Runs the case named on the command line, one of the case_* functions
    in NAMES (a feature script's globals()), in a fresh folder; returns the
    exit status: 0 passed, 1 failed, 77 skipped (not root).  With --list,
    prints the case names instead (CMake adds one test per name)."""
    cases = cases_in(names, "case_")
    if listed(cases):
        return 0
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=sorted(cases))
    ap.add_argument("--source", required=True)
    ap.add_argument("--multilane", required=True)
    ap.add_argument("--library", required=True)
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--probe", required=True, help="layout_probe")
    ap.add_argument("--mlprobe", required=True)
    ap.add_argument("--coll-counter", help="tests/sysalgo's coll_base_counter.so (two_nodes_system_algorithms_observed)")
    ap.add_argument("--mpi-test", required=True, help="allreduce_mpi_test")
    ap.add_argument("--probe-mpich", help="layout_probe built with MPICH (the MPICH cases)")
    ap.add_argument("--loop-job", help="loop_job (auto_layout_from_history)")
    ap.add_argument("--tune-cache", required=True, help="folder of the tuned databases the cases share (tuned_db)")
    ap.parse_args(namespace=ARGS)
    if os.geteuid() != 0:
        print("SKIP: the Slurm tests start slurmctld and slurmd and need root")
        return 77
    return run_case(ARGS.case, cases[ARGS.case], "mlslurm")