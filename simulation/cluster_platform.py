#!/usr/bin/env python3
"""cluster_platform.py: writes a SimGrid platform (a cluster of N nodes) and the SMPI
hostfile that places R ranks on each node, from a named preset or from the
parameters given (docs/scale.md explains each preset and where its figures
come from).

The model (SimGrid 3.32 <cluster>, CM02 network model without correction
factors, see RUN_CONFIG):
  - every node has one private link up and one down (SPLITDUPLEX) of
    nic_gbps x rails GB/s: the node's NIC capacity, shared (max-min fair) by
    all the flows that leave or enter the node; multi-rail is the sum of the
    rails.  With nic_sharing SHARED (--nic-sharing SHARED) one link carries
    both ways: what a node sends and receives at once shares nic_gbps x
    rails (what MPI over TCP on the shaped rails of the namespace cluster
    got, docs/results/2026-12-06-netns-lanes/README.md);
  - one-way latency between two nodes is nic_lat_us (half on each private
    link, a backbone of latency 0);
  - the backbone is a FATPIPE of proc_gbps: it is not shared, so it bounds
    every single flow to proc_gbps (the most one process can drive) and
    nothing else: a non-blocking fabric;
  - ranks of one node talk through the node's loopback (FATPIPE):
    intra_gbps per flow, intra_lat_us.  SimGrid's loopback does not share, so
    the node's total memory bandwidth is not modelled.
  - the hosts compute at 1 Gflop/s, unused: computation is not simulated
    (RUN_CONFIG), the reductions inside MPI calls are not timed by SMPI.

Usage:
  cluster_platform.py --preset ndr8 --nodes 64 --ppn 16 --xml out.xml --hostfile out.hosts
  cluster_platform.py --nodes 8 --ppn 4 --nic-gbps 12.5 --proc-gbps 12.5 --rails 2 ...
  cluster_platform.py --list
"""
import argparse
import sys

# GB/s are 1e9 bytes per second.  Each preset's source is in docs/scale.md.
PRESETS = {
    # This machine's two-node Slurm cluster runs both nodes on this host:
    # Open MPI over TCP on the loopback interface (btl tcp,self), measured
    # here (docs/scale.md, "Calibration"): 2 ranks take 34 us at 4 KiB and
    # 73 ms at 16 MiB (0.23 GB/s per process); 2 virtual nodes of 2 ranks,
    # lane over TCP: 1.33x the system MPI at 16 MiB (two cores, so about
    # 1.3 flows' worth per node); shared memory inside a node: 17.5 us at
    # 4 KiB and 2.4 GB/s busbw at 4 MiB (docs/benchmarks.md, 4 ranks).
    "local-tcp": dict(nic_gbps=0.33, rails=1, nic_lat_us=30.0, proc_gbps=0.25, intra_gbps=2.4, intra_lat_us=5.0),
    # The GPU host's staged copies (docs/benchmarks.md, two virtual nodes of
    # one GPU each): one process moves 1 GiB between the nodes in 1.19 s
    # (0.9 GB/s: staged MPI, one rank per GPU), 8 processes per GPU 16.4x
    # faster (15 GB/s together); 4 KiB takes 25 us.
    "gpu-staged": dict(nic_gbps=15.0, rails=1, nic_lat_us=20.0, proc_gbps=0.9, intra_gbps=8.0, intra_lat_us=1.0),
    # InfiniBand HDR, 200 Gb/s per port, one port per node; one process can
    # drive the port (RDMA).
    "hdr": dict(nic_gbps=25.0, rails=1, nic_lat_us=1.0, proc_gbps=25.0, intra_gbps=10.0, intra_lat_us=0.3),
    # InfiniBand NDR, 400 Gb/s per port, 8 ports per node as on a DGX H100
    # (one per GPU); one process drives at most one port.
    "ndr8": dict(nic_gbps=50.0, rails=8, nic_lat_us=1.0, proc_gbps=50.0, intra_gbps=10.0, intra_lat_us=0.3),
}

# The SMPI settings every simulation run uses with these platforms.
RUN_CONFIG = [
    "--cfg=network/model:CM02",          # bandwidth and latency as given, no correction factors
    "--cfg=network/TCP-gamma:0",         # no TCP window bound: proc_gbps is the per-flow bound
    "--cfg=smpi/simulate-computation:no",  # the driver's own computation takes no simulated time
]

