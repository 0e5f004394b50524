// front_entries.cc: the functions libmlallreduce.so exports, each forwarded
// to its slot's target (front.h).  Compiled without mpi.h: handles travel as
// uintptr_t, Fortran arguments are all pointers (front.cc says why this is
// exact on x86-64 and AArch64).
#include <cstdint>

#include "libmlallreduce/front/front.h"

namespace {

using Handle = std::uintptr_t;
using mla::lib::front::Target;

template <typename Fn>
Fn At(mla::lib::front::Slot s) {
  return reinterpret_cast<Fn>(Target(s));
}

}  // namespace

#define MLA_FRONT extern "C" __attribute__((visibility("default")))

MLA_FRONT int MPI_Init(int* argc, char*** argv) {
  auto init = At<int (*)(int*, char***)>(mla::lib::front::k_MPI_Init);
  mla::lib::front::BeforeInit();
  const int rc = init(argc, argv);
  mla::lib::front::AfterInit(rc);
  return rc;
}

MLA_FRONT int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  auto init = At<int (*)(int*, char***, int, int*)>(mla::lib::front::k_MPI_Init_thread);
  mla::lib::front::BeforeInit();
  const int rc = init(argc, argv, required, provided);
  mla::lib::front::AfterInit(rc);
  return rc;
}

MLA_FRONT int MPI_Finalize(void) { return At<int (*)()>(mla::lib::front::k_MPI_Finalize)(); }

MLA_FRONT int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, Handle datatype, Handle op, Handle comm) {
  using Fn = int (*)(const void*, void*, int, Handle, Handle, Handle);
  return At<Fn>(mla::lib::front::k_MPI_Allreduce)(sendbuf, recvbuf, count, datatype, op, comm);
}

MLA_FRONT int MPI_Allreduce_c(const void* sendbuf, void* recvbuf, long long count, Handle datatype, Handle op,
                              Handle comm) {
  using Fn = int (*)(const void*, void*, long long, Handle, Handle, Handle);
  return At<Fn>(mla::lib::front::k_MPI_Allreduce_c)(sendbuf, recvbuf, count, datatype, op, comm);
}

MLA_FRONT int MPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, Handle datatype, Handle op, Handle comm,
                             void* request) {
  using Fn = int (*)(const void*, void*, int, Handle, Handle, Handle, void*);
  return At<Fn>(mla::lib::front::k_MPI_Iallreduce)(sendbuf, recvbuf, count, datatype, op, comm, request);
}

MLA_FRONT int MPI_Allreduce_init(const void* sendbuf, void* recvbuf, int count, Handle datatype, Handle op, Handle comm,
                                 Handle info, void* request) {
  using Fn = int (*)(const void*, void*, int, Handle, Handle, Handle, Handle, void*);
  return At<Fn>(mla::lib::front::k_MPI_Allreduce_init)(sendbuf, recvbuf, count, datatype, op, comm, info, request);
}

MLA_FRONT int MPIX_Allreduce_init(const void* sendbuf, void* recvbuf, int count, Handle datatype, Handle op,
                                  Handle comm, Handle info, void* request) {
  using Fn = int (*)(const void*, void*, int, Handle, Handle, Handle, Handle, void*);
  return At<Fn>(mla::lib::front::k_MPIX_Allreduce_init)(sendbuf, recvbuf, count, datatype, op, comm, info, request);
}

// The Fortran names (fortran_names.h), all arguments pointers.  The
// initialisations take part in the start-up agreement like MPI_Init (the
// depth count in front.cc keeps MPICH's nested call from voting twice).
using P = void*;
#define MLA_FORWARD_Allreduce(name)                                                    \
  MLA_FRONT void name(P a, P b, P c, P d, P e, P f, P g) {                             \
    At<void (*)(P, P, P, P, P, P, P)>(mla::lib::front::k_##name)(a, b, c, d, e, f, g); \
  }
#define MLA_FORWARD_AllreduceF08(name) MLA_FORWARD_Allreduce(name)
#define MLA_FORWARD_Iallreduce(name)                                                         \
  MLA_FRONT void name(P a, P b, P c, P d, P e, P f, P g, P h) {                              \
    At<void (*)(P, P, P, P, P, P, P, P)>(mla::lib::front::k_##name)(a, b, c, d, e, f, g, h); \
  }
#define MLA_FORWARD_Init(name)                                 \
  MLA_FRONT void name(int* ierr) {                             \
    auto init = At<void (*)(int*)>(mla::lib::front::k_##name); \
    mla::lib::front::BeforeInit();                             \
    init(ierr);                                                \
    mla::lib::front::AfterInit(ierr != nullptr ? *ierr : 0);   \
  }
#define MLA_FORWARD_InitThread(name)                                       \
  MLA_FRONT void name(int* required, int* provided, int* ierr) {           \
    auto init = At<void (*)(int*, int*, int*)>(mla::lib::front::k_##name); \
    mla::lib::front::BeforeInit();                                         \
    init(required, provided, ierr);                                        \
    mla::lib::front::AfterInit(ierr != nullptr ? *ierr : 0);               \
  }
#define MLA_FORWARD_Finalize(name) \
  MLA_FRONT void name(int* ierr) { At<void (*)(int*)>(mla::lib::front::k_##name)(ierr); }

#define MLA_FORWARD(name, kind) MLA_FORWARD_##kind(name)
MLA_OPENMPI_FORTRAN_NAMES(MLA_FORWARD)
MLA_MPICH_FORTRAN_NAMES(MLA_FORWARD)

// The version of the family builds beside it (`multilane doctor` reads it).
MLA_FRONT const char* mla_version(void) { return MLA_FRONT_VERSION; }
