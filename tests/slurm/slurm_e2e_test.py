#!/usr/bin/python3
"""End-to-end tests of spank_multilane.so on a real Slurm (munge, slurmctld,
slurmd on localhost, started here by scripts/slurm/local-slurm.sh), with
Debian's Open MPI under `srun --mpi=pmix`.

    slurm_e2e_test.py CASE --build DIR --source DIR

Each case starts its own Slurm in a fresh folder and stops it at the end.
The node claims 8 CPUs and 2 fake GPUs (character devices), so the layout
(tasks per GPU, CUDA_VISIBLE_DEVICES, CPU binding) is real Slurm behaviour;
what runs on the "GPUs" is host-memory MPI.
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

ARGS = None
TEST_USER = "mltest"


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from e2e import check, home_variables, log, run  # noqa: E402  (tests/e2e.py, the scripts' shared helpers)


class Slurm:
    """A local Slurm with the plugin in a test-owned plugstack.conf."""

    def __init__(self, root, plugin_args, cli_filter=True, required=True, nodes=1):
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
        if nodes > 1:
            # Open MPI between the nodes: TCP on loopback.
            self.env["OMPI_MCA_btl_tcp_if_include"] = "lo"
            self.env["OMPI_MCA_oob_tcp_if_include"] = "lo"
        self.script = script
        start = ["bash", script, "start", self.dir] + (["--nodes", str(nodes)] if nodes > 1 else []) + [line]
        p = subprocess.run(start, capture_output=True, text=True, env=env, timeout=120)
        if p.returncode != 0:
            self.stop()
            raise AssertionError(f"local Slurm did not start:\n{p.stdout}\n{p.stderr}")
        log(f"slurm: started in {self.dir}; plugstack: {line}")

    def stop(self):
        subprocess.run(["bash", self.script, "stop", self.dir], capture_output=True, text=True, timeout=60)

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
    tmp = tempfile.mkdtemp(prefix="mltune-")
    tuned = tuned_db(["--budget", "3", "--sizes", "64K:256K", "--np", "4", "--allow-oversubscribed",
                      "--virtual-nodes", "2", "--ranks-per-gpu", "2"] + (["--partition", partition] if partition else []))
    doc_path = os.path.join(tmp, "profiles.json")
    run([ARGS.multilane, "export", "--db", tuned, doc_path])
    doc = json.load(open(doc_path))
    prof = doc["profiles"][0]
    header = prof["profile_text"].splitlines()[0]
    prof["profile_text"] = header + "\nhost 0 inf lane\n"
    prof["entries"] = [{"algo": "lane", "chunk_bytes": 0, "lanes": 0, "mem_kind": "host", "min_bytes": 0, "max_bytes": None,
                        "mpi_time_us": -1, "ppg": 0, "time_us": -1, "transport": ""}]
    prof["tuned_at"] = "2099-01-01T00:00:00Z"  # newer than anything tuned for real
    with open(doc_path, "w") as f:
        json.dump(doc, f)
    run([ARGS.multilane, "import", "--db", db, doc_path])
    os.chmod(db, 0o644)
    shutil.rmtree(tmp, ignore_errors=True)


def publish_profile(db, lines, ranks_per_gpu, header_extra="", family="openmpi"):
    """Publishes a profile of this node type with the given entry lines
    (MEMORY FROM TO ALGO [ppg=N]) and ranks per GPU, made from a real short
    tune with FAMILY's MPI (for the node type and versions) as
    publish_lane_profile does."""
    tmp = tempfile.mkdtemp(prefix="mltune-")
    tuned = tuned_db(["--mpi", family, "--budget", "3", "--sizes", "64K:256K", "--np", "2", "--memory", "host"])
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
    prof["ranks_per_gpu"] = ranks_per_gpu
    prof["tuned_at"] = "2099-01-01T00:00:00Z"  # newer than anything tuned for real
    with open(doc_path, "w") as f:
        json.dump(doc, f)
    run([ARGS.multilane, "import", "--db", db, doc_path])
    os.chmod(db, 0o644)
    shutil.rmtree(tmp, ignore_errors=True)


def rank_lines(text):
    rows = []
    for line in text.splitlines():
        if line.startswith("rank="):
            rows.append(dict(kv.split("=", 1) for kv in line.split()))
    return sorted(rows, key=lambda r: int(r["rank"]))


def multilane_lines(text):
    return [l for l in text.splitlines() if "multilane:" in l]


def ensure_test_user(root):
    try:
        pwd.getpwnam(TEST_USER)
    except KeyError:
        run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", TEST_USER])
    return pwd.getpwnam(TEST_USER).pw_uid


def sha256(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


PROBE_JOB = "srun --mpi=pmix {probe} 5\n"


# ---------------------------------------------------------------- the cases

def case_sbatch_tuned_layout(root):
    """sbatch --multilane --gpus=2: the cli_filter gives 2 tasks per GPU (the
    tuned number), the plugin binds tasks 0,1 to GPU 0 and 2,3 to GPU 1 and
    each task to its own block of CPUs, and every MPI_Allreduce of the job
    runs through the library with the published profile."""
    s = Slurm(root, {})
    try:
        publish_lane_profile(s.db)
        p, out = s.sbatch(["--gpus=2", "--multilane"], "echo batch ntasks=$SLURM_NTASKS\n" + PROBE_JOB.format(probe=ARGS.probe))
        check(p.returncode == 0, "the job failed")
        check("batch ntasks=4" in out, "the allocation did not get 2 tasks per GPU (4 tasks)")
        rows = rank_lines(out)
        check(len(rows) == 4, f"expected 4 ranks, got {len(rows)}")
        check([r["gpu"] for r in rows] == ["0", "0", "1", "1"], f"GPU binding {[r['gpu'] for r in rows]}")
        cpus = [r["cpus"] for r in rows]
        check(len(set(cpus)) > 1, f"tasks were not bound to CPU blocks: {cpus}")
        ncpu = os.cpu_count()
        want = [str(i * ncpu // 4) for i in range(4)] if ncpu < 4 else None
        if want:
            check(cpus == want, f"CPU blocks {cpus}, expected {want}")
        for r in rows:
            check(r["size"] == "4" and r["ok"] == "1", f"rank {r['rank']}: wrong result")
            check(r["preload"] == "1", f"rank {r['rank']}: libmlallreduce not preloaded")
            check(r["calls"] == "5" and r["lane"] == "5",
                  f"rank {r['rank']}: the library's counters say calls={r['calls']} lane={r['lane']}, expected 5 and 5")
        check(not multilane_lines(out), f"a successful job printed: {multilane_lines(out)}")
    finally:
        s.stop()


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


def case_sbatch_recommended_ranks_per_gpu(root):
    """Issue 12: a profile tuned at 1 and 2 ranks per GPU that recommends 1.
    sbatch --multilane --gpus=2 gets 1 task per GPU from the cli_filter, and
    the library runs the entries tuned at 1 (hier), not those at 2 (lane) or
    the ones for other layouts (lane)."""
    s = Slurm(root, {})
    try:
        publish_profile(s.db, ["host 0 inf hier ppg=1", "host 0 inf lane ppg=2", "host 0 inf lane"], 1,
                        " ranks_per_gpu=1 ranks_per_gpu_tuned=1,2 mps=none")
        r = run([ARGS.multilane, "resolve", "--db", s.db, "--partition", "gpu", "--any-node-type"])
        check("ranks_per_gpu=1\n" in r.stdout and "ranks_per_gpu_tuned=1,2\n" in r.stdout, r.stdout)
        p, out = s.sbatch(["--gpus=2", "--multilane"], "echo batch ntasks=$SLURM_NTASKS\n" + PROBE_JOB.format(probe=ARGS.probe))
        check(p.returncode == 0, "the job failed")
        check("batch ntasks=2" in out, "the allocation did not get the recommended 1 task per GPU (2 tasks)")
        rows = rank_lines(out)
        check([r["gpu"] for r in rows] == ["0", "1"], f"GPU binding {[r['gpu'] for r in rows]}")
        for r in rows:
            check(r["ok"] == "1" and r["calls"] == "5" and r["hier"] == "5",
                  f"rank {r['rank']}: calls={r['calls']} hier={r['hier']} lane={r['lane']}: not the ppg=1 entries")
        # A user's own value that was tuned gets its entries.
        p, out = s.sbatch(["--gpus=2", "--multilane=ranks-per-gpu:2"], PROBE_JOB.format(probe=ARGS.probe),
                          name="user-ppg")
        rows = rank_lines(out)
        check(len(rows) == 4 and all(r["lane"] == "5" for r in rows), f"ranks-per-gpu:2 did not run ppg=2: {rows}")
    finally:
        s.stop()


def case_srun_ranks_per_gpu(root):
    """srun --multilane=ranks-per-gpu:1,verbose overrides the tuned number;
    verbose shows the library's counters at MPI_Finalize."""
    s = Slurm(root, {})
    try:
        publish_lane_profile(s.db)
        p = s.cmd(["srun", "--gpus=2", "--multilane=ranks-per-gpu:1,verbose", ARGS.probe, "3"])
        rows = rank_lines(p.stdout)
        check([r["gpu"] for r in rows] == ["0", "1"], f"expected 2 tasks on GPUs 0 and 1, got {rows}")
        check(all(r["lane"] == "3" for r in rows), "calls did not run the profile's algorithm")
        text = p.stdout + p.stderr
        check("multilane: stats: rank 0: calls=3" in text, "verbose did not print the library's counters")
        check(re.search(r"multilane: profile \d+ of node type", text), "verbose did not name the profile")
    finally:
        s.stop()


