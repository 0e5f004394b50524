#!/usr/bin/python3
"""netns_bench.py: mlallreduce_bench measured over a network, end to end.

Starts the local Slurm cluster on network namespace nodes (local-slurm.sh
start DIR --nodes N --netns --rails R --rate RATE: each node its own
address and R shaped NICs), on ports of its own (MLA_SLURMCTLD_PORT 26817,
MLA_SLURMD_PORT 26818 unless set: never the default ports, which CI and the
tests use); measures each rail's TCP rate (netns_check.py rate, and both
ways at once between node1 and node2: the shaping, not the CPU, must bound
the rails); runs mlallreduce_bench under `srun --mpi=pmix` for each
ranks-per-node count, Open MPI's TCP kept on the rails (OMPI_MCA_btl_tcp_if_include=rail0,...: its own multi-rail); reads the
rails' byte counters before and after each step; stops the cluster on every
exit path (an exception, SIGINT, SIGTERM).  One cluster per (nodes, rails).
The cluster's daemons, and so the ranks, run at `nice -n NICE` (default -5:
ahead of the builds that share the machine).

  netns_bench.py --build build/default --out DIR [--nodes 2,4] [--ppn 1,2,4]
                 [--rails 1,2] [--rate 200mbit] [--sizes 64K:16M:4] [--algos LIST]
                 [--tune-budget SECONDS] [--mpi openmpi|mpich]

With --mpi mpich, MPICH's build of the benchmark runs under srun
--mpi=pmi2, in a mount namespace with its node's own /sys (UCX finds the
rails there), its UCX kept on the rails (UCX_NET_DEVICES=rail0,...,
UCX_TLS=tcp,self: no shared memory, which would join the nodes).  With --tune-budget (Open MPI), each step is
preceded by `multilane tune --partition gpu` on that cluster (its probe
job on every node, the step's ranks per node; a database of its own in
DIR) and runs `auto` too, with the tuned profile (MULTILANE_PROFILE, from
`multilane resolve`).

Writes into DIR: runs/nN-rR-pP.json (the benchmark's JSON, with the rails'
bytes added as "rails", the step's seconds and its point), runs/nN-rR-pP.txt
(its srun line and output), rates-nN-rR.txt (the rate checks) and
measured.json (every run, for netns_table.py and simulation/calibrate.py);
prints the table (netns_table.py).  Run as root.  Exits 0, or 1 with a line
naming the problem and the fix.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(SOURCE, "scripts", "slurm"))
sys.path.insert(0, HERE)
import netns_check  # noqa: E402  scripts/slurm/netns_check.py
import netns_table  # noqa: E402  benchmarks/netns_table.py

LOCAL_SLURM = os.path.join(SOURCE, "scripts", "slurm", "local-slurm.sh")
# --mpi: the benchmark's build for that MPI family and srun's --mpi for it.
MPIS = {"openmpi": ("mlallreduce_bench", "pmix"), "mpich": ("mlallreduce_bench-mpich", "pmi2")}
ALGOS = "mpi,mpi-best,passthrough,lane,hier,split"


def fail(text):
    """Prints one line naming the problem and the fix, exits 1."""
    print(f"netns_bench.py: {text}", file=sys.stderr)
    sys.exit(1)


def int_list(text):
    """'1,2,4' as [1, 2, 4]."""
    return [int(x) for x in text.split(",") if x]


class Cluster:
    """One namespace cluster in DIR; stop() is safe to call more than once."""

    def __init__(self, folder, nodes, rails, rate, nice):
        self.dir = folder
        self.started = False
        cmd = ["nice", "-n", str(nice), "bash", LOCAL_SLURM, "start", folder, "--nodes", str(nodes), "--netns",
               "--rails", str(rails), "--rate", rate]
        self.started = True  # a failed start stops itself; stop() again is harmless
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
        if p.returncode != 0:
            self.stop()
            fail(f"the cluster did not start ({' '.join(cmd)}):\n{p.stdout}{p.stderr}")

    def stop(self):
        """Stops the daemons and removes the namespaces, veths and bridges."""
        if self.started:
            self.started = False
            subprocess.run(["bash", LOCAL_SLURM, "stop", self.dir], timeout=120)


def job_env(cluster, rails, home, mpi="openmpi"):
    """The environment of srun and so of the ranks: the MPI's traffic
    between the nodes kept on the rails (Open MPI's TCP BTL; MPICH's UCX
    with its TCP and shared memory transports)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MULTILANE_", "SLURM_", "OMPI_MCA_"))}
    env.pop("LD_PRELOAD", None)
    env["SLURM_CONF"] = os.path.join(cluster, "slurm.conf")
    env["HOME"] = home
    env["OMPI_MCA_btl_tcp_if_include"] = ",".join(f"rail{r}" for r in range(rails))
    # The nodes claim 8 CPUs on a 2-core machine: a spinning rank would
    # starve the others (tests/slurm/slurm_fixtures.py says the same).
    env["OMPI_MCA_mpi_yield_when_idle"] = "1"
    env["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
    env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    if mpi == "mpich":
        # UCX's TCP on the rails only; no shared memory, which would join
        # the nodes (they share this machine): ranks of one node talk TCP
        # over their namespace's loopback.  The library is told that every
        # rank runs it (the sysfs wrapper stands between srun and it).
        env["UCX_NET_DEVICES"] = env["OMPI_MCA_btl_tcp_if_include"]
        env["UCX_TLS"] = "tcp,self"
        env["MULTILANE_ALL_RANKS"] = "1"
    return env


def bench_command(a, nodes, ppn, out_json):
    """The srun line of one benchmark step."""
    first, last, factor = a.sizes.split(":")
    program, srun_mpi = MPIS[a.mpi]
    # UCX lists network devices from /sys/class/net, which the nodes' tasks
    # see as the root namespace's (slurmd enters the node's network
    # namespace only): MPICH's tasks get a sysfs of their own namespace.
    wrap = [] if a.mpi == "openmpi" else ["unshare", "-m", "/bin/sh", "-c",
                                          'mount -t sysfs sysfs /sys && exec "$0" "$@"']
    return ["srun", f"--mpi={srun_mpi}", "-N", str(nodes), f"--ntasks-per-node={ppn}", "-t", "20"] + wrap + [
            os.path.join(a.build, "benchmarks", program), "-b", first, "-e", last, "-f", factor,
            "-a", a.algos, "-n", str(a.iters), "-w", "1", "-T", str(a.batch_seconds), "-J", out_json]


def run_point(a, cluster, nodes, rails, ppn):
    """One benchmark step on a running cluster; returns its record."""
    name = f"n{nodes}-r{rails}-p{ppn}"
    out_json = os.path.join(a.out, "runs", name + ".json")
    home = os.path.join(a.out, "home")
    os.makedirs(home, exist_ok=True)
    cmd = bench_command(a, nodes, ppn, out_json)
    env = job_env(cluster, rails, home, a.mpi)
    if a.tune_budget > 0:
        env["MULTILANE_PROFILE"] = tune_profile(a, cluster, rails, ppn)
        cmd[cmd.index("-a") + 1] += ",auto"
    before = netns_check.read_counters(cluster)
    start = time.monotonic()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800)
    seconds = time.monotonic() - start
    change = netns_check.counter_change(before, netns_check.read_counters(cluster))
    with open(os.path.join(a.out, "runs", name + ".txt"), "w") as f:
        f.write(" ".join(cmd) + "\n" + p.stdout + p.stderr)
    if p.returncode != 0 or not os.path.exists(out_json):
        fail(f"{name}: the benchmark step failed (exit {p.returncode}); its output is in {a.out}/runs/{name}.txt")
    with open(out_json) as f:
        doc = json.load(f)
    doc["rails"] = change
    crossed = sum(c["tx_bytes"] for ifs in change.values() for i, c in ifs.items() if i.startswith("rail"))
    if crossed < max(r["size"] for r in doc["results"]):
        fail(f"{name}: the rails moved {crossed} B in the step: the MPI's traffic between the nodes did not "
             f"cross them ({a.mpi}: see {a.out}/runs/{name}.txt); keep its transport on the rails")
    doc["step_seconds"] = round(seconds, 2)
    doc["point"] = {"nodes": nodes, "rails": rails, "ppn": ppn, "rate": a.rate, "delay": "0", "mpi": a.mpi}
    doc["srun"] = " ".join(cmd)
    with open(out_json, "w") as f:
        json.dump(doc, f, indent=1)
    print(f"{name}: done", flush=True)
    return doc


