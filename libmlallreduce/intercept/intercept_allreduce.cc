// intercept_allreduce.cc: the interposed MPI_Allreduce, compiled without
// mpi.h (intercept_abi.h says why).  On x86-64 (System V) and AArch64 every
// handle travels in one integer register, which this function takes whole.
#include <dlfcn.h>

#include <cstdint>

#include "libmlallreduce/intercept/intercept_abi.h"

#if !defined(MLA_SIMULATION)

namespace {
using AllreduceFn = int (*)(const void*, void*, int, std::uintptr_t, std::uintptr_t, std::uintptr_t);

// The other family's PMPI_Allreduce: the next definition after this build.
AllreduceFn ForeignAllreduce() {
  static const auto fn = reinterpret_cast<AllreduceFn>(dlsym(RTLD_NEXT, "PMPI_Allreduce"));
  return fn;
}
}  // namespace

extern "C" __attribute__((visibility("default"))) int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count,
                                                                    std::uintptr_t datatype, std::uintptr_t op,
                                                                    std::uintptr_t comm) {
  if (mla::lib::ForeignMpi() && ForeignAllreduce() != nullptr) {
    return ForeignAllreduce()(sendbuf, recvbuf, count, datatype, op, comm);
  }
  return mla::lib::InterceptedAllreduce(MLA_ENTRY_C, sendbuf, recvbuf, count, datatype, op, comm);
}

#endif  // !MLA_SIMULATION
