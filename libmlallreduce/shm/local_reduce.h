// local_reduce.h: one element-wise reduction step on host memory.
#ifndef MLA_SHM_LOCAL_REDUCE_H_
#define MLA_SHM_LOCAL_REDUCE_H_

#include <mpi.h>

namespace mla::lib {

// inout[i] = in[i] op inout[i] for `count` elements of `datatype`, exactly as
// MPI_Reduce_local computes it: typed loops (which the compiler vectorises)
// for the sums and products of the common predefined integer and floating
// types and the bitwise ops of the integers, PMPI_Reduce_local for every
// other pair (MIN and MAX, whose rule the MPI owns: Open MPI 4.1 compares
// MPI_UNSIGNED_LONG as signed; pair types, logical ops, complex, user ops).  Returns MPI_SUCCESS or
// PMPI_Reduce_local's error.
int LocalReduce(const void* in, void* inout, int count, MPI_Datatype datatype, MPI_Op op);

// Whether LocalReduce runs (datatype, op) with a typed loop, without MPI.
bool HasTypedLoop(MPI_Datatype datatype, MPI_Op op);

}  // namespace mla::lib

#endif  // MLA_SHM_LOCAL_REDUCE_H_
