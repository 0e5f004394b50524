"""simrun.py: runs mlsim_bench once under smpirun on a generated platform and
returns its JSON results (used by sweep.py and check_reduction.py)."""
import json
import os
import signal
import subprocess
import time

import cluster_platform as simplatform  # simulation/cluster_platform.py


def ppg_for(ppn):
    """Ranks per GPU group for split on ppn ranks per node: 4 GPU groups per
    node (a 4-GPU node), at least 2 ranks per group."""
    return max(2, ppn // 4)


def run(smpirun, bench, workdir, preset, nodes, ppn, selector, sizes, algos, check, shared_malloc_bytes=0,
        params=None, timeout=600, extra_env=None):
    """Runs one simulation: nodes x ppn ranks on `preset` (or `params`),
    SMPI allreduce selector `selector` (ompi, mpich, mvapich2, default),
    message sizes (first, last, factor), the benchmark's algorithms `algos`
    (list), validation on or off.  shared_malloc_bytes > 0 makes SMPI share
    allocations of that size and above between ranks (memory-bounded, but the
    values are then meaningless: use with check=False only).  Returns
    (document, seconds of wall time); raises RuntimeError when the run fails."""
    os.makedirs(workdir, exist_ok=True)
    tag = "%s-n%d-r%d-%s" % (preset, nodes, ppn, selector)
    xml = os.path.join(workdir, tag + ".xml")
    hosts = os.path.join(workdir, tag + ".hosts")
    out_json = os.path.join(workdir, tag + ".json")
    log = os.path.join(workdir, tag + ".log")
    p = params if params is not None else simplatform.resolve(preset, {})
    simplatform.write(nodes, ppn, p, xml, hosts)
    if os.path.exists(out_json):
        os.remove(out_json)
    first, last, factor = sizes
    cmd = [smpirun, "-np", str(nodes * ppn), "-platform", xml, "-hostfile", hosts]
    cmd += simplatform.RUN_CONFIG
    cmd += ["--cfg=smpi/allreduce:%s" % selector, "--log=root.thres:warning"]
    if shared_malloc_bytes > 0:
        cmd += ["--cfg=smpi/shared-malloc:global", "--cfg=smpi/auto-shared-malloc-thresh:%d" % shared_malloc_bytes]
    cmd += [bench, "-b", str(first), "-e", str(last), "-f", str(factor), "-n", "1", "-w", "1",
            "-z", "1" if check else "0", "-a", ",".join(algos), "-J", out_json]
    env = dict(os.environ)
    env["MULTILANE_RANKS_PER_GPU"] = str(ppg_for(ppn))
    env.pop("MULTILANE_RANKS_PER_NODE", None)  # the simulated hosts are the nodes
    if extra_env:
        env.update(extra_env)
    t0 = time.time()
    with open(log, "w") as f:
        f.write(" ".join(cmd) + "\n")
        f.flush()
        # smpirun is a script that starts smpimain: a session of its own lets
        # a timeout end both.
        proc = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise RuntimeError("%s: no result within %d s (killed)" % (tag, timeout))
    wall = time.time() - t0
    if rc != 0 or not os.path.exists(out_json):
        with open(log) as f:
            tail = f.read()[-2000:]
        raise RuntimeError("%s: smpirun exited with status %d\n%s" % (tag, rc, tail))
    with open(out_json) as f:
        doc = json.load(f)
    doc["_command"] = cmd
    return doc, wall
