#!/usr/bin/env python3
"""cluster_platform_test.py: the platform writer's output for a preset and for
explicit parameters (CTest sim_platform)."""
import os
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster_platform as cp  # noqa: E402


def cluster_of(nodes, ppn, params):
    with tempfile.TemporaryDirectory() as d:
        xml, hosts = os.path.join(d, "p.xml"), os.path.join(d, "p.hosts")
        cp.write(nodes, ppn, params, xml, hosts)
        c = ET.parse(xml).getroot().find("cluster")
        with open(hosts) as f:
            return c, f.read().split()


def main():
    # ndr8: 8 ports of 50 GB/s per node, a flow bounded to one port.
    c, hosts = cluster_of(3, 4, cp.resolve("ndr8", {}))
    assert c.get("radical") == "0-2" and c.get("core") == "4", c.attrib
    assert c.get("bw") == "4e+11Bps", c.get("bw")
    assert c.get("bb_bw") == "5e+10Bps" and c.get("bb_sharing_policy") == "FATPIPE", c.attrib
    assert c.get("lat") == "0.5us", c.get("lat")  # half of the one-way latency on each side
    assert hosts == ["node-0"] * 4 + ["node-1"] * 4 + ["node-2"] * 4, hosts
    # Overrides apply on top of a preset; no preset needs every parameter.
    p = cp.resolve("hdr", {"rails": 2, "proc_gbps": 10})
    c, _ = cluster_of(2, 1, p)
    assert c.get("bw") == "5e+10Bps" and c.get("bb_bw") == "1e+10Bps", c.attrib
    assert c.get("sharing_policy") == "SPLITDUPLEX", c.attrib  # full duplex unless asked
    c, _ = cluster_of(2, 1, cp.resolve("hdr", {"nic_sharing": "SHARED"}))
    assert c.get("sharing_policy") == "SHARED", c.attrib
    try:
        cp.resolve("hdr", {"nic_sharing": "HALF"})
        raise AssertionError("unknown sharing policy accepted")
    except ValueError as e:
        assert "nic_sharing 'HALF'" in str(e)
    try:
        cp.resolve(None, {"nic_gbps": 1})
        raise AssertionError("missing parameters accepted")
    except ValueError as e:
        assert "missing parameters" in str(e)
    try:
        cp.resolve("nosuch", {})
        raise AssertionError("unknown preset accepted")
    except ValueError as e:
        assert "unknown preset" in str(e)
    print("cluster_platform_test: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
