#!/usr/bin/python3
"""N8: a program that changes its directory before MPI_Init (mpi4py calls it
at import).  Usage: chdir_then_allreduce.py DIR.  With the front preloaded
by a relative path, the front must still find its family build beside
itself, not relative to DIR (where anyone may plant a library).  Sums 1 MiB
of float64 4 times and checks every element; prints "chdir ok rank R"."""
import os
import sys

os.chdir(sys.argv[1])
import numpy as np  # noqa: E402
from mpi4py import MPI  # noqa: E402

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
for it in range(4):
    data = np.arange(131072, dtype=np.float64) % 7 + rank + it
    out = np.empty_like(data)
    comm.Allreduce(data, out, op=MPI.SUM)
    want = np.arange(131072, dtype=np.float64) % 7 * size + size * (size - 1) / 2 + size * it
    if not np.array_equal(out, want):
        os.write(2, f"chdir: rank {rank}: wrong sum\n".encode())
        comm.Abort(1)
os.write(1, f"chdir ok rank {rank}\n".encode())  # one write: mpirun's output keeps it whole
