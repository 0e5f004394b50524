#!/usr/bin/python3
"""netns_check.py: the rails of a network namespace test cluster, measured.

For a cluster started with `local-slurm.sh start DIR --nodes N --netns`
(DIR/netns.env names its namespaces and addresses):

  netns_check.py DIR rate [--from node1] [--to node2] [--megabytes 50]
      sends that many megabytes over TCP from one node to the other on each
      rail in turn, then on all rails at once, then on the unshaped mgmt
      interface (what the machine's cores can move: if it is far above the
      rails' sum, the shaping and not the CPU bounds the rails), each sender
      and receiver run in its node's namespace (`ip netns exec`); prints the
      receiver's Mbit/s per rail and the bytes each rail's counters moved.
  netns_check.py DIR counters [--save FILE] [--since FILE]
      prints tx and rx bytes of every node's mgmt and rail interfaces, read
      from /sys/class/net/IF/statistics inside each namespace; --save writes
      them as JSON, --since prints the change since a saved file (before and
      after a job: its bytes on each rail).

Traffic goes only between the cluster's namespaces, on addresses that exist
only inside them.  Python's standard library only (socket), run as root.
Exits 0, or 1 with one line naming the problem and the fix.
"""
import argparse
import json
import os
import socket
import subprocess
import sys
import time

PORT = 5201
CHUNK = 1 << 16


def fail(text):
    """Prints one line naming the problem and the fix, exits 1."""
    print(f"netns_check.py: {text}", file=sys.stderr)
    sys.exit(1)


def read_env(cluster):
    """DIR/netns.env as a dict; fails when the cluster is not a netns one."""
    path = os.path.join(cluster, "netns.env")
    try:
        with open(path) as f:
            lines = f.read(1 << 16).splitlines()
    except OSError:
        fail(f"no {path}: start the cluster with local-slurm.sh start {cluster} --nodes N --netns")
    env = {}
    for line in lines:
        if line and not line.startswith("#") and "=" in line:
            key, value = line.split("=", 1)
            env[key] = value
    return env


def interfaces(env):
    """The interfaces the cluster made in each node: mgmt, rail0, rail1, ..."""
    return ["mgmt"] + [f"rail{r}" for r in range(int(env["rails"]))]


def read_counters(cluster):
    """{node: {interface: {"tx_bytes": n, "rx_bytes": n}}} of the cluster,
    read from /sys/class/net/IF/statistics inside each node's namespace."""
    env = read_env(cluster)
    counters = {}
    for node in env["nodes"].split():
        names = interfaces(env)
        files = [f"/sys/class/net/{i}/statistics/{k}" for i in names for k in ("tx_bytes", "rx_bytes")]
        p = subprocess.run(["ip", "netns", "exec", env[f"ns_{node}"], "cat"] + files,
                           capture_output=True, text=True)
        if p.returncode != 0:
            fail(f"could not read the counters of {node}: {p.stderr.strip()}; is the cluster running?")
        values = [int(v) for v in p.stdout.split()]
        counters[node] = {
            i: {"tx_bytes": values[2 * k], "rx_bytes": values[2 * k + 1]} for k, i in enumerate(names)
        }
    return counters


def counter_change(before, after):
    """after minus before, per node, interface and counter."""
    return {
        node: {i: {k: after[node][i][k] - before[node][i][k] for k in after[node][i]} for i in after[node]}
        for node in after
    }


def print_counters(counters, heading):
    """One line per node and interface."""
    print(heading)
    for node, ifs in counters.items():
        for i, c in ifs.items():
            print(f"  {node} {i:6} tx {c['tx_bytes']:>14,} B  rx {c['rx_bytes']:>14,} B")


def serve(address, port):
    """Receiver (run inside a namespace): accepts one connection on
    address:port, reads to the end and prints `BYTES SECONDS` (from the first
    byte to the last)."""
    with socket.create_server((address, port)) as server:
        print("ready", flush=True)
        server.settimeout(60)
        conn, _ = server.accept()
        with conn:
            conn.settimeout(60)
            total = 0
            first = None
            while True:
                data = conn.recv(1 << 20)
                if not data:
                    break
                if first is None:
                    first = time.monotonic()
                total += len(data)
            seconds = time.monotonic() - first if first else 0.0
    print(f"{total} {seconds:.6f}", flush=True)


def send(source, address, port, size):
    """Sender (run inside a namespace): connects from source to
    address:port and sends size bytes."""
    block = b"\0" * CHUNK
    with socket.create_connection((address, port), timeout=60, source_address=(source, 0)) as conn:
        left = size
        while left > 0:
            n = min(left, CHUNK)
            conn.sendall(block[:n])
            left -= n


def self_command(env, node, *args):
    """This script run with ARGS inside NODE's namespace."""
    return ["ip", "netns", "exec", env[f"ns_{node}"], sys.executable, os.path.abspath(__file__)] + list(args)


