// intercept_abi.h: what the MPI_Allreduce interposer (intercept_allreduce.cc,
// compiled without mpi.h) needs from the rest of the library.  The families
// pass handles of different widths (pointers in Open MPI, int in MPICH's
// ABI); the interposer takes each as the full register, so that a build
// injected into a job of the other family forwards them intact.
#ifndef MLA_INTERCEPT_ABI_H_
#define MLA_INTERCEPT_ABI_H_

#include <cstdint>

namespace mla {

// True when the MPI in this process is the other family's (this build was
// injected directly, not through the front): one line says so (rank 0) and
// every call goes to that MPI unchanged.  Decided once; thread-safe.
bool ForeignMpi();

// MPI_Allreduce of this build's family: the handles converted to the
// family's types, then the library's dispatch.
int InterceptedAllreduce(const void* sendbuf, void* recvbuf, int count, std::uintptr_t datatype, std::uintptr_t op,
                         std::uintptr_t comm);

}  // namespace mla

#endif  // MLA_INTERCEPT_ABI_H_
