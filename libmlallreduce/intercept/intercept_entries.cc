// intercept_entries.cc: the allreduce entry points beside MPI_Allreduce that
// a program can call from C (MPI-3 nonblocking, MPI-4 large-count and
// persistent), compiled without mpi.h for the reason intercept_abi.h gives.
// MPI_Allreduce_c runs the library's dispatch where the count fits in an int
// (what the algorithms take); the others, and larger counts, are counted and
// handed to the system MPI's own PMPI_ function unchanged, so no call goes
// by unseen (docs/user.md, "Which programs get multilane").  Each is defined
// whether or not the family's mpi.h declares it: a program can only call one
// its MPI has, and the front forwards all of them.
#include <climits>
#include <cstdint>

#include "libmlallreduce/intercept/intercept_abi.h"

#if !defined(MLA_SIMULATION)

namespace {

using Handle = std::uintptr_t;
using AllreduceCFn = int (*)(const void*, void*, long long, Handle, Handle, Handle);
using IallreduceFn = int (*)(const void*, void*, int, Handle, Handle, Handle, void*);
using AllreduceInitFn = int (*)(const void*, void*, int, Handle, Handle, Handle, Handle, void*);

// The system MPI's `name`, looked up once per call site.
template <typename Fn>
Fn System(const char* name) {
  return reinterpret_cast<Fn>(mla::lib::SystemMpiFunction(name));
}

// Counts a passed-on call through `entry` (not under the other family's MPI,
// where nothing of this build is counted) and returns `fn` or nullptr.
template <typename Fn>
Fn PassOn(mla_entry entry, Fn fn) {
  if (!mla::lib::ForeignMpi()) mla::lib::CountPassedOn(entry);
  return fn;
}

}  // namespace

#define MLA_ENTRY_POINT extern "C" __attribute__((visibility("default")))

// MPI-4 large count: served by the dispatch up to INT_MAX elements (every rank
// passes the same count, so every rank decides alike), passed on beyond.
MLA_ENTRY_POINT int MPI_Allreduce_c(const void* sendbuf, void* recvbuf, long long count, Handle datatype, Handle op,
                                    Handle comm) {
  static const auto system = System<AllreduceCFn>("PMPI_Allreduce_c");
  if (!mla::lib::ForeignMpi() && count >= 0 && count <= INT_MAX) {
    return mla::lib::InterceptedAllreduce(MLA_ENTRY_LARGE_COUNT, sendbuf, recvbuf, static_cast<int>(count), datatype,
                                          op, comm);
  }
  if (PassOn(MLA_ENTRY_LARGE_COUNT, system) == nullptr) return mla::lib::MissingMpiFunction("MPI_Allreduce_c");
  return system(sendbuf, recvbuf, count, datatype, op, comm);
}

MLA_ENTRY_POINT int MPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, Handle datatype, Handle op,
                                   Handle comm, void* request) {
  static const auto system = System<IallreduceFn>("PMPI_Iallreduce");
  if (PassOn(MLA_ENTRY_NONBLOCKING, system) == nullptr) return mla::lib::MissingMpiFunction("MPI_Iallreduce");
  return system(sendbuf, recvbuf, count, datatype, op, comm, request);
}

MLA_ENTRY_POINT int MPI_Allreduce_init(const void* sendbuf, void* recvbuf, int count, Handle datatype, Handle op,
                                       Handle comm, Handle info, void* request) {
  static const auto system = System<AllreduceInitFn>("PMPI_Allreduce_init");
  if (PassOn(MLA_ENTRY_PERSISTENT, system) == nullptr) return mla::lib::MissingMpiFunction("MPI_Allreduce_init");
  return system(sendbuf, recvbuf, count, datatype, op, comm, info, request);
}

// Open MPI 4.1's persistent collectives extension (mpi-ext.h).
MLA_ENTRY_POINT int MPIX_Allreduce_init(const void* sendbuf, void* recvbuf, int count, Handle datatype, Handle op,
                                        Handle comm, Handle info, void* request) {
  static const auto system = System<AllreduceInitFn>("PMPIX_Allreduce_init");
  if (PassOn(MLA_ENTRY_PERSISTENT, system) == nullptr) return mla::lib::MissingMpiFunction("MPIX_Allreduce_init");
  return system(sendbuf, recvbuf, count, datatype, op, comm, info, request);
}

#endif  // !MLA_SIMULATION