def case_second_user_reuses_profile(root):
    """A second Unix user gets the admin's profile with no probes: the job
    runs with the library, and the system database is unchanged byte for byte."""
    ensure_test_user(root)
    s = Slurm(root, {})
    try:
        publish_lane_profile(s.db)
        before = sha256(s.db)
        os.chmod(root, 0o777)
        p, out = s.sbatch(["--gpus=2", "--multilane"],
                          "id -un\n" + PROBE_JOB.format(probe=ARGS.probe), user=TEST_USER, name="user2")
        check(p.returncode == 0, "the second user's job failed")
        check(out.splitlines()[0] == TEST_USER, "the job did not run as the second user")
        rows = rank_lines(out)
        check(len(rows) == 4 and all(r["lane"] == "5" for r in rows), f"the profile was not used: {rows}")
        check(sha256(s.db) == before, "the system database changed")
        check("mlprobe" not in out and "tune" not in out, "probes ran for the second user")
        log_text = open(os.path.join(s.dir, "log", "slurmctld.log")).read()
        user_jobs = re.findall(r"_slurm_rpc_submit_batch_job: JobId=(\d+)", log_text)
        check(len(user_jobs) == 1, f"expected exactly the user's one job, the controller saw {len(user_jobs)}")
    finally:
        s.stop()


def case_report_mode(root):
    """--multilane=report:DIR makes the library write the job report into DIR,
    which `multilane report` reads."""
    s = Slurm(root, {})
    try:
        publish_lane_profile(s.db)
        reports = os.path.join(root, "reports")
        os.makedirs(reports)
        # The job history (issue 29): the user's database is where the job's
        # own variables say; the plugin has the resolver make its inbox.
        env = dict(s.env, MULTILANE_USER_DB=os.path.join(root, "state", "user.db"))
        run(["srun", "--gpus=2", f"--multilane=report:{reports}", ARGS.probe, "3"], env=env, cwd=root)
        files = [f for f in os.listdir(reports) if f.endswith(".json")]
        check(len(files) == 1, f"expected one report in {reports}, found {files}")
        doc = json.load(open(os.path.join(reports, files[0])))
        check(doc.get("format") == "multilane-job-report", f"not a job report: {doc.get('format')}")
        check(doc["job"]["ranks"] == 4, f"the report counts {doc['job']['ranks']} ranks, not 4")
        calls = sum(b["calls"] for b in doc["bins"])
        check(calls == 3, f"the report counts {calls} allreduce calls of rank 0, not 3")
        r = run([ARGS.multilane, "report", os.path.join(reports, files[0])])
        check("allreduce" in r.stdout, r.stdout)
        inbox = os.path.join(root, "state", "history")
        check(os.listdir(inbox) == files, f"the job's report is not in the history inbox {inbox}: {os.listdir(inbox)}")
        h = json.loads(run([ARGS.multilane, "history", "--json"], env=env).stdout)
        check(len(h["runs"]) == 1 and h["runs"][0]["key"] == doc["job"]["key"] and h["runs"][0]["ranks"] == 4 and
              sum(b[2] for b in h["runs"][0]["histogram"]) == 3, f"the job history does not hold the job: {h}")
    finally:
        s.stop()


def case_default_auto(root):
    """default=auto: jobs get multilane without the option (layout included);
    --multilane=off opts out."""
    s = Slurm(root, {"default": "auto"})
    try:
        publish_lane_profile(s.db)
        p, out = s.sbatch(["--gpus=2"], PROBE_JOB.format(probe=ARGS.probe), name="default")
        rows = rank_lines(out)
        check(len(rows) == 4 and all(r["preload"] == "1" and r["lane"] == "5" for r in rows),
              f"default=auto did not give the tuned layout and the library: {rows}")
        p = s.cmd(["srun", "--gpus=2", "-n", "2", "--multilane=off", ARGS.probe, "2"])
        rows = rank_lines(p.stdout)
        check(len(rows) == 2 and all(r["preload"] == "0" and r["calls"] == "0" for r in rows),
              f"--multilane=off still injected the library: {rows}")
    finally:
        s.stop()


def case_option_errors(root):
    """Bad --multilane values stop srun/sbatch with a message naming the item;
    --multilane=help prints the grammar."""
    s = Slurm(root, {})
    try:
        p = s.cmd(["srun", "--multilane=fast", "true"], check_rc=False)
        check(p.returncode != 0, "srun accepted --multilane=fast")
        check("unknown item 'fast'" in p.stderr and "ranks-per-gpu:N" in p.stderr, p.stderr)
        p = s.cmd(["srun", "--multilane=ranks-per-gpu:0", "true"], check_rc=False)
        check(p.returncode != 0 and "1 to 64" in p.stderr, p.stderr)
        job = os.path.join(root, "j.sh")
        with open(job, "w") as f:
            f.write("#!/bin/bash\ntrue\n")
        p = s.cmd(["sbatch", "--multilane=report:", job], check_rc=False)
        check(p.returncode != 0 and "report:" in p.stderr, p.stderr)
        p = s.cmd(["srun", "--multilane=help"], check_rc=False)
        check(p.returncode == 0 and "ranks-per-gpu:N" in p.stdout, p.stdout + p.stderr)
        p = s.cmd(["sbatch", "--multilane=help", job], check_rc=False)  # sbatch reads the script first
        check(p.returncode == 0 and "report[:DIR]" in p.stdout, p.stdout + p.stderr)
    finally:
        s.stop()


def case_unknown_plugstack_key(root):
    """An unknown key in plugstack.conf is an error that names the key."""
    s = Slurm(root, {"databse": "/x.db"})
    try:
        p = s.cmd(["srun", "--multilane", "true"], check_rc=False)
        check(p.returncode != 0, "srun ran with a plugstack.conf error in a required plugin")
        check("unknown key 'databse'" in p.stderr and "database" in p.stderr, p.stderr)
    finally:
        s.stop()


def fail_open(root, plugin_args, prepare, why_pattern, preloaded=True):
    """A step on a node without a usable profile runs and one line says why.
    A job is all in or all out: where the library itself loads, the plugin
    still preloads it, with MULTILANE_OFF=<why> instead of a profile (the
    library then turns multilane off on every rank of the job); only a
    library that is missing or does not load is left out (`preloaded`
    False).  The lines checked are the plugin's and, once the library says
    one, the library's, which repeats MULTILANE_OFF's reason."""
    s = Slurm(root, plugin_args)
    try:
        prepare(s)
        p = s.cmd(["srun", "-n", "2", "--multilane", ARGS.probe, "2"], check_rc=False)
        text = p.stdout + p.stderr
        log(text)
        check(p.returncode == 0, f"the job failed (exit {p.returncode})")
        rows = rank_lines(p.stdout)
        check(len(rows) == 2 and all(r["ok"] == "1" for r in rows), f"the job's sums are wrong: {rows}")
        check(all(r["lane"] == r["hier"] == r["split"] == "0" for r in rows),
              f"calls ran a multilane algorithm on a node without a profile: {rows}")
        offs = re.findall(r"^rank (\d+) MULTILANE_OFF=(.*)$", p.stdout, re.M)
        if preloaded:
            check(all(r["preload"] == "1" and r["off"] == "1" for r in rows),
                  f"the library is not preloaded with MULTILANE_OFF on every rank: {rows}")
            check(len(offs) == 2 and all(re.search(why_pattern, v) and "without multilane" in v for _, v in offs),
                  f"MULTILANE_OFF does not say why ({why_pattern}): {offs}")
        else:
            check(all(r["preload"] == "0" and r["off"] == "0" for r in rows) and not offs,
                  f"a library that cannot load was preloaded: {rows} {offs}")
        lines = [l for l in multilane_lines(text) if not l.startswith("rank ")]
        check(1 <= len(lines) <= (2 if preloaded else 1), f"expected one line saying why, got {lines}")
        check(all(re.search(why_pattern, l) for l in lines), f"a line does not say why ({why_pattern}): {lines}")
        check(any("without multilane" in l for l in lines), lines)
    finally:
        s.stop()