def both_ways(cluster, rails, megabytes):
    """Each rail's TCP rate node1 -> node2 and node2 -> node1 at once (an
    allreduce sends both ways at the same time; netns_check.py rate measures
    one way): returns the text of one line per rail."""
    env = netns_check.read_env(cluster)
    lines = []
    for r in [f"rail{k}" for k in range(rails)] + ["all rails"]:
        names = [f"rail{k}" for k in range(rails)] if r == "all rails" else [r]
        rates = {}

        def one_way(src, dst):
            e = dict(env, **{"from": src, "to": dst})
            pairs = [(n, env[f"{n}_{src}"], env[f"{n}_{dst}"]) for n in names]
            rates[src] = sum(netns_check.transfer(e, pairs, megabytes * 1000000).values())

        threads = [threading.Thread(target=one_way, args=p) for p in (("node1", "node2"), ("node2", "node1"))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        lines.append(f"  {r} both ways at once: node1 -> node2 {rates.get('node1', 0):.1f} Mbit/s, "
                     f"node2 -> node1 {rates.get('node2', 0):.1f} Mbit/s")
    return "\n".join(lines) + "\n"


def tune_profile(a, cluster, rails, ppn):
    """multilane tune --partition gpu on the running cluster (its probe job
    on every node, ppn ranks each), then multilane resolve: returns the
    profile's text (MULTILANE_PROFILE) or fails."""
    db = os.path.join(a.out, f"tune-{os.path.basename(cluster)}-p{ppn}.db")
    env = job_env(cluster, rails, os.path.join(a.out, "home"))
    env["MULTILANE_LIBRARY"] = os.path.join(a.build, "libmlallreduce", "libmlallreduce.so")
    env["MULTILANE_PROBE"] = os.path.join(a.build, "tuner", "mlprobe")
    first, last, _ = a.sizes.split(":")
    multilane = os.path.join(a.build, "launcher", "multilane")
    tune = [multilane, "tune", "--partition", "gpu", "--db", db, "--budget", str(a.tune_budget), "--sizes",
            f"{first}:{last}", "--np", str(ppn), "--memory", "host"]
    if ppn > (os.cpu_count() or 1):
        # More ranks per node than this machine has cores (the namespace
        # nodes share it): tune refuses unless told; the profile is then
        # marked oversubscribed.
        tune.append("--allow-oversubscribed")
    p = subprocess.run(tune, env=env, capture_output=True, text=True, timeout=a.tune_budget + 600, cwd=a.out)
    with open(db + ".txt", "w") as f:
        f.write(" ".join(tune) + "\n" + p.stdout + p.stderr)
    r = subprocess.run([multilane, "resolve", "--db", db, "--partition", "gpu", "--any-node-type"], env=env,
                       capture_output=True, text=True, timeout=120)
    profile = [x[len("profile="):] for x in r.stdout.splitlines() if x.startswith("profile=")]
    if p.returncode != 0 or not profile:
        fail(f"the tune on {cluster} with {ppn} ranks per node gave no profile; see {db}.txt")
    return profile[0]


def save(a, docs):
    """DIR/measured.json: every step so far (written after each step, so
    that a run stopped half-way keeps what it measured)."""
    with open(os.path.join(a.out, "measured.json"), "w") as f:
        json.dump({"command": " ".join(sys.argv), "runs": docs}, f, indent=1)


def run_cluster(a, nodes, rails, clusters, docs):
    """Starts one cluster, checks the rails' rate, runs every ppn (each
    step's record appended to docs and saved), stops it."""
    folder = os.path.join(a.out, f"cluster-n{nodes}-r{rails}")
    c = Cluster(folder, nodes, rails, a.rate, a.nice)
    clusters.append(c)
    try:
        p = subprocess.run([sys.executable, netns_check.__file__, folder, "rate", "--megabytes", str(a.check_mb)],
                           capture_output=True, text=True, timeout=600)
        text = p.stdout + p.stderr + both_ways(folder, rails, a.check_mb)
        with open(os.path.join(a.out, f"rates-n{nodes}-r{rails}.txt"), "w") as f:
            f.write(text)
        print(text, end="", flush=True)
        for ppn in [] if a.check_only else a.ppn:
            docs.append(run_point(a, folder, nodes, rails, ppn))
            save(a, docs)
    finally:
        c.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True, help="the default build (build/default)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--nodes", type=int_list, default=[2, 4])
    ap.add_argument("--ppn", type=int_list, default=[1, 2, 4])
    ap.add_argument("--rails", type=int_list, default=[1, 2])
    ap.add_argument("--rate", default="200mbit", help="each rail's tc tbf rate (local-slurm.sh --rate)")
    ap.add_argument("--sizes", default="64K:16M:4", help="FIRST:LAST:FACTOR (-b, -e, -f)")
    ap.add_argument("--algos", default=ALGOS)
    ap.add_argument("--iters", type=int, default=10, help="-n: timed calls per row, at most")
    ap.add_argument("--batch-seconds", type=float, default=1.0, help="-T: cap on each timed batch")
    ap.add_argument("--check-mb", type=int, default=20, help="megabytes per rail in the rate check")
    ap.add_argument("--tune-budget", type=int, default=0,
                    help="seconds: before each step, multilane tune --partition with this budget, then auto")
    ap.add_argument("--check-only", action="store_true", help="the rails' rate checks only, no benchmark")
    ap.add_argument("--mpi", choices=sorted(MPIS), default="openmpi",
                    help="the MPI family: openmpi (srun --mpi=pmix) or mpich (mlallreduce_bench-mpich, --mpi=pmi2)")
    ap.add_argument("--nice", type=int, default=-5)
    a = ap.parse_args()
    a.out = os.path.realpath(a.out)
    a.build = os.path.realpath(a.build)
    program = MPIS[a.mpi][0]
    if not os.access(os.path.join(a.build, "benchmarks", program), os.X_OK):
        target = program.replace("-", "_")
        fail(f"no {a.build}/benchmarks/{program}: build it (cmake --build build/default --target {target})")
    if a.mpi != "openmpi" and a.tune_budget > 0:
        fail("--tune-budget tunes Open MPI's build only: leave it out with --mpi mpich")
    os.environ.setdefault("MLA_SLURMCTLD_PORT", "26817")
    os.environ.setdefault("MLA_SLURMD_PORT", "26818")
    os.makedirs(os.path.join(a.out, "runs"), exist_ok=True)
    clusters = []

    def stop_all(signum, _frame):
        for c in clusters:
            c.stop()
        fail(f"stopped by signal {signum}; the clusters are stopped")

    signal.signal(signal.SIGTERM, stop_all)
    signal.signal(signal.SIGINT, stop_all)
    docs = []
    try:
        for nodes in a.nodes:
            for rails in a.rails:
                run_cluster(a, nodes, rails, clusters, docs)
    finally:
        for c in clusters:
            c.stop()
    if docs:
        print(netns_table.measured_table(docs))
        print()
        print(netns_table.rails_table(docs))


if __name__ == "__main__":
    main()