PARAMS = ("nic_gbps", "rails", "nic_lat_us", "proc_gbps", "intra_gbps", "intra_lat_us")
# The NIC links' SimGrid sharing policy (nic_sharing, optional): SPLITDUPLEX,
# the full duplex of a real NIC, unless a platform says SHARED.
NIC_SHARING = ("SPLITDUPLEX", "SHARED")


def platform_xml(nodes, ppn, p):
    """Returns the platform file's text for `nodes` nodes of `ppn` cores with parameters p."""
    nic = p["nic_gbps"] * p["rails"] * 1e9
    return (
        "<?xml version='1.0'?>\n"
        '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
        '<platform version="4.1">\n'
        "  <!-- multilane simulation/cluster_platform.py: %s -->\n"
        '  <cluster id="cluster" prefix="node-" suffix="" radical="0-%d" speed="1Gf" core="%d"\n'
        '           bw="%.6gBps" lat="%.6gus" sharing_policy="%s"\n'
        '           bb_bw="%.6gBps" bb_lat="0us" bb_sharing_policy="FATPIPE"\n'
        '           loopback_bw="%.6gBps" loopback_lat="%.6gus"/>\n'
        "</platform>\n"
        % (
            " ".join("%s=%g" % (k, p[k]) for k in PARAMS),
            nodes - 1,
            ppn,
            nic,
            p["nic_lat_us"] / 2,
            p.get("nic_sharing", NIC_SHARING[0]),
            p["proc_gbps"] * 1e9,
            p["intra_gbps"] * 1e9,
            p["intra_lat_us"],
        )
    )


def hostfile(nodes, ppn):
    """Returns the hostfile's text: ppn consecutive ranks on each node."""
    return "".join("node-%d\n" % n for n in range(nodes) for _ in range(ppn))


def resolve(preset, overrides):
    """Returns the parameters of `preset` (or of none) with the given overrides applied."""
    if preset is None:
        p = {}
    elif preset in PRESETS:
        p = dict(PRESETS[preset])
    else:
        raise ValueError("unknown preset '%s'; use one of %s" % (preset, ", ".join(PRESETS)))
    for k, v in overrides.items():
        if v is not None:
            p[k] = v
    if p.get("nic_sharing", NIC_SHARING[0]) not in NIC_SHARING:
        raise ValueError("nic_sharing '%s': use one of %s" % (p["nic_sharing"], ", ".join(NIC_SHARING)))
    missing = [k for k in PARAMS if k not in p]
    if missing:
        raise ValueError("missing parameters: %s (give --preset or every parameter)" % ", ".join(missing))
    return p


def write(nodes, ppn, params, xml_path, hosts_path):
    """Writes the platform and hostfile for nodes x ppn ranks."""
    with open(xml_path, "w") as f:
        f.write(platform_xml(nodes, ppn, params))
    with open(hosts_path, "w") as f:
        f.write(hostfile(nodes, ppn))


def main(argv):
    ap = argparse.ArgumentParser(description="Writes a SimGrid cluster platform and hostfile for SMPI.")
    ap.add_argument("--list", action="store_true", help="print the presets and exit")
    ap.add_argument("--preset", choices=sorted(PRESETS))
    ap.add_argument("--nodes", type=int)
    ap.add_argument("--ppn", type=int, help="ranks (cores) per node")
    for k in PARAMS:
        ap.add_argument("--" + k.replace("_", "-"), type=float, dest=k)
    ap.add_argument("--nic-sharing", choices=NIC_SHARING, dest="nic_sharing",
                    help="the NIC links' sharing: SPLITDUPLEX (default, full duplex) or SHARED (both ways share)")
    ap.add_argument("--xml", help="platform file to write")
    ap.add_argument("--hostfile", help="hostfile to write")
    a = ap.parse_args(argv)
    if a.list:
        for name, p in PRESETS.items():
            print("%-10s %s" % (name, " ".join("%s=%g" % (k, p[k]) for k in PARAMS)))
        return 0
    if not (a.nodes and a.ppn and a.xml and a.hostfile):
        ap.error("--nodes, --ppn, --xml and --hostfile are needed")
    try:
        params = resolve(a.preset, {k: getattr(a, k) for k in PARAMS + ("nic_sharing",)})
    except ValueError as e:
        ap.error(str(e))
    write(a.nodes, a.ppn, params, a.xml, a.hostfile)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
