// intercept_abi.h: what the MPI_Allreduce interposer (intercept_allreduce.cc,
// compiled without mpi.h) needs from the rest of the library.  The families
// pass handles of different widths (pointers in Open MPI, int in MPICH's
// ABI); the interposer takes each as the full register, so that a build
// injected into a job of the other family forwards them intact.
#ifndef MLA_INTERCEPT_ABI_H_
#define MLA_INTERCEPT_ABI_H_

#include <cstdint>

#include "mlallreduce_types.h"

namespace mla::lib {

// True when the MPI in this process is the other family's (this build was
// injected directly, not through the front): one line says so (rank 0) and
// every call goes to that MPI unchanged.  Decided once; thread-safe.
bool ForeignMpi();

// An allreduce of this build's family that came in through `entry`: counted,
// the handles converted to the family's types, then the library's dispatch.
int InterceptedAllreduce(mla_entry entry, const void* sendbuf, void* recvbuf, int count, std::uintptr_t datatype,
                         std::uintptr_t op, std::uintptr_t comm);

// Counts a call through `entry` that goes to the system MPI's own function
// without the dispatch (nonblocking, persistent, beyond INT_MAX elements).
void CountPassedOn(mla_entry entry);

// The system MPI's own `name` (a PMPI_ function), or nullptr when the MPI in
// the process has none.  Looked up once per name by the caller.
void* SystemMpiFunction(const char* name);

// What a call to `name` returns when the MPI in the process lacks it (a
// program built against another MPI): one warning, then MPI_ERR_OTHER of
// this build's family.
int MissingMpiFunction(const char* name);

}  // namespace mla::lib

#endif  // MLA_INTERCEPT_ABI_H_
