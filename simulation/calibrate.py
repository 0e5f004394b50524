#!/usr/bin/env python3
"""calibrate.py: the simulation against the measurement over namespace nodes.

Reads a netns_bench.py run (benchmarks/netns_bench.py: measured.json),
simulates every (nodes, rails, ranks per node) point of it on a SimGrid
platform generated from the same cluster's parameters (platform_params:
each rail's shaped rate, the rails, the delay, the ranks per node), with the
same sizes and the algorithms SMPI can run (mpi, lane, hier, split; SMPI's
`ompi` selector for Open MPI's runs, `mpich` for MPICH's), and prints
per (algorithm, size, nodes, rails, ranks per node) the measured and the
simulated time and the error (simulated / measured - 1) for each model
(MODELS: the NICs full duplex, and both ways sharing them), then the measured
growth from N to 2N and 4N nodes against the report's scaling prediction
(simulation/model_check.py's g, with s = 1: docs/scale.md says why).

  calibrate.py --measured DIR/measured.json --build build/simulation --out DIR2
  calibrate.py --measured DIR/measured.json --simulated DIR2/simulated.json   (tables only)

--measured and --simulated may be given more than once (runs of 2 and of 4
nodes made apart); the growth tables pair each N-node point with the 2N-
and 4N-node points of the same rails, ranks per node, size and algorithm.

Writes DIR2/simulated.json ({"runs": [...]}, the benchmark's JSON per point,
"point" added) and DIR2/runs/ (platforms, hostfiles, logs).
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "benchmarks"))
import model_check  # noqa: E402  the report's ring factor
import netns_table  # noqa: E402  benchmarks/netns_table.py: rates, WIRE_PAYLOAD

SIM_ALGOS = ["mpi", "lane", "hier", "split"]
# SMPI's allreduce selector standing in for each measured MPI family.
SELECTORS = {"openmpi": "ompi", "mpich": "mpich"}
# The models simulated: the NIC full duplex as the rails are (each way
# its rate), and both ways sharing it (what the measurement shows).
MODELS = ("SPLITDUPLEX", "SHARED")
# What the model takes from this machine rather than from the cluster's
# command line (docs/scale.md, "Calibration": the local-tcp preset):
# TCP's one-way latency through the kernel (the veths add no delay of their
# own; --delay adds to it) and shared memory inside a node.
TCP_LAT_US = 30.0
INTRA = dict(intra_gbps=2.4, intra_lat_us=5.0)


def delay_us(delay):
    """local-slurm.sh's --delay ('0', '50us', '2ms') in microseconds."""
    if delay == "0":
        return 0.0
    return float(delay[:-2]) * (1000.0 if delay.endswith("ms") else 1.0)


def platform_params(point, sharing):
    """cluster_platform.py's parameters for a netns_bench.py point: a rail
    is the shaped rate's TCP payload (netns_table.WIRE_PAYLOAD), the rails
    add up per node, one process drives all of them (Open MPI's TCP stripes
    a message over the rails in its if_include list), the latency is TCP's
    on this machine plus the rails' delay; the NIC links' sharing policy
    (cluster_platform.NIC_SHARING) is the model's choice."""
    nic = netns_table.rate_bits(point["rate"]) / 8 / 1e9 * netns_table.WIRE_PAYLOAD
    p = dict(nic_gbps=nic, rails=point["rails"], nic_lat_us=TCP_LAT_US + delay_us(point.get("delay", "0")),
             proc_gbps=nic * point["rails"], nic_sharing=sharing)
    p.update(INTRA)
    return p


def point_key(doc):
    """(nodes, rails, ppn) of a run (main takes one MPI family's runs)."""
    p = doc["point"]
    return (p["nodes"], p["rails"], p["ppn"])


def simulate(a, measured):
    """Runs SMPI on every measured point with each model (MODELS); returns
    the simulated runs, "model" and "params" added."""
    import simrun  # noqa: E402  needs only the simulation build

    bench = os.path.join(a.build, "simulation", "mlsim_bench")
    out = []
    for doc in measured:
        sizes = sorted({r["size"] for r in doc["results"]})
        factor = sizes[1] // sizes[0] if len(sizes) > 1 else 2
        nodes, rails, ppn = point_key(doc)
        for model in MODELS:
            params = platform_params(doc["point"], model)
            sim, wall = simrun.run(a.smpirun, bench, os.path.join(a.out, "runs"), f"netns-r{rails}-{model}", nodes,
                                   ppn, SELECTORS[doc["point"].get("mpi", "openmpi")], (sizes[0], sizes[-1], factor),
                                   SIM_ALGOS, check=False,
                                   params=params, timeout=900, extra_env={"MULTILANE_RANKS_PER_GPU": "1"})
            sim.update(point=doc["point"], params=params, model=model)
            print(f"simulated n{nodes}-r{rails}-p{ppn} {model} in {wall:.1f} s", file=sys.stderr, flush=True)
            out.append(sim)
    return out


def times(runs):
    """{(nodes, rails, ppn, size, algo): time_us}."""
    return {point_key(d) + (r["size"], r["algo"]): r["time_us"] for d in runs for r in d["results"]}


def model_runs(simulated, model):
    """The simulated runs of one model (a run without "model" is SPLITDUPLEX)."""
    return [d for d in simulated if d.get("model", MODELS[0]) == model]


