// call_support.h: which calls a multilane algorithm can run.
#ifndef MLA_CALL_SUPPORT_H_
#define MLA_CALL_SUPPORT_H_

#include <mpi.h>

namespace mla {

// Returns nullptr when a multilane algorithm can run an allreduce of
// `datatype` with `op` on `comm`, else a static string saying why not:
// intercommunicators, communicators of one rank, non-commutative ops and
// datatypes that are not contiguous go to PMPI_Allreduce.
const char* UnsupportedReason(MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);

}  // namespace mla

#endif  // MLA_CALL_SUPPORT_H_
