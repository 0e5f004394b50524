#!/usr/bin/python3
"""netns_table.py: the tables of a netns_bench.py run (docs/results/...).

  netns_table.py MEASURED_JSON...   prints the Markdown tables (of every
                                    file's runs: 2 and 4 nodes run apart)

measured_table(runs) is what netns_bench.py prints at its end: per (nodes,
rails, ranks per node, size) the system MPI's time, its best algorithm's
time and how close that is to the rails' bound (net share below), and each
multilane algorithm's vs_mpi / vs_best (the benchmark's own columns); then
the bytes each rail moved in each step.

The rails' bound: an allreduce of S bytes over N nodes sends at least
2(N-1)/N x S bytes out of every node (reduce-scatter and allgather between
the nodes, whatever happens inside them), and a node sends at most
R x RATE bits/s, of which TCP over Ethernet carries WIRE_PAYLOAD as data.
net share = that bound's time / the measured time: near 1, the shaped
rails bound the call (not the CPU); well below, something else does.
"""
import json
import sys

# Data bytes per byte tc's tbf counts on a veth: a full TCP segment carries
# 1448 B (MTU 1500 less IP, TCP and timestamp headers) in a 1514 B frame.
WIRE_PAYLOAD = 1448 / 1514
LIBRARY_ALGOS = ("passthrough", "lane", "hier", "split", "auto")


def rate_bits(rate):
    """'200mbit' in bit/s."""
    for suffix, scale in (("kbit", 1e3), ("mbit", 1e6), ("gbit", 1e9)):
        if rate.endswith(suffix):
            return float(rate[: -len(suffix)]) * scale
    raise ValueError(f"rate '{rate}': give kbit, mbit or gbit")


def bound_seconds(size, nodes, rails, rate):
    """The rails' bound on one allreduce of size bytes (module docstring)."""
    return 2.0 * (nodes - 1) / nodes * size / (rails * rate_bits(rate) / 8 * WIRE_PAYLOAD)


def size_text(size):
    """4194304 as '4 MiB'."""
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} B"


def rows_by_size(doc):
    """{size: {algo: row}} of one run."""
    out = {}
    for r in doc["results"]:
        out.setdefault(r["size"], {})[r["algo"]] = r
    return out


def ratio(value):
    """A vs_ column's value, or '-'."""
    return "-" if value is None else f"{value:.2f}"


def measured_table(runs):
    """The Markdown table of times and ratios (module docstring)."""
    algos = [a for a in LIBRARY_ALGOS if any(a in row for d in runs for row in rows_by_size(d).values())]
    head = ["nodes", "rails", "ranks/node", "size", "mpi (ms)", "mpi-best (ms)", "best is", "net share"]
    head += [f"{a} vs_mpi / vs_best" for a in algos]
    lines = ["| " + " | ".join(head) + " |", "|" + " ---: |" * len(head)]
    for d in runs:
        pt = d["point"]
        for size, by_algo in sorted(rows_by_size(d).items()):
            mpi, best = by_algo.get("mpi"), by_algo.get("mpi-best")
            ref = best or mpi
            share = bound_seconds(size, pt["nodes"], pt["rails"], pt["rate"]) / (ref["time_us"] * 1e-6)
            cells = [pt["nodes"], pt["rails"], pt["ppn"], size_text(size),
                     f"{mpi['time_us'] / 1000:.2f}" if mpi else "-",
                     f"{best['time_us'] / 1000:.2f}" if best else "-",
                     best.get("ran_as", "-") if best else "-", f"{share:.2f}"]
            for a in algos:
                r = by_algo.get(a)
                cells.append(f"{ratio(r['vs_mpi'])} / {ratio(r['vs_best'])}" if r else "-")
            lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(lines)


def rails_table(runs):
    """The Markdown table of each step's bytes per rail (all nodes' tx
    summed) and on mgmt, in MB, and the step's mean rate per node and rail
    (tx bytes / nodes / rails / the step's seconds, start-up included)."""
    lines = ["| nodes | rails | ranks/node | tx per rail, all nodes (MB) | mgmt tx (MB) | step (s) "
             "| mean Mbit/s per node and rail |", "| ---: | ---: | ---: | --- | ---: | ---: | ---: |"]
    for d in runs:
        pt = d["point"]
        per_rail = {}
        mgmt = 0
        for ifs in d["rails"].values():
            for name, c in ifs.items():
                if name == "mgmt":
                    mgmt += c["tx_bytes"]
                else:
                    per_rail[name] = per_rail.get(name, 0) + c["tx_bytes"]
        rails = ", ".join(f"{k} {v / 1e6:.1f}" for k, v in sorted(per_rail.items()))
        seconds = d.get("step_seconds")
        mean = "-" if not seconds else f"{sum(per_rail.values()) * 8 / 1e6 / pt['nodes'] / pt['rails'] / seconds:.0f}"
        lines.append(f"| {pt['nodes']} | {pt['rails']} | {pt['ppn']} | {rails} | {mgmt / 1e6:.2f} | "
                     f"{seconds or '-'} | {mean} |")
    return "\n".join(lines)


def main():
    if len(sys.argv) < 2:
        print("usage: netns_table.py MEASURED_JSON... (netns_bench.py's measured.json)", file=sys.stderr)
        sys.exit(2)
    runs = []
    for path in sys.argv[1:]:
        with open(path) as f:
            runs += json.load(f)["runs"]
    print(measured_table(runs))
    print()
    print(rails_table(runs))


if __name__ == "__main__":
    main()