def case_fail_open_no_database(root):
    fail_open(root, {}, lambda s: None, r"no (system )?database|does not exist|not found")


def case_fail_open_no_profile(root):
    def prepare(s):
        # A valid database holding only a profile made by another version.
        publish_lane_profile(s.db)
        doc = os.path.join(root, "other.json")
        run([ARGS.multilane, "export", "--db", s.db, doc])
        d = json.load(open(doc))
        os.remove(s.db)
        for p in d["profiles"]:
            p["library_version"] = "0.0.1"  # another library version: a miss
        with open(doc, "w") as f:
            json.dump(d, f)
        run([ARGS.multilane, "import", "--db", s.db, doc])
    fail_open(root, {}, prepare, r"no profile for node type")


def case_fail_open_corrupt_database(root):
    def prepare(s):
        with open(s.db, "wb") as f:
            f.write(b"this is not a database" * 100)
    fail_open(root, {}, prepare, r"profiles\.db")


def case_fail_open_library_does_not_load(root):
    broken = os.path.join(root, "libbroken.so")

    def prepare(s):
        publish_lane_profile(s.db)
        with open(ARGS.library, "rb") as f:
            head = f.read(4096)  # an ELF header and nothing behind it
        with open(broken, "wb") as f:
            f.write(head)
    fail_open(root, {"library": broken}, prepare, r"does not load", preloaded=False)


def case_fail_open_missing_library(root):
    fail_open(root, {"library": "/nonexistent/libmlallreduce.so"}, lambda s: publish_lane_profile(s.db),
              r"does not exist", preloaded=False)


def case_fail_open_resolver_missing(root):
    fail_open(root, {"multilane": "/nonexistent/multilane"}, lambda s: None,
              r"look-up .* failed: could not be started: No such file or directory")


def case_fail_open_resolver_loader_fails(root):
    """A `multilane` whose loader gives up before main() (exit 127, as when
    libmlallreduce.so.0 is not where its RUNPATH says): the line quotes the
    loader, not "missing".  The stand-in runs the real dynamic loader on a
    library that is not there, which fails exactly that way."""
    stand_in = os.path.join(root, "multilane-unloadable")
    with open(stand_in, "w") as f:
        f.write("#!/bin/sh\nexec /lib64/ld-linux-x86-64.so.2 /nonexistent/libmlallreduce.so.0 \"$@\"\n")
    os.chmod(stand_in, 0o755)
    fail_open(root, {"multilane": stand_in}, lambda s: None,
              r"exit status 127\): .*error while loading shared libraries: /nonexistent/libmlallreduce\.so\.0")


def case_fail_open_resolver_hangs(root):
    """A `multilane` that never answers: after resolve_timeout the step runs
    without multilane and says so (the look-up is killed, the step goes on)."""
    stand_in = os.path.join(root, "multilane-hangs")
    with open(stand_in, "w") as f:
        f.write("#!/bin/sh\nexec sleep 600\n")
    os.chmod(stand_in, 0o755)
    fail_open(root, {"multilane": stand_in, "resolve_timeout": "2"}, lambda s: None,
              r"look-up .* failed: timed out after 2 s")


def case_fail_open_resolver_crashes(root):
    """A `multilane` that dies of a signal (SIGSEGV) inside slurmstepd's
    look-up: the step runs without multilane, the line names the signal."""
    stand_in = os.path.join(root, "multilane-crashes")
    with open(stand_in, "w") as f:
        f.write("#!/bin/sh\nkill -SEGV $$\n")
    os.chmod(stand_in, 0o755)
    fail_open(root, {"multilane": stand_in}, lambda s: None, r"look-up .* failed: killed by signal 11")


def case_without_cli_filter(root):
    """Without the cli_filter the plugin maps the step's own tasks and says
    how to get the tuned layout."""
    s = Slurm(root, {}, cli_filter=False)
    try:
        publish_lane_profile(s.db)
        p = s.cmd(["srun", "--gpus=2", "-n", "2", "--multilane", ARGS.probe, "2"])
        rows = rank_lines(p.stdout)
        check([r["gpu"] for r in rows] == ["0", "1"], f"GPU binding {rows}")
        check(all(r["lane"] == "2" for r in rows), "the library did not run the profile")
        check("--ntasks-per-gpu=2" in p.stderr + p.stdout, "no hint about the tuned layout")
    finally:
        s.stop()


def case_tune_partition(root):
    """`multilane tune --partition gpu` submits the probe job with sbatch,
    waits and publishes the profile of the partition in the system database;
    a user job then gets it with --multilane and no probes."""
    s = Slurm(root, {})
    try:
        env = dict(s.env)
        env.update(probe_env())
        p = run([ARGS.multilane, "tune", "--partition", "gpu", "--db", s.db, "--budget", "3", "--sizes", "64K:256K",
                 "--np", "4", "--virtual-nodes", "2", "--ranks-per-gpu", "2", "--allow-oversubscribed"],
                env=env, timeout=600, cwd=root)
        text = p.stdout + p.stderr
        log(text)
        check(re.search(r"submitted batch job \d+ on its one node, as 2 virtual nodes \(time limit \d+ min", text, re.I),
              "tune did not go through sbatch on the one node, as 2 virtual nodes, with a time limit")
        check("OVERSUBSCRIBED" in text, "the 4-rank probe on this small machine is not marked oversubscribed")
        check(not [n for n in os.listdir(root) if n.startswith("multilane-tune.")], "the jobs' folder was left")
        r = run([ARGS.multilane, "resolve", "--db", s.db, "--partition", "gpu", "--any-node-type"])
        check("found=yes" in r.stdout and "ranks_per_gpu=2" in r.stdout, r.stdout)
        check("tuned_nodes=2\n" in r.stdout and "tuned_nodes_virtual=yes\n" in r.stdout, r.stdout)
        p, out = s.sbatch(["--gpus=2", "--multilane"], PROBE_JOB.format(probe=ARGS.probe), name="after-tune")
        rows = rank_lines(out)
        check(len(rows) == 4 and all(x["preload"] == "1" and x["calls"] == "5" for x in rows),
              f"the job did not run with the partition's profile: {rows}")
    finally:
        s.stop()


