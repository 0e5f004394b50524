// dispatch.h: one allreduce call's way through the library, for the entry
// points (dispatch.cc; the C API's mla_allreduce takes the same way).
#ifndef MLA_DISPATCH_H_
#define MLA_DISPATCH_H_

#include <mpi.h>

#include "mlallreduce.h"

namespace mla::lib {

// Runs one allreduce call that came in through `entry` (MLA_ENTRY_COUNT: a
// call of the C API, counted under no entry) as mla_allreduce does: counted
// under its entry, then the quick route (quick_route.h) or the whole path.
int EntryAllreduce(mla_entry entry, const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm);

}  // namespace mla::lib

#endif  // MLA_DISPATCH_H_
