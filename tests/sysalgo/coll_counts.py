"""The coll_base_counter shim's counts, shared by the tests of tests/sysalgo/."""
import glob
import os
import re


def take_counts(folder, ranks):
    """Reads and removes the shim's files in `folder` (then the folder): one
    dict {function: calls} per rank; fails unless there are exactly `ranks`."""
    lines = []
    for path in glob.glob(os.path.join(folder, "counts.*")):
        with open(path) as f:
            lines += f.read().splitlines()
        os.remove(path)
    os.rmdir(folder)
    assert len(lines) == ranks, f"expected {ranks} count lines (one per rank), got {len(lines)}: is the shim loaded?"
    return [dict((k, int(v)) for k, v in re.findall(r"(\w+)=(\d+)", l)) for l in lines]
