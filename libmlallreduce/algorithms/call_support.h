// call_support.h: which calls a multilane algorithm can run.
#ifndef MLA_CALL_SUPPORT_H_
#define MLA_CALL_SUPPORT_H_

#include <mpi.h>

#include "vocab/algo_names.h"

namespace mla::lib {

// Returns nullptr when a multilane algorithm can run an allreduce of
// `datatype` with `op` on `comm`, else a static string saying why not:
// intercommunicators, communicators of one rank, non-commutative ops and
// datatypes that are not contiguous go to PMPI_Allreduce.  When `why` is
// not null, a refusal also sets *why to its reason's kind.
const char* UnsupportedReason(MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, Unsupported* why = nullptr);

// True when the system MPI refuses an allreduce with these arguments whatever
// its buffers: a null communicator, datatype or op, or an op that is not for
// reductions (MPI_REPLACE, MPI_NO_OP).  Such a call goes to PMPI_Allreduce
// before the library touches its arguments, so that the MPI raises its own
// error on the communicator's handler.  Local: no MPI call.
bool InvalidArguments(MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);

}  // namespace mla::lib

#endif  // MLA_CALL_SUPPORT_H_
