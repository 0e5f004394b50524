#!/usr/bin/python3
"""netns_tables_test.py: the tables of benchmarks/netns_table.py and
simulation/calibrate.py on a small made-up run (CTest bench_netns_tables):
the rails' bound and net share, the vs_ columns, the rails' bytes, the
simulated-against-measured error per model and the growth from 2 to 4 nodes
against the report's g.  No timing is asserted: the figures are given."""
import os
import sys

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(SOURCE, "benchmarks"))
sys.path.insert(0, os.path.join(SOURCE, "simulation"))
import calibrate  # noqa: E402
import netns_table  # noqa: E402

MIB = 1 << 20


def row(size, algo, time_us, vs_mpi=None, vs_best=None, ran_as=None):
    return {"size": size, "algo": algo, "time_us": time_us, "vs_mpi": vs_mpi, "vs_best": vs_best,
            "ran_as": ran_as or algo}


def run(nodes, results, model=None, rails=None):
    doc = {"point": {"nodes": nodes, "rails": 1, "ppn": 2, "rate": "200mbit", "delay": "0"}, "results": results}
    if model:
        doc["model"] = model
    if rails:
        doc["rails"] = rails
        doc["step_seconds"] = 10.0
    return doc


def expect(text, line):
    assert line in text.splitlines(), f"missing line:\n{line}\nin:\n{text}"


def main():
    # 2 nodes, 1 rail of 200 Mbit/s: 1 MiB needs 2(1/2) MiB out of each
    # node at 25 MB/s x 1448/1514 = 43.85 ms; mpi-best took 87.7 ms: 0.50.
    assert abs(netns_table.bound_seconds(MIB, 2, 1, "200mbit") - 0.043855) < 1e-5
    rails = {n: {"mgmt": {"tx_bytes": 10000, "rx_bytes": 0}, "rail0": {"tx_bytes": 50000000, "rx_bytes": 0}}
             for n in ("node1", "node2")}
    two = run(2, [row(MIB, "mpi", 90000.0, 1.0, 0.97), row(MIB, "mpi-best", 87700.0, 1.03, 1.0, "mpi:ring"),
                  row(MIB, "lane", 100000.0, 0.9, 0.877)], rails=rails)
    text = netns_table.measured_table([two])
    expect(text, "| 2 | 1 | 2 | 1 MiB | 90.00 | 87.70 | mpi:ring | 0.50 | 0.90 / 0.88 |")
    # Each rail: 2 x 50 MB in 10 s over 2 nodes: 40 Mbit/s per node and rail.
    expect(netns_table.rails_table([two]), "| 2 | 1 | 2 | rail0 100.0 | 0.02 | 10.0 | 40 |")
    # The simulation: error = simulated / measured - 1, per model.
    sims = [run(2, [row(MIB, "mpi", 45000.0), row(MIB, "lane", 50000.0)], model="SPLITDUPLEX"),
            run(2, [row(MIB, "mpi", 99000.0), row(MIB, "lane", 100000.0)], model="SHARED")]
    text = calibrate.compare_table([two], sims)
    expect(text, "| 2 | 1 | 2 | 1 MiB | mpi | 90.00 | 45.00 | -50 % | 99.00 | +10 % |")
    expect(text, "| 2 | 1 | 2 | 1 MiB | lane | 100.00 | 50.00 | -50 % | 100.00 | +0 % |")
    expect(text, "- SHARED: 2 of 2 within 15 %, median |error| 10 %, largest 10 %")
    # mpi-best has no simulation: no row.
    assert "mpi-best" not in text, text
    # 2 -> 4 nodes: the report's g with s = 1 is the nodes' ring factor,
    # (2 x 3/4) / (2 x 1/2) = 1.5; measured 90 -> 126 ms is 1.4: +7 %.
    four = run(4, [row(MIB, "mpi", 126000.0, 1.0)])
    text = calibrate.scaling_table([two, four], "measured")
    expect(text, "| 2 → 4 | 1 | 2 | 1 MiB | mpi | 1.40 | 1.50 | +7 % |")
    expect(text, "- 1 MiB and up: 1 of 1 within 15 %, median |error| 7 %, largest 7 %")
    # 2 -> 8 nodes (k = 4): g = (2 x 7/8) / (2 x 1/2) = 1.75; 90 -> 180 ms is 2.0: -12 %.
    eight = run(8, [row(MIB, "mpi", 180000.0, 1.0)])
    text = calibrate.scaling_table([two, four, eight], "measured")
    expect(text, "| 2 → 8 | 1 | 2 | 1 MiB | mpi | 2.00 | 1.75 | -12 % |")
    expect(text, "| 4 → 8 | 1 | 2 | 1 MiB | mpi | 1.43 | 1.17 | -18 % |")
    # The model's platform: a rail's payload rate, the rails added, the
    # sharing the model asks for.
    p = calibrate.platform_params({"rails": 2, "rate": "400mbit", "delay": "50us"}, "SHARED")
    assert abs(p["nic_gbps"] - 0.05 * 1448 / 1514) < 1e-12 and p["proc_gbps"] == 2 * p["nic_gbps"], p
    assert p["nic_lat_us"] == calibrate.TCP_LAT_US + 50 and p["nic_sharing"] == "SHARED", p
    print("netns_tables_test: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