def case_tune_partition_interrupted(root):
    """An interrupted `multilane tune --partition` cancels its probe job
    (scancel by job id), stores nothing and removes its folder."""
    s = Slurm(root, {})
    try:
        env = dict(s.env)
        env.update(probe_env())
        proc = subprocess.Popen([ARGS.multilane, "tune", "--partition", "gpu", "--db", s.db, "--budget", "120",
                                 "--sizes", "4K:64M", "--exhaustive", "--np", "2", "--allow-oversubscribed"],
                                env=env, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        job = None
        deadline = time.time() + 60
        while time.time() < deadline and job is None:
            q = s.cmd(["squeue", "-h", "-n", "multilane-tune", "-o", "%i %T %l"], check_rc=False)
            for line in q.stdout.split("\n"):
                if line.strip().split(" ")[1:2] == ["RUNNING"]:
                    job = line.split()[0]
                    limit = line.split()[2]
            time.sleep(0.5)
        check(job is not None, "the probe job never ran")
        check(limit not in ("UNLIMITED", "INVALID"), f"the probe job has no time limit ({limit})")
        time.sleep(1)
        proc.send_signal(2)  # SIGINT, as Ctrl-C
        out, err = proc.communicate(timeout=120)
        log(out + err)
        check(proc.returncode == 130, f"interrupted tune exited {proc.returncode}")
        check(f"cancelled probe job(s) {job}" in err, "the job was not reported cancelled")
        deadline = time.time() + 30
        while time.time() < deadline:
            q = s.cmd(["squeue", "-h", "-j", job, "-o", "%T"], check_rc=False)
            if q.stdout.strip() in ("", "CANCELLED", "COMPLETING"):
                break
            time.sleep(0.5)
        check(q.stdout.strip() in ("", "CANCELLED", "COMPLETING"), f"job {job} still {q.stdout.strip()}")
        check(not os.path.exists(s.db) or "found=yes" not in run(
            [ARGS.multilane, "resolve", "--db", s.db, "--partition", "gpu", "--any-node-type"], check=False).stdout,
              "a profile was stored")
        check(not [n for n in os.listdir(root) if n.startswith("multilane-tune.")], "the jobs' folder was left")
    finally:
        s.stop()


def write_mps_stand_in(root, record):
    """A stand-in for nvidia-cuda-mps-control (there is no NVIDIA driver
    here) that records how it was called in record/calls - user, folders,
    their modes - and stays alive like the daemon until it reads `quit`."""
    os.makedirs(record, exist_ok=True)
    os.chmod(record, 0o777)
    stand_in = os.path.join(root, "mps-control")
    with open(stand_in, "w") as f:
        f.write(f"""#!/bin/sh
# stand-in for nvidia-cuda-mps-control (records its calls)
if [ "$1" = "-d" ]; then
  echo "start uid=$(id -u) pipe=$CUDA_MPS_PIPE_DIRECTORY log=$CUDA_MPS_LOG_DIRECTORY gpus=$CUDA_VISIBLE_DEVICES" >> {record}/calls
  stat -c '%a %U' "$CUDA_MPS_PIPE_DIRECTORY" >> {record}/calls
  stat -c 'jobdir %a %U' "$(dirname "$CUDA_MPS_PIPE_DIRECTORY")" >> {record}/calls
  setsid sh -c 'echo $$ > "$CUDA_MPS_PIPE_DIRECTORY/daemon.pid"; exec sleep 300' </dev/null >/dev/null 2>&1 &
  exit 0
fi
read word
echo "$word uid=$(id -u) pipe=$CUDA_MPS_PIPE_DIRECTORY" >> {record}/calls
kill "$(cat "$CUDA_MPS_PIPE_DIRECTORY/daemon.pid")"
""")
    os.chmod(stand_in, 0o755)
    return stand_in


def wait_for_epilog(record, quits, timeout=30):
    """The calls the stand-in recorded once `quits` epilogs stopped it (the
    epilog runs after the job is reported done)."""
    path = os.path.join(record, "calls")
    deadline = time.time() + timeout
    calls = ""
    while time.time() < deadline:
        calls = open(path).read() if os.path.exists(path) else ""
        if calls.count("quit") >= quits:
            break
        time.sleep(0.5)
    return calls


def case_mps_job_folders_of_others(root):
    """N2: with a shared mps_dir, job-ID folders someone else made.  Job 1:
    a leftover of another user's job with the same ID (root's job-1, its
    pipe/ another user's and in use): the prolog refuses it and this job's
    tasks are never pointed at it (they used to be, with mps=yes); the
    epilog leaves it alone.  Job 2: another user made job-2 first, with a
    link inside: the prolog moves it aside and removes it (it used to deny
    MPS to job 2 for good), makes its own, and the tasks use that one; the
    epilog removes everything."""
    ensure_test_user(root)
    other = pwd.getpwnam("nobody")
    mps_dir = os.path.join(root, "mps")
    record = os.path.join(root, "mps-record")
    stand_in = write_mps_stand_in(root, record)
    os.chmod(root, 0o777)
    os.makedirs(mps_dir)
    os.chmod(mps_dir, 0o1777)
    leftover = os.path.join(mps_dir, "job-1")
    os.mkdir(leftover, 0o711)
    for sub in ("pipe", "log"):
        os.mkdir(os.path.join(leftover, sub), 0o700)
        os.chown(os.path.join(leftover, sub), other.pw_uid, other.pw_gid)
    with open(os.path.join(leftover, "pipe", "control"), "w") as f:
        f.write("another user's daemon\n")
    squat = os.path.join(mps_dir, "job-2")
    os.mkdir(squat, 0o755)
    os.mkdir(os.path.join(squat, "pipe"), 0o755)
    os.symlink("/etc", os.path.join(squat, "pipe", "escape"))
    for path in (squat, os.path.join(squat, "pipe"), os.path.join(squat, "pipe", "escape")):
        os.lchown(path, other.pw_uid, other.pw_gid)
    s = Slurm(root, {"mps": "yes", "mps_control": stand_in, "mps_dir": mps_dir})
    try:
        publish_lane_profile(s.db)
        body = "echo job=$SLURM_JOB_ID\nsrun bash -c 'echo task $SLURM_PROCID pipe=$CUDA_MPS_PIPE_DIRECTORY'\n"
        outs = []
        for n in (1, 2):
            p, out = s.sbatch(["--gpus=2", "--multilane"], body, user=TEST_USER, name=f"mps-{n}")
            check(p.returncode == 0 and f"job={n}" in out, f"job {n} failed or got another ID: {out}")
            outs.append(out)
        calls = wait_for_epilog(record, 1)
        log(calls)
        deadline = time.time() + 30
        while os.path.exists(squat) and time.time() < deadline:  # the epilog removes it after `quit`
            time.sleep(0.5)
        slurmd = open(os.path.join(s.dir, "log", "slurmd-localhost.log")).read()
        # Job 1: no daemon, the tasks not pointed at the other user's pipe/.
        check(f"pipe={leftover}/pipe" not in calls, f"a daemon ran in another user's folder: {calls!r}")
        tasks = [l for l in outs[0].splitlines() if l.startswith("task ")]
        check(len(tasks) == 4 and all(t.endswith(" pipe=") for t in tasks),
              f"job 1's tasks were pointed at a folder the prolog did not make: {tasks}")
        check("not a folder the prolog made" in outs[0] or "someone else made it" in outs[0],
              f"job 1 does not say why it runs without MPS: {outs[0]}")
        check(os.path.exists(os.path.join(leftover, "pipe", "control")), "the other user's leftover was touched")
        check(f"{leftover} exists already" in slurmd, "the prolog did not log why it refused job-1")
        # Job 2: the squat replaced, the tasks pointed at the prolog's folder.
        uid = pwd.getpwnam(TEST_USER).pw_uid
        check(f"start uid={uid} pipe={squat}/pipe" in calls and f"700 {TEST_USER}" in calls
              and "jobdir 711 root" in calls, f"job 2's daemon did not start in the prolog's own folder: {calls!r}")
        tasks = [l for l in outs[1].splitlines() if l.startswith("task ")]
        check(len(tasks) == 4 and all(t.endswith(f" pipe={squat}/pipe") for t in tasks), f"job 2's tasks: {tasks}")
        check(f"{squat} was there before the prolog" in slurmd and "removed it" in slurmd,
              "the prolog did not log that it removed the squat")
        check(os.path.isdir("/etc") and not os.path.exists(squat),
              f"the epilog left {squat}: {os.listdir(mps_dir)}")
        check(sorted(os.listdir(mps_dir)) == ["job-1"], f"left in mps_dir: {os.listdir(mps_dir)}")
    finally:
        s.stop()


def case_mps_daemon(root):
    """mps=yes: the job prolog starts one MPS control daemon per job as the
    job's user with private pipe and log directories, the tasks are pointed
    at it, and the epilog stops it and removes the directories.  There is no
    NVIDIA driver here, so mps_control names a stand-in that records how it
    was called and stays alive like the daemon until it reads `quit`."""
    ensure_test_user(root)
    mps_dir = os.path.join(root, "mps")
    record = os.path.join(root, "mps-record")
    stand_in = write_mps_stand_in(root, record)
    os.chmod(root, 0o777)
    # An admin's shared mps_dir (like /tmp): the prolog must keep its mode
    # and owner (it used to make it 0755 at every job).
    os.makedirs(mps_dir)
    os.chmod(mps_dir, 0o1777)
    s = Slurm(root, {"mps": "yes", "mps_control": stand_in, "mps_dir": mps_dir})
    try:
        publish_lane_profile(s.db)
        p, out = s.sbatch(["--gpus=2", "--multilane"],
                          "srun bash -c 'echo task $SLURM_PROCID pipe=$CUDA_MPS_PIPE_DIRECTORY'\n",
                          user=TEST_USER, name="mps")
        check(p.returncode == 0, "the job failed")
        uid = str(pwd.getpwnam(TEST_USER).pw_uid)
        deadline = time.time() + 30
        calls = ""
        while time.time() < deadline:  # the epilog runs after the job is reported done
            calls = open(os.path.join(record, "calls")).read() if os.path.exists(os.path.join(record, "calls")) else ""
            if "quit" in calls and not os.path.exists(os.path.join(mps_dir, "job-1")):
                break
            time.sleep(0.5)
        log(calls)
        job = re.search(r"pipe=(\S+)/job-(\d+)/pipe", calls)
        check(job, f"the prolog did not start the daemon: {calls!r}")
        jobdir = os.path.join(mps_dir, f"job-{job.group(2)}")
        check(f"start uid={uid} pipe={jobdir}/pipe log={jobdir}/log gpus=0,1" in calls, calls)
        check(f"700 {TEST_USER}" in calls, f"the pipe directory is not private to the user: {calls}")
        # The job folder stays root's, so the user can never swap pipe/ or
        # log/ for a link while root hands them over.
        check("jobdir 711 root" in calls, f"the job's MPS folder is not root's 0711: {calls}")
        mode = os.stat(mps_dir).st_mode & 0o7777
        check(mode == 0o1777 and os.stat(mps_dir).st_uid == 0, f"mps_dir changed to {oct(mode)}")
        check(f"quit uid={uid}" in calls, "the epilog did not stop the daemon as the user")
        check(not os.path.exists(jobdir), "the epilog left the job's MPS directory")
        tasks = [l for l in out.splitlines() if l.startswith("task ")]
        check(len(tasks) == 4 and all(f"pipe={jobdir}/pipe" in t for t in tasks), f"tasks not pointed at MPS: {tasks}")
    finally:
        s.stop()


def valgrind_errors(text):
    """The total of the "==PID== ERROR SUMMARY: N errors from M contexts"
    lines of one valgrind log (memcheck prints one per process as it exits,
    with every kind of error it found in N), or None when there is none."""
    counts = [int(n) for n in re.findall(r"^==\d+== ERROR SUMMARY: (\d+) errors? from", text, re.M)]
    return sum(counts) if counts else None


def valgrind_parent(text):
    """The "Parent PID:" of one valgrind log's header, or None."""
    m = re.search(r"^==\d+== Parent PID: (\d+)", text, re.M)
    return int(m.group(1)) if m else None


def valgrind_body(text):
    """What a valgrind log says after its header (Memcheck banner, Command,
    Parent PID), without the blank "==PID== " lines: memcheck writes each error
    there as it finds it, so a process that stopped being traced (a forked
    child that exec'd a task, which valgrind follows no further with
    --trace-children=no) has an empty body when it met no error."""
    lines = text.splitlines()
    start = next((i + 1 for i, l in enumerate(lines) if re.match(r"^==\d+== Parent PID:", l)), 0)
    return [l for l in lines[start:] if not re.match(r"^==\d+==\s*$", l)]


def check_valgrind_logs(vg, wait_s=120):
    """Checks every slurmstepd log in vg: each slurmstepd started by slurmd
    (its parent has no log) must reach its ERROR SUMMARY with 0 errors (we wait
    for them to exit: a step's slurmstepd outlives srun by a moment); a forked
    child of a checked process either reaches its summary with 0 errors or
    exec'd (a task, a spawned helper) with nothing reported before the exec."""
    deadline = time.time() + wait_s
    while True:
        logs = {}
        for f in os.listdir(vg):
            m = re.match(r"stepd\.(\d+)\.log$", f)
            if m:
                with open(os.path.join(vg, f)) as fh:
                    logs[int(m.group(1))] = fh.read()
        tops = [pid for pid, text in logs.items() if valgrind_parent(text) not in logs]
        if tops and all(valgrind_errors(logs[pid]) is not None for pid in tops):
            break
        if time.time() > deadline:
            for pid in tops:
                check(valgrind_errors(logs[pid]) is not None,
                      f"stepd.{pid}.log: slurmstepd did not exit within {wait_s} s (no ERROR SUMMARY): {logs[pid][-2000:]}")
            check(tops, "valgrind wrote no log: slurmstepd did not run under it")
        time.sleep(0.5)
    summaries = 0
    for pid, text in sorted(logs.items()):
        errors = valgrind_errors(text)
        if errors is None:
            # Not a slurmstepd itself (checked above): a forked child that
            # exec'd; whatever memcheck found before the exec is in its body.
            body = valgrind_body(text)
            check(not body, f"stepd.{pid}.log: valgrind reported, in a child of slurmstepd before its exec:\n"
                            + "\n".join(body[-80:]))
            continue
        summaries += 1
        # memcheck must have counted no error of any kind: invalid accesses,
        # uninitialised values, mismatched frees.
        check(errors == 0, f"stepd.{pid}.log: valgrind counted {errors} error(s):\n{text[-6000:]}")
    return len(logs), summaries


def case_salloc_and_user_settings(root):
    """salloc --multilane: the allocation gets the tuned tasks per GPU and its
    srun step the library with the profile.  A user's own LD_PRELOAD stays
    first (the library after it) and a user's own MULTILANE_PROFILE is kept:
    the job runs the user's table (hier), not the published one (lane)."""
    s = Slurm(root, {})
    try:
        publish_lane_profile(s.db)
        p = s.cmd(["salloc", "--gpus=2", "--multilane", "srun", "--mpi=pmix", ARGS.probe, "5"])
        rows = rank_lines(p.stdout)
        check(len(rows) == 4, f"salloc --multilane: expected 4 ranks (2 per GPU, tuned), got {rows}\n{p.stderr}")
        check([r["gpu"] for r in rows] == ["0", "0", "1", "1"], f"GPU binding {[r['gpu'] for r in rows]}")
        for r in rows:
            check(r["ok"] == "1" and r["preload"] == "1" and r["lane"] == "5",
                  f"salloc --multilane: rank {r['rank']}: ok={r['ok']} preload={r['preload']} lane={r['lane']}")
        # The user's own preload and profile.
        user_lib = "/lib/x86_64-linux-gnu/libm.so.6"
        env = dict(s.env)
        env["LD_PRELOAD"] = user_lib
        env["MULTILANE_PROFILE"] = "multilane-profile 1\nhost 0 inf hier\n"
        q = run(["srun", "--gpus=1", "--multilane", "/usr/bin/env"], env=env, timeout=120, cwd=root)
        preload = [l[len("LD_PRELOAD="):] for l in q.stdout.splitlines() if l.startswith("LD_PRELOAD=")]
        check(preload, f"no LD_PRELOAD in the task:\n{q.stdout}\n{q.stderr}")
        for value in preload:  # one per task (the cli_filter gives 2 tasks per GPU)
            parts = re.split(r"[: ]", value)
            check(parts[0] == user_lib and any("libmlallreduce" in x for x in parts[1:]),
                  f"LD_PRELOAD {value!r}: the user's library must stay first, multilane's after it")
        profile = [l for l in q.stdout.splitlines() if l.startswith("MULTILANE_PROFILE=")]
        check(profile and set(profile) == {"MULTILANE_PROFILE=multilane-profile 1"},
              f"the user's MULTILANE_PROFILE was not kept: {profile}")
        q = run(["srun", "--gpus=2", "--multilane", "--mpi=pmix", ARGS.probe, "5"], env=env, timeout=300, cwd=root)
        rows = rank_lines(q.stdout)
        check(len(rows) == 4 and all(r["ok"] == "1" and r["hier"] == "5" and r["lane"] == "0" for r in rows),
              f"the job did not run the user's profile (hier): {rows}")
    finally:
        s.stop()


def case_bind_none(root):
    """bind=none on the plugstack line: the plugin leaves CPU binding alone
    (every task keeps the step's CPUs) and still binds GPUs and injects."""
    s = Slurm(root, {"bind": "none"})
    try:
        publish_lane_profile(s.db)
        p, out = s.sbatch(["--gpus=2", "--multilane"], PROBE_JOB.format(probe=ARGS.probe))
        check(p.returncode == 0, "the job failed")
        rows = rank_lines(out)
        check(len(rows) == 4 and [r["gpu"] for r in rows] == ["0", "0", "1", "1"], f"layout {rows}")
        cpus = {r["cpus"] for r in rows}
        check(len(cpus) == 1, f"bind=none: tasks were bound to different CPUs: {[r['cpus'] for r in rows]}")
        check(all(r["ok"] == "1" and r["lane"] == "5" for r in rows), f"bind=none: results or counters: {rows}")
    finally:
        s.stop()


def case_two_nodes_mpi_suite(root):
    """Issue 14, item 2: the library on two real Slurm nodes (no virtual
    nodes): the MPI test suite (every algorithm forced and intercepted, every
    predefined type and op, sub-communicators of one node and of both,
    results against PMPI_Allreduce and bitwise equal on all ranks, the
    library's counters) under srun -N2 --mpi=pmix, with mla_comm_layout
    required to say 2 nodes; then each algorithm through the intercepted
    MPI_Allreduce (MULTILANE_ALGO), and an irregular 3 + 2 layout."""
    s = Slurm(root, {}, nodes=2)
    try:
        p = s.cmd(["srun", "-N2", "-n2", "hostname"])
        check(sorted(p.stdout.split()) == ["node1", "node2"], f"the tasks' host names: {p.stdout!r}")
        # Slurm's own placement of -N2 -n4 on these 8-CPU nodes is 3 + 1:
        # the regular runs ask for 2 per node.
        two = ["--ntasks-per-node=2"]
        runs = [("regular 2 + 2", 4, None, "", two), ("lane", 4, "lane", "Intercept.*:Layout.*:Communicators.*", two),
                ("hier", 4, "hier", "Intercept.*:Layout.*:Communicators.*", two),
                ("split", 4, "split", "Intercept.*:Layout.*:Communicators.*", two),
                ("irregular (Slurm's placement of 5 tasks)", 5, None, "", [])]
        for what, n, algo, flt, placement in runs:
            env = dict(s.env)
            env["MLA_TEST_EXPECT_NODES"] = "2"
            if algo:
                env["MULTILANE_ALGO"] = algo
            args = ["srun", "-N2", f"-n{n}"] + placement + ["--mpi=pmix", ARGS.mpi_test] + ([f"--gtest_filter={flt}"] if flt else [])
            q = run(args, check=False, env=env, timeout=300, cwd=root)
            text = q.stdout + q.stderr
            log(f"--- two nodes, {what}: exit {q.returncode}\n" + "\n".join(
                l for l in text.splitlines() if "PASSED" in l or "FAILED" in l or l.startswith("[rank")))
            check(q.returncode == 0 and "[  PASSED  ]" in text and "FAILED" not in text,
                  f"two nodes, {what}: the MPI suite failed (exit {q.returncode}):\n{text[-4000:]}")
            check(not re.search(r"^\[  SKIPPED \]", text, re.M), f"two nodes, {what}: a test skipped itself")
        # What the library itself says about the layout, and that lane ran.
        env = dict(s.env)
        env["LD_PRELOAD"] = ARGS.library
        env["MULTILANE_ALGO"] = "lane"
        q = run(["srun", "-N2", "-n4"] + two + ["--mpi=pmix", ARGS.probe, "3"], env=env, timeout=300, cwd=root)
        rows = rank_lines(q.stdout)
        check(len(rows) == 4 and [r["host"] for r in rows] == ["node1", "node1", "node2", "node2"],
              f"block distribution over the two nodes: {rows}")
        check(all(r["ok"] == "1" and r["nodes"] == "2" and r["lane"] == "3" for r in rows),
              f"mla_comm_layout must say 2 nodes and every call run lane: {rows}")
    finally:
        s.stop()


def case_two_nodes_sbatch_multilane(root):
    """Issue 14, item 3: sbatch -N2 --gpus-per-node=2 --multilane=report:DIR
    with srun --mpi=pmix inside, on two real Slurm nodes: the profile's 1 task
    per GPU on each node (4 tasks; 8 ranks on this 2-core machine made Open
    MPI's TCP connections time out), GPUs and cores bound per node, one MPS
    daemon (the stand-in) per node started by that node's prolog and stopped
    by its epilog, every allreduce run with the profile's algorithm across
    the nodes (the library sees 2 nodes), and one job report naming both
    hosts.  The nodes share this machine's file system, so mps_dir names the
    host (%h)."""
    record = os.path.join(root, "mps-record")
    os.makedirs(record, exist_ok=True)
    stand_in = os.path.join(root, "mps-control")
    with open(stand_in, "w") as f:
        f.write(f"""#!/bin/sh
# stand-in for nvidia-cuda-mps-control (records its calls and the host)
if [ "$1" = "-d" ]; then
  echo "start host=$(hostname) pipe=$CUDA_MPS_PIPE_DIRECTORY gpus=$CUDA_VISIBLE_DEVICES" >> {record}/calls
  setsid sh -c 'echo $$ > "$CUDA_MPS_PIPE_DIRECTORY/daemon.pid"; exec sleep 300' </dev/null >/dev/null 2>&1 &
  exit 0
fi
read word
echo "$word host=$(hostname)" >> {record}/calls
kill "$(cat "$CUDA_MPS_PIPE_DIRECTORY/daemon.pid")"
""")
    os.chmod(stand_in, 0o755)
    mps_parent = os.path.join(root, "mps")
    os.makedirs(mps_parent)
    os.chmod(mps_parent, 0o755)
    reports = os.path.join(root, "reports")
    os.makedirs(reports)
    s = Slurm(root, {"mps": "yes", "mps_control": stand_in, "mps_dir": mps_parent + "/%h"}, nodes=2)
    try:
        publish_profile(s.db, ["host 0 inf lane"], 1, " ranks_per_gpu=1")
        # The job history: the report goes to the inbox beside the user's
        # database, which the job's own variables name (as in report_mode).
        s.env["MULTILANE_USER_DB"] = os.path.join(root, "state", "user.db")
        body = ("echo batch ntasks=$SLURM_NTASKS nodes=$SLURM_JOB_NUM_NODES\n"
                + PROBE_JOB.format(probe=ARGS.probe)
                + "srun bash -c 'echo task $SLURM_PROCID host=$(hostname) pipe=$CUDA_MPS_PIPE_DIRECTORY'\n")
        p, out = s.sbatch(["-N2", "--gpus-per-node=2", f"--multilane=report:{reports}"], body, name="two-nodes")
        check(p.returncode == 0, "the job failed")
        check("batch ntasks=4 nodes=2" in out, "the allocation did not get 1 task per GPU on 2 nodes (4 tasks)")
        rows = rank_lines(out)
        check(len(rows) == 4, f"expected 4 ranks, got {len(rows)}")
        check([r["host"] for r in rows] == ["node1"] * 2 + ["node2"] * 2, f"hosts {[r['host'] for r in rows]}")
        check([r["gpu"] for r in rows] == ["0", "1"] * 2, f"GPU binding {[r['gpu'] for r in rows]}")
        for node in ("node1", "node2"):
            cpus = [r["cpus"] for r in rows if r["host"] == node]
            check(len(set(cpus)) > 1, f"{node}: tasks were not bound to CPU blocks: {cpus}")
        for r in rows:
            check(r["ok"] == "1" and r["preload"] == "1" and r["nodes"] == "2",
                  f"rank {r['rank']}: ok={r['ok']} preload={r['preload']} nodes={r['nodes']} (want 2 nodes)")
            check(r["calls"] == "5" and r["lane"] == "5", f"rank {r['rank']}: calls={r['calls']} lane={r['lane']}")
        # One daemon per node, each started and stopped on its own node.
        deadline = time.time() + 30
        calls = ""
        while time.time() < deadline:  # the epilogs run after the job is reported done
            path = os.path.join(record, "calls")
            calls = open(path).read() if os.path.exists(path) else ""
            if calls.count("quit") == 2:
                break
            time.sleep(0.5)
        log(calls)
        for node in ("node1", "node2"):
            starts = re.findall(rf"^start host={node} pipe=(\S+) gpus=0,1$", calls, re.M)
            check(len(starts) == 1 and starts[0].startswith(f"{mps_parent}/{node}/job-"),
                  f"{node}: expected one daemon in its own mps_dir, got {starts} in {calls!r}")
            check(calls.count(f"quit host={node}") == 1, f"{node}: the epilog did not stop its daemon: {calls!r}")
            tasks = re.findall(rf"^task \d+ host={node} pipe=(\S+)$", out, re.M)
            check(len(tasks) == 2 and set(tasks) == {starts[0]}, f"{node}: tasks not pointed at its daemon: {tasks}")
        # One job report for the whole job, naming both hosts.
        files = [f for f in os.listdir(reports) if f.endswith(".json")]
        check(len(files) == 1, f"expected one job report in {reports}, found {files}")
        doc = json.load(open(os.path.join(reports, files[0])))
        check(doc["job"]["ranks"] == 4 and doc["job"]["nodes"] == 2 and sorted(doc["job"]["hosts"]) == ["node1", "node2"],
              f"the job report's job: {doc['job']}")
        r = run([ARGS.multilane, "report", os.path.join(reports, files[0])])
        check("node1" in r.stdout and "node2" in r.stdout, f"multilane report does not name both hosts:\n{r.stdout}")
        inbox = os.path.join(root, "state", "history")
        check(os.path.isdir(inbox) and os.listdir(inbox) == files,
              f"the job's report is not in the history inbox {inbox} of the job's MULTILANE_USER_DB: "
              f"{os.listdir(inbox) if os.path.isdir(inbox) else 'no such folder'}")
    finally:
        s.stop()


def case_two_nodes_tune_partition(root):
    """Issue 14, item 4: `multilane tune --partition` measures a node type
    that has two nodes on two of them (the step between nodes over the
    network, no virtual nodes); the profile says so and a job gets it."""
    s = Slurm(root, {}, nodes=2)
    try:
        env = dict(s.env)
        env.update(probe_env())
        p = run([ARGS.multilane, "tune", "--partition", "gpu", "--db", s.db, "--budget", "4", "--sizes", "64K:256K",
                 "--np", "2", "--memory", "host"], env=env, timeout=600, cwd=root)
        text = p.stdout + p.stderr
        log(text)
        check(re.search(r"\(8 CPUs, gres \S+, 2 node\(s\)\): submitted batch job \d+ on 2 of its nodes, node1,node2 \(", text),
              "the node type's probe job did not go to its two nodes")
        check("MULTILANE_RANKS_PER_NODE" not in text, "virtual nodes were used on real nodes")
        r = run([ARGS.multilane, "resolve", "--db", s.db, "--partition", "gpu", "--any-node-type"])
        check("found=yes" in r.stdout and "tuned_nodes=2\n" in r.stdout and "tuned_nodes_virtual=no\n" in r.stdout,
              r.stdout)
        check(re.search(r"^profile=multilane-profile 1 .*\bnodes=2\b.*\branks=4\b", r.stdout, re.M), r.stdout)
        show = run([ARGS.multilane, "show", "--db", s.db], env=env).stdout
        check("measured on 2 real node(s)" in show, show)
        # A job on both nodes gets the profile.
        q = s.cmd(["srun", "-N2", "--ntasks-per-node=2", "--multilane", "--mpi=pmix", ARGS.probe, "3"])
        rows = rank_lines(q.stdout)
        check(len(rows) == 4 and all(x["preload"] == "1" and x["ok"] == "1" and x["nodes"] == "2" for x in rows),
              f"the job on two nodes did not run with the profile: {rows}")
    finally:
        s.stop()


def case_valgrind_slurmstepd(root):
    """The plugin inside slurmstepd under valgrind (memcheck): slurmd runs in
    a private mount namespace where /usr/sbin/slurmstepd is a wrapper that
    starts the real one under valgrind; no invalid access may be reported."""
    s = Slurm(root, {})
    vg = os.path.join(root, "valgrind")
    os.makedirs(vg, exist_ok=True)
    try:
        publish_lane_profile(s.db)
        # restart slurmd in its own mount namespace with the wrapper
        run(["bash", "-c", f"kill $(cat {s.dir}/run/slurmd.pid); sleep 1"], check=False)
        real = os.path.join(root, "slurmstepd.real")
        shutil.copy2("/usr/sbin/slurmstepd", real)
        wrapper = os.path.join(root, "slurmstepd-valgrind")
        with open(wrapper, "w") as f:
            f.write(f"#!/bin/sh\nexec valgrind --tool=memcheck --trace-children=no --child-silent-after-fork=no "
                    f"--log-file={vg}/stepd.%p.log {real} \"$@\"\n")
        os.chmod(wrapper, 0o755)
        run(["unshare", "-m", "--propagation", "private", "sh", "-c",
             f"mount --bind {wrapper} /usr/sbin/slurmstepd && exec /usr/sbin/slurmd -N localhost"], env=s.env)
        for _ in range(150):
            if "localhost" in s.cmd(["sinfo", "-h", "-t", "idle", "-o", "%N"], check_rc=False).stdout:
                break
            time.sleep(0.2)
        p = s.cmd(["srun", "--gpus=2", "--multilane=verbose", ARGS.probe, "2"], timeout=600)
        rows = rank_lines(p.stdout)
        check(len(rows) == 4 and all(r["lane"] == "2" for r in rows), f"the job under valgrind: {rows}")
        total, summaries = check_valgrind_logs(vg)
        log(f"valgrind: {total} slurmstepd processes checked: {summaries} reached ERROR SUMMARY 0, "
            f"{total - summaries} exec'd with nothing reported")
    finally:
        s.stop()


def two_nodes_one_node_differs(root, node2_behaviour, why_pattern, preload_on_node2):
    """Issue 23: a two-node `srun --multilane --mpi=pmix` step whose second
    node's look-up (a stand-in `multilane` that forwards to the real one on
    node1) fails in one way: the job's exact results on every rank, exactly
    one line saying why (from the library's start-up agreement, which sees
    every rank), and no algorithm call on any rank."""
    stand_in = os.path.join(root, "multilane-node2")
    with open(stand_in, "w") as f:
        f.write(f"""#!/bin/sh
if [ "$(hostname)" = node2 ]; then
{node2_behaviour}
fi
exec {ARGS.multilane} "$@"
""")
    os.chmod(stand_in, 0o755)
    s = Slurm(root, {"multilane": stand_in, "resolve_timeout": "3"}, nodes=2)
    try:
        publish_lane_profile(s.db)
        env = dict(s.env)
        env["MULTILANE_ALGO"] = "lane"
        q = run(["srun", "-N2", "-n4", "--ntasks-per-node=2", "--multilane", "--mpi=pmix", ARGS.probe, "3"],
                check=False, env=env, timeout=300, cwd=root)
        text = q.stdout + q.stderr
        log(text)
        check(q.returncode == 0, f"the job failed (exit {q.returncode})")
        rows = rank_lines(q.stdout)
        check(len(rows) == 4 and [r["host"] for r in rows] == ["node1", "node1", "node2", "node2"],
              f"block distribution over the two nodes: {rows}")
        check(all(r["ok"] == "1" for r in rows), f"a rank got a wrong sum: {rows}")
        check(all(r["lane"] == "0" for r in rows), f"an algorithm ran in a job that is not all in: {rows}")
        check([r["preload"] for r in rows] == ["1", "1", preload_on_node2, preload_on_node2],
              f"the library on the nodes: {rows}")
        lines = [l for l in multilane_lines(text) if "warning" in l]
        check(len(lines) == 1, f"expected one warning line saying why, got {lines}")
        check(re.search(why_pattern, lines[0]), f"the line does not say why ({why_pattern}): {lines[0]}")
    finally:
        s.stop()


def case_two_nodes_second_node_without_profile(root):
    two_nodes_one_node_differs(
        root, "  echo found=no; echo 'why=no profile for node type of node2 (test)'; echo library_loads=yes; exit 0",
        r"every rank runs unchanged: rank 2: the launcher turned multilane off .*no profile for node type of node2",
        "1")


def case_two_nodes_second_node_resolver_times_out(root):
    two_nodes_one_node_differs(
        root, "  exec sleep 600",
        r"every rank runs unchanged: rank 2: the launcher turned multilane off .*timed out after 3 s", "1")


def case_two_nodes_second_node_library_does_not_load(root):
    two_nodes_one_node_differs(
        root, f"  {ARGS.multilane} \"$@\" | sed 's/^library_loads=.*/library_loads=no/; s/^library_error=.*/library_error=test: not loadable here/'; exit 0",
        r"ranks 2 and 3 of 4 run without multilane", "0")


def loop_run(s, reports, key, job, name):
    """One sbatch --multilane=report:DIR run of the closed loop under job key
    KEY: returns (tasks per GPU the cli_filter gave, its line, the run's report)."""
    s.env["MULTILANE_JOB_KEY"] = key
    before = set(os.listdir(reports))
    p, out = s.sbatch(["--gpus=2", f"--multilane=report:{reports}"], "echo batch ntasks=$SLURM_NTASKS\n" + job,
                      name=name)
    check(p.returncode == 0 and re.search(r"^loop size=\d+ ok=1 ", out, re.M), f"{name}: the job failed or summed wrong")
    ntasks = int(re.search(r"batch ntasks=(\d+)", out).group(1))
    lines = [l for l in p.stderr.splitlines() if "rank(s) per GPU:" in l]
    check(len(lines) == 1 and f"multilane: {ntasks // 2} rank(s) per GPU: " in lines[0],
          f"{name}: expected one line saying the {ntasks // 2} per GPU chosen and why, got {lines}")
    said = [l for l in out.splitlines() if "tasks per GPU" in l and "multilane:" in l]
    check(len(said) == 1 and f"multilane: {ntasks // 2} tasks per GPU: " in said[0] and
          said[0].split(" tasks per GPU: ", 1)[1] == lines[0].split(" rank(s) per GPU: ", 1)[1],
          f"{name}: the job's output does not say the same choice in one line: {said}")
    new = [f for f in set(os.listdir(reports)) - before if f.endswith(".json")]
    check(len(new) == 1, f"{name}: expected one new report in {reports}, got {new}")
    loop_run.stderr = p.stderr
    return ntasks // 2, lines[0], os.path.join(reports, new[0])


def scale_times(doc, factor):
    """Scales every time of a job report (fields NAME_s: a number or
    {min, mean, max}, of the job and of its bins) by FACTOR."""
    for k, v in list(doc.items()):
        if k.endswith("_s") and isinstance(v, (int, float)):
            doc[k] = v * factor
        elif k.endswith("_s") and isinstance(v, dict):
            doc[k] = {m: x * factor if isinstance(x, (int, float)) else x for m, x in v.items()}
        elif isinstance(v, dict):
            scale_times(v, factor)
        elif isinstance(v, list):
            for x in v:
                if isinstance(x, dict):
                    scale_times(x, factor)


def case_auto_layout_from_history(root):
    """Issue 29: sbatch --multilane=report under a job key (MULTILANE_JOB_KEY)
    chooses the tasks per GPU from the job's own history.  The profile was
    tuned at 1 and 2 per GPU, recommends 1, and prices 2 per GPU's allreduce
    ten times cheaper.  A compute-heavy job stays at 1 (the prediction is
    within the margin); a communication-heavy one tries 2, keeps it where
    the try paid (its work is shared out) and goes back to 1 where it did not
    (its ranks contend); the report shows the comparison.  A damaged inbox
    file and a run of another node type are ignored with one line each."""
    s = Slurm(root, {})
    try:
        publish_profile(s.db, ["host 0 inf lane ppg=1 time_us=20000 at=1M", "host 0 inf lane ppg=2 time_us=2000 at=1M",
                               "host 0 inf lane"], 1, " ranks_per_gpu=1 ranks_per_gpu_tuned=1,2 mps=none")
        reports = os.path.join(root, "reports")
        os.makedirs(reports)
        s.env["MULTILANE_USER_DB"] = os.path.join(root, "state", "user.db")
        heavy = "srun --mpi=pmix {job} {steps} 1048576 {ms} {mode}\n"  # about 0.1 % in allreduce
        compute = heavy.format(job=ARGS.loop_job, steps=4, ms=1500, mode="split")
        # The communication-heavy job: 40 allreduces of 16 MiB, and a
        # computation 4 times as long as they take here at 1 per GPU
        # (measured first), so that a fifth of the time is allreduce: the
        # profile's price at 2 per GPU then predicts a gain beyond the margin
        # (a share above 1/9 does), and halving the computation pays even
        # where the allreduce of 4 ranks takes up to 2.75 times longer (this
        # machine's 2 cores: 2.3).
        heavy_comm = "srun --mpi=pmix {job} 40 16777216 {ms} {mode}\n"
        p, out = s.sbatch(["--gpus=2", "--multilane=ranks-per-gpu:1"],
                          heavy_comm.format(job=ARGS.loop_job, ms=0, mode="split"), name="calibrate")
        allreduce_s = float(re.search(r"^loop size=2 ok=1 wall_s=([\d.]+)", out, re.M).group(1))
        step_ms = max(10.0, 4 * allreduce_s * 1000 / 40)
        log(f"the allreduces alone take {allreduce_s:.3f} s: {step_ms:.1f} ms of computation per step")
        ppg, line, _ = loop_run(s, reports, "compute-heavy", compute, "compute-1")
        check(ppg == 1 and "no earlier run of this job" in line, f"compute-heavy run 1: {ppg} per GPU: {line}")
        ppg, line, _ = loop_run(s, reports, "compute-heavy", compute, "compute-2")
        check(ppg == 1 and "the fastest measured" in line, f"compute-heavy run 2 left 1 per GPU: {ppg}: {line}")
        for mode, second, third in (("split", "yes", 2), ("shared", "no", 1)):
            key = "comm-" + mode
            job = heavy_comm.format(job=ARGS.loop_job, ms=f"{step_ms:.1f}", mode=mode)
            ppg, line, _ = loop_run(s, reports, key, job, key + "-1")
            check(ppg == 1, f"{key} run 1: {ppg} per GPU: {line}")
            ppg, line, report = loop_run(s, reports, key, job, key + "-2")
            check(ppg == 2 and "trying 2 per GPU" in line, f"{key} run 2 did not try 2 per GPU: {ppg}: {line}")
            doc = json.loads(run([ARGS.multilane, "report", "--json", report], env=s.env).stdout)
            h = doc["jobs"][0]["history"]
            check(any("ranks per GPU 1 -> 2" in c for c in h["changes"]) and h["paid"] == second,
                  f"{key}: the report of the try does not show the change and paid={second}: {h}")
            ppg, line, _ = loop_run(s, reports, key, job, key + "-3")
            want = "the fastest measured" if third == 2 else "back to 1 per GPU"
            check(ppg == third and want in line, f"{key} run 3: {ppg} per GPU, expected {third}: {line}")
        # A damaged file in the inbox and a run of another node type: one line each, never fatal.
        inbox = os.path.join(root, "state", "history")
        with open(os.path.join(inbox, "multilane-report-damaged.json"), "w") as f:
            f.write("{not json")
        foreign = json.load(open(report))  # comm-shared's try of 2 per GPU, ten times faster on another node type
        foreign["settings"]["profile"] = re.sub(r"node_type=\w+", "node_type=0123456789abcdef",
                                               foreign["settings"]["profile"])
        scale_times(foreign, 0.1)
        for name in ("foreign-1", "foreign-2"):  # two: the median at 2 per GPU would be theirs
            with open(os.path.join(inbox, f"multilane-report-{name}.json"), "w") as f:
                json.dump(foreign, f)
        ppg, line, _ = loop_run(s, reports, "comm-shared", job, "comm-shared-4")
        check(ppg == 1 and "the fastest measured" in line, f"comm-shared run 4: {ppg} per GPU: {line}")
        notes = [l for l in loop_run.stderr.splitlines() if "multilane:" in l and "rank(s) per GPU:" not in l]
        check(len(notes) == 2 and "2 of another node type" in notes[0] + notes[1] and
              "multilane-report-damaged.json" in notes[0] + notes[1], f"expected one line each for the two: {notes}")
    finally:
        s.stop()


def han_outranks_tuned():
    """Whether this Open MPI's coll/han outranks coll/tuned (ompi_info, not
    multilane): han then takes every communicator that spans machines."""
    out = run(["ompi_info", "--parsable", "--param", "coll", "all", "--level", "9"]).stdout
    prio = dict(re.findall(r"^mca:coll:\w+:param:coll_(han|tuned)_priority:value:(-?\d+)$", out, re.M))
    check("tuned" in prio, f"ompi_info lists no coll_tuned_priority:\n{out[-2000:]}")
    return int(prio.get("han", "-1")) > int(prio["tuned"])


def case_two_nodes_system_algorithms_observed(root):
    """Issue 28 on two real nodes: mlprobe's `passthrough mpi=NAME` under
    srun -N2, seen from inside Open MPI (tests/sysalgo's shim counts
    coll/tuned's allreduce functions on communicators other than
    MPI_COMM_WORLD).  Where coll/tuned runs the call (Open MPI 4.1: han's
    priority 0), every rank counts exactly the calls of each algorithm the
    probe made.  Where coll/han outranks tuned (Open MPI 5), han takes a
    communicator that spans machines and a forced tuned algorithm would not
    run: the probe must refuse each one and say why, not time han under
    ring's name (the counts are not compared there: han's own steps call
    tuned's functions on communicators of its own; without the refusal,
    this case's tuned branch counted 3 rings of the 30 claimed)."""
    sys.path.insert(0, os.path.join(ARGS.source, "tests", "sysalgo"))
    from coll_counts import take_counts
    from probe_choice_observed import PLAN, SYSTEM, expected_calls
    han = han_outranks_tuned()
    s = Slurm(root, {}, nodes=2)
    try:
        work = tempfile.mkdtemp(prefix="sysalgo-", dir=root)
        folder, plan, out = os.path.join(work, "counts"), os.path.join(work, "plan.json"), os.path.join(work, "out.json")
        os.mkdir(folder)
        with open(plan, "w") as f:
            json.dump(PLAN, f)
        env = dict(s.env)
        env.pop("MULTILANE_RANKS_PER_NODE", None)
        q = run(["srun", "-N2", "-n4", "--ntasks-per-node=2", "--mpi=pmix",
                 f"--export=ALL,LD_PRELOAD={ARGS.coll_counter},COLL_BASE_COUNTS_DIR={folder}",
                 ARGS.mlprobe, "--plan", plan, "--out", out, "--exhaustive"], check=False, env=env, timeout=300, cwd=root)
        log(q.stdout[-3000:] + q.stderr[-3000:])
        check(q.returncode == 0, f"mlprobe on two nodes exited with status {q.returncode}")
        with open(out) as f:
            result = json.load(f)
        counts = take_counts(folder, 4)
        check(result["layout"]["nodes"] == 2, f"the probe's layout is not two nodes: {result['layout']}")
        described = result["system_algorithms"]
        if han:
            refused = described.get("refused", {})
            check(described["probed"] == [] and all("coll/han" in refused.get(n, "") for n in ("ring", "recursive_doubling")),
                  f"coll/han outranks coll/tuned here: every mpi=NAME must be refused, naming han: {described}")
            for size in result["sizes"]:
                for c in size["candidates"]:
                    valid_ok = c["valid"] if c["candidate"] == "passthrough" else not c["valid"] and "coll/han" in c["error"]
                    check(valid_ok, f"{size['bytes']} B: {c}")
            log("two nodes, coll/han over coll/tuned: mpi=ring and mpi=recursive_doubling refused, naming han")
        else:
            check(described["probed"] == ["ring", "recursive_doubling"], f"both must be probed: {described}")
            for candidate, function in SYSTEM.items():
                want = expected_calls(result, candidate)
                seen = [c[function] for c in counts]
                check(seen == [want] * 4, f"{candidate}: expected {want} calls of {function} per rank, counted {seen}")
            log(f"two nodes, coll/tuned: each rank ran the calls of {list(SYSTEM)} the probe made")
    finally:
        s.stop()


CASES = {name[len("case_"):]: fn for name, fn in globals().items() if name.startswith("case_")}


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=sorted(CASES))
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
    ARGS = ap.parse_args()
    if os.geteuid() != 0:
        print("SKIP: the Slurm tests start slurmctld and slurmd and need root")
        return 77
    root = tempfile.mkdtemp(prefix=f"mlslurm-{ARGS.case}-")
    try:
        CASES[ARGS.case](root)
    except AssertionError as e:
        print(f"FAIL: {ARGS.case}: {e}")
        print(f"(files kept in {root})")
        return 1
    print(f"PASS: {ARGS.case}")
    shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
