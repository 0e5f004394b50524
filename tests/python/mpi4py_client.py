#!/usr/bin/python3
"""A third-party MPI client: allreduces numpy arrays with mpi4py.

Usage (under mpirun): mpi4py_client.py OUTPUT.npz

Every rank allreduces arrays of float32, float64, int32 and int64 with SUM,
MAX, MIN and PROD, of several sizes (odd ones too), into a new buffer and in
place.  Each result is checked against numpy's reduction of every rank's data
(gathered with MPI_Allgather, not MPI_Allreduce) and must be bitwise the same
on every rank.  Rank 0 writes all results to OUTPUT.npz together with the
number of MPI_Allreduce calls made ("n_allreduce") and of errors ("n_errors").
The exit code is 1 on every rank when any rank found an error.
"""
import hashlib
import sys

import numpy as np
from mpi4py import MPI

SEED = 20251129
DTYPES = (np.float32, np.float64, np.int32, np.int64)
OPS = (("SUM", MPI.SUM, np.sum), ("MAX", MPI.MAX, np.max),
       ("MIN", MPI.MIN, np.min), ("PROD", MPI.PROD, np.prod))
SIZES = (1, 7, 1000, 4099)


def make_data(rng, dtype, opname, n):
    if np.issubdtype(dtype, np.floating):
        if opname == "PROD":
            return rng.uniform(0.9, 1.1, n).astype(dtype)
        return rng.uniform(-1.0, 1.0, n).astype(dtype)
    if opname == "PROD":
        return rng.choice(np.array([-1, 1, 2], dtype=dtype), n)
    if opname == "SUM":
        return rng.integers(-1000, 1000, n, dtype=dtype, endpoint=True)
    return rng.integers(-10**6, 10**6, n, dtype=dtype, endpoint=True)


def main():
    out_path = sys.argv[1]
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    size = comm.Get_size()
    rng = np.random.default_rng([SEED, rank])
    results = {}
    errors = []
    n_allreduce = 0
    for dtype in DTYPES:
        for opname, op, npop in OPS:
            for n in SIZES:
                x = make_data(rng, dtype, opname, n)
                everyone = np.array(comm.allgather(x))  # MPI_Allgather of pickles
                want = npop(everyone, axis=0).astype(dtype)
                for in_place in (False, True):
                    if in_place:
                        buf = x.copy()
                        comm.Allreduce(MPI.IN_PLACE, buf, op=op)
                    else:
                        buf = np.full_like(x, 77)
                        comm.Allreduce(x, buf, op=op)
                    n_allreduce += 1
                    key = "%s_%s_%d_%s" % (np.dtype(dtype).name, opname, n,
                                           "inplace" if in_place else "out")
                    results[key] = buf
                    if np.issubdtype(dtype, np.floating):
                        tol = np.finfo(dtype).eps * 4 * (size + 1)
                        bound = tol * npop(np.abs(everyone), axis=0) if opname in ("SUM", "PROD") else 0
                        ok = np.all(np.abs(buf.astype(np.float64) - want.astype(np.float64))
                                    <= bound)
                    else:
                        ok = np.array_equal(buf, want)
                    if not ok:
                        errors.append("%s: result differs from numpy's reduction" % key)
                    digest = hashlib.sha1(buf.tobytes()).hexdigest()
                    if len(set(comm.allgather(digest))) != 1:
                        errors.append("%s: results differ between ranks" % key)
    for e in errors:
        print("[rank %d] mpi4py_client: %s" % (rank, e), file=sys.stderr, flush=True)
    n_errors = sum(comm.allgather(len(errors)))
    if rank == 0:
        np.savez(out_path, n_allreduce=np.array(n_allreduce), n_errors=np.array(n_errors),
                 **results)
    return 1 if n_errors else 0


if __name__ == "__main__":
    sys.exit(main())