def compare_rows(measured, simulated):
    """[(nodes, rails, ppn, size, algo, measured_us, [(simulated_us, error)
    per model of MODELS])] for every point the measurement and each model
    have; error = simulated / measured - 1."""
    m = times(measured)
    sims = [times(model_runs(simulated, model)) for model in MODELS]
    return [k + (m[k], [(s[k], s[k] / m[k] - 1) for s in sims]) for k in sorted(m) if all(k in s for s in sims)]


def summary(errors):
    """'N of M within 15 %, median |error| X %, largest Y %'."""
    errs = sorted(abs(e) for e in errors)
    return (f"{sum(1 for e in errs if e <= 0.15)} of {len(errs)} within 15 %, median |error| "
            f"{100 * errs[len(errs) // 2]:.0f} %, largest {100 * errs[-1]:.0f} %")


def compare_table(measured, simulated):
    """The Markdown table of measured against each model's simulation, and a
    summary line per model: the rows within 15 % and the median error."""
    rows = compare_rows(measured, simulated)
    head = "| nodes | rails | ranks/node | size | algo | measured (ms) |"
    head += "".join(f" {m} (ms) | error |" for m in MODELS)
    lines = [head, "| ---: | ---: | ---: | ---: | --- | ---: |" + " ---: | ---: |" * len(MODELS)]
    for n, r, p, size, algo, mt, sims in rows:
        cells = "".join(f" {st / 1000:.2f} | {100 * err:+.0f} % |" for st, err in sims)
        lines.append(f"| {n} | {r} | {p} | {netns_table.size_text(size)} | {algo} | {mt / 1000:.2f} |{cells}")
    if rows:
        lines.append("")
        for k, model in enumerate(MODELS):
            lines.append(f"- {model}: {summary([x[-1][k][1] for x in rows])}")
            big = [x[-1][k][1] for x in rows if x[3] >= 1 << 20]
            if big:
                lines.append(f"- {model}, 1 MiB and up: {summary(big)}")
    return "\n".join(lines)


def scaling_rows(runs, share=1.0, factors=(2, 4)):
    """[(nodes, k * nodes, rails, ppn, size, algo, growth, g, error)] for
    each k of factors: the measured T(kN)/T(N) against the report's g
    (model_check) with share s."""
    t = times(runs)
    rows = []
    for k in factors:
        for (n, r, p, size, algo), base in sorted(t.items()):
            big = t.get((k * n, r, p, size, algo))
            if big is None:
                continue
            g = (1 - share) * model_check.ring_factor(n * p, k) + share * model_check.ring_factor(n, k)
            growth = big / base
            rows.append((n, k * n, r, p, size, algo, growth, g, g / growth - 1))
    return rows


def scaling_table(runs, label):
    """The Markdown table of scaling_rows for runs (measured or simulated)."""
    lines = [f"| nodes | rails | ranks/node | size | algo | {label} T(kN)/T(N) | report's g | error |",
             "| --- | ---: | ---: | ---: | --- | ---: | ---: | ---: |"]
    rows = scaling_rows(runs)
    for n, n2, r, p, size, algo, growth, g, err in rows:
        lines.append(f"| {n} → {n2} | {r} | {p} | {netns_table.size_text(size)} | {algo} | {growth:.2f} | "
                     f"{g:.2f} | {100 * err:+.0f} % |")
    if rows:
        big = [x[-1] for x in rows if x[4] >= 1 << 20]
        lines.append("")
        lines.append(f"- every size: {summary([x[-1] for x in rows])}")
        if big:
            lines.append(f"- 1 MiB and up: {summary(big)}")
    return "\n".join(lines)


def load_runs(path):
    """The "runs" list of a measured.json or simulated.json."""
    with open(path) as f:
        return json.load(f)["runs"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--measured", required=True, action="append",
                    help="netns_bench.py's measured.json (again for more runs: 2 and 4 nodes apart)")
    ap.add_argument("--simulated", action="append",
                    help="an earlier run's simulated.json: print the tables only (again for more)")
    ap.add_argument("--build", help="the simulation build (build/simulation)")
    ap.add_argument("--out", default="calibrate")
    ap.add_argument("--smpirun", default="smpirun")
    a = ap.parse_args()
    measured = [d for path in a.measured for d in load_runs(path)]
    families = sorted({d["point"].get("mpi", "openmpi") for d in measured})
    if len(families) > 1:
        ap.error(f"--measured: runs of {' and '.join(families)} together; give one MPI family's runs at a time")
    if a.simulated:
        simulated = [d for path in a.simulated for d in load_runs(path)]
    else:
        if not a.build:
            ap.error("give --build (to simulate) or --simulated (an earlier run's simulated.json)")
        simulated = simulate(a, measured)
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "simulated.json"), "w") as f:
            json.dump({"command": " ".join(sys.argv), "runs": simulated}, f, indent=1)
    print("## Measured against simulated\n")
    print(compare_table(measured, simulated))
    print("\n## Growth from N to kN nodes: measured, and the report's prediction\n")
    print(scaling_table(measured, "measured"))
    for model in MODELS:
        print(f"\n## Growth from N to kN nodes: simulated, {model}\n")
        print(scaling_table(model_runs(simulated, model), "simulated"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