def transfer(env, pairs, size):
    """Sends size bytes on each (interface, source address, destination
    address) of pairs at once, from --from's namespace to --to's; returns
    {interface: Mbit/s at the receiver}."""
    receivers = {}
    for k, (name, _, dst) in enumerate(pairs):
        p = subprocess.Popen(self_command(env, env["to"], "serve", dst, str(PORT + k)),
                             stdout=subprocess.PIPE, text=True)
        if p.stdout.readline().strip() != "ready":
            fail(f"the receiver on {dst} did not start: is the cluster running?")
        receivers[name] = p
    senders = [
        subprocess.Popen(self_command(env, env["from"], "send", src, dst, str(PORT + k), str(size)))
        for k, (_, src, dst) in enumerate(pairs)
    ]
    for s in senders:
        if s.wait(timeout=300) != 0:
            fail("a sender failed: see its message above")
    rates = {}
    for name, p in receivers.items():
        out, _ = p.communicate(timeout=60)
        total, seconds = out.split()
        if int(total) != size or float(seconds) <= 0:
            fail(f"{name}: {total} of {size} bytes arrived")
        rates[name] = int(total) * 8 / float(seconds) / 1e6
    return rates


def measure(cluster, args):
    """The rate subcommand: each rail alone, all rails at once, mgmt."""
    env = read_env(cluster)
    nodes = env["nodes"].split()
    for node in (args.source, args.to):
        if node not in nodes:
            fail(f"no node {node} in {cluster}: give one of {', '.join(nodes)}")
    if args.source == args.to:
        fail("--from and --to name the same node: give two nodes")
    env["from"], env["to"] = args.source, args.to
    size = args.megabytes * 1000000
    rails = interfaces(env)[1:]

    def pair(i):
        return (i, env[f"{i}_{args.source}"], env[f"{i}_{args.to}"])

    print(f"{cluster}: {len(rails)} rail(s) at {env['rate']} (delay {env['delay']}), "
          f"{args.megabytes} MB per transfer, {args.source} -> {args.to}")
    before = read_counters(cluster)
    for r in rails:
        rate = transfer(env, [pair(r)], size)[r]
        print(f"  {r} alone        {rate:8.1f} Mbit/s")
    together = transfer(env, [pair(r) for r in rails], size)
    for r in rails:
        print(f"  {r} with others  {together[r]:8.1f} Mbit/s")
    print(f"  all rails at once {sum(together.values()):8.1f} Mbit/s")
    after = read_counters(cluster)
    mgmt = transfer(env, [pair("mgmt")], size)["mgmt"]
    print(f"  mgmt (unshaped)   {mgmt:8.1f} Mbit/s")
    change = counter_change(before, after)
    for r in rails:
        print(f"  {r} counters, both runs: {args.source} tx {change[args.source][r]['tx_bytes']:,} B, "
              f"{args.to} rx {change[args.to][r]['rx_bytes']:,} B")


def counters_command(cluster, args):
    """The counters subcommand."""
    now = read_counters(cluster)
    if args.save:
        with open(args.save, "w") as f:
            json.dump(now, f, indent=1)
    if args.since:
        try:
            with open(args.since) as f:
                before = json.load(f)
        except (OSError, ValueError) as e:
            fail(f"could not read {args.since} ({e}): give a file written by counters --save")
        print_counters(counter_change(before, now), f"{cluster}: bytes since {args.since}")
    elif not args.save:
        print_counters(now, f"{cluster}: bytes")


def main():
    """Command line."""
    if len(sys.argv) > 1 and sys.argv[1] in ("serve", "send"):
        # Inside a namespace: serve ADDRESS PORT, send SOURCE ADDRESS PORT BYTES.
        if sys.argv[1] == "serve":
            serve(sys.argv[2], int(sys.argv[3]))
        else:
            send(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dir", help="the cluster's DIR (local-slurm.sh start DIR --netns)")
    sub = parser.add_subparsers(dest="command", required=True)
    rate = sub.add_parser("rate", help="TCP Mbit/s per rail")
    rate.add_argument("--from", dest="source", default="node1")
    rate.add_argument("--to", default="node2")
    rate.add_argument("--megabytes", type=int, default=50)
    counters = sub.add_parser("counters", help="the interfaces' byte counters")
    counters.add_argument("--save", help="write them to this JSON file")
    counters.add_argument("--since", help="print the change since this file (from --save)")
    args = parser.parse_args()
    cluster = os.path.realpath(args.dir)
    if args.command == "rate":
        if args.megabytes < 1:
            fail("--megabytes: give 1 or more")
        measure(cluster, args)
    else:
        counters_command(cluster, args)


if __name__ == "__main__":
    main()
