// intercept_fortran.cc: Open MPI's Fortran allreduce, init and finalize
// entry points.  Open MPI's Fortran bindings (mpif.h, `use mpi`, `use
// mpi_f08`) call the C PMPI_ functions directly, so a program in Fortran
// never reaches the C interposers; these take their place.  Each converts
// the Fortran handles (MPI_Comm_f2c and friends) and Fortran's MPI_IN_PLACE
// and MPI_BOTTOM sentinels as Open MPI's own wrappers do, then runs what the
// C entry point runs, and stores the error code in `ierr`.  MPICH's Fortran
// bindings call the C MPI_Allreduce, which the C interposers serve, but its
// `use mpi_f08` starts and ends MPI through PMPI_ directly: for MPICH this
// file defines those three.
// The names served are listed in fortran_names.h.
#include <mpi.h>

#if (defined(OPEN_MPI) || defined(MPICH_VERSION)) && !defined(MLA_SIMULATION)

#include <dlfcn.h>

#include "libmlallreduce/dispatch.h"
#include "libmlallreduce/intercept/fortran_names.h"
#include "libmlallreduce/intercept/intercept_abi.h"
#include "libmlallreduce/intercept/intercept_init.h"
#include "mlallreduce.h"
#include "libmlallreduce/base/stats.h"

namespace {

using Fint = MPI_Fint;

#if defined(OPEN_MPI)
// The addresses of one of Open MPI's Fortran sentinels (a common block such as
// mpi_fortran_in_place_) under each name a Fortran compiler may give it.
struct Sentinel {
  void* at[4] = {nullptr, nullptr, nullptr, nullptr};
  explicit Sentinel(const char* const (&names)[4]) {
    for (int i = 0; i < 4; ++i) at[i] = dlsym(RTLD_DEFAULT, names[i]);
  }
  bool Is(const void* p) const {
    if (p == nullptr) return false;
    for (void* a : at)
      if (a == p) return true;
    return false;
  }
};

const Sentinel& InPlace() {
  static const Sentinel s(
      {"mpi_fortran_in_place_", "mpi_fortran_in_place", "mpi_fortran_in_place__", "MPI_FORTRAN_IN_PLACE"});
  return s;
}

const Sentinel& Bottom() {
  static const Sentinel s({"mpi_fortran_bottom_", "mpi_fortran_bottom", "mpi_fortran_bottom__", "MPI_FORTRAN_BOTTOM"});
  return s;
}

// A Fortran send buffer as C sees it: MPI_IN_PLACE and MPI_BOTTOM mapped.
const void* SendBuffer(const void* p) {
  if (InPlace().Is(p)) return MPI_IN_PLACE;
  if (Bottom().Is(p)) return MPI_BOTTOM;
  return p;
}

void* RecvBuffer(void* p) { return Bottom().Is(p) ? MPI_BOTTOM : p; }

#endif  // OPEN_MPI

void SetError(Fint* ierr, int rc) {
  if (ierr != nullptr) *ierr = static_cast<Fint>(rc);
}

// Under the other family's MPI (this build injected directly into an MPICH
// program): the next definition of `name`, the MPI's own.
template <typename Fn>
Fn Next(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

using AllreduceF = void (*)(void*, void*, Fint*, Fint*, Fint*, Fint*, Fint*);
using IallreduceF = void (*)(void*, void*, Fint*, Fint*, Fint*, Fint*, Fint*, Fint*);
using InitF = void (*)(Fint*);
using InitThreadF = void (*)(Fint*, Fint*, Fint*);
using FinalizeF = void (*)(Fint*);

#if defined(OPEN_MPI)
void Allreduce(const char* name, mla_entry entry, void* sendbuf, void* recvbuf, Fint* count, Fint* datatype, Fint* op,
               Fint* comm, Fint* ierr) {
  if (mla::lib::ForeignMpi()) {
    if (auto next = Next<AllreduceF>(name)) next(sendbuf, recvbuf, count, datatype, op, comm, ierr);
    return;
  }
  SetError(ierr, mla::lib::EntryAllreduce(entry, SendBuffer(sendbuf), RecvBuffer(recvbuf), static_cast<int>(*count),
                                          PMPI_Type_f2c(*datatype), PMPI_Op_f2c(*op), PMPI_Comm_f2c(*comm)));
}

void Iallreduce(const char* name, void* sendbuf, void* recvbuf, Fint* count, Fint* datatype, Fint* op, Fint* comm,
                Fint* request, Fint* ierr) {
  if (mla::lib::ForeignMpi()) {
    if (auto next = Next<IallreduceF>(name)) next(sendbuf, recvbuf, count, datatype, op, comm, request, ierr);
    return;
  }
  mla::lib::CountEntry(MLA_ENTRY_NONBLOCKING, true);
  MPI_Request c_request = MPI_REQUEST_NULL;
  const int rc = PMPI_Iallreduce(SendBuffer(sendbuf), RecvBuffer(recvbuf), static_cast<int>(*count),
                                 PMPI_Type_f2c(*datatype), PMPI_Op_f2c(*op), PMPI_Comm_f2c(*comm), &c_request);
  if (rc == MPI_SUCCESS) *request = PMPI_Request_c2f(c_request);
  SetError(ierr, rc);
}

#endif  // OPEN_MPI

void Init(const char* name, Fint* ierr) {
  if (mla::lib::ForeignMpi()) {
    if (auto next = Next<InitF>(name)) next(ierr);
    return;
  }
  SetError(ierr, mla::lib::InitWithLibrary([] {
             int argc = 0;
             char** argv = nullptr;
             return PMPI_Init(&argc, &argv);
           }));
}

void InitThread(const char* name, Fint* required, Fint* provided, Fint* ierr) {
  if (mla::lib::ForeignMpi()) {
    if (auto next = Next<InitThreadF>(name)) next(required, provided, ierr);
    return;
  }
  int c_provided = 0;
  const int rc = mla::lib::InitWithLibrary([&] {
    int argc = 0;
    char** argv = nullptr;
    return PMPI_Init_thread(&argc, &argv, static_cast<int>(*required), &c_provided);
  });
  if (rc == MPI_SUCCESS) *provided = static_cast<Fint>(c_provided);
  SetError(ierr, rc);
}

void Finalize(const char* name, Fint* ierr) {
  if (mla::lib::ForeignMpi()) {
    if (auto next = Next<FinalizeF>(name)) next(ierr);
    return;
  }
  SetError(ierr, mla::lib::FinalizeWithLibrary());
}

}  // namespace

#define MLA_FORTRAN extern "C" __attribute__((visibility("default")))

// One definition per name of fortran_names.h; each passes its own name on (for
// the other family's MPI) and does the work of its kind.
#define MLA_DEFINE_Allreduce(name)                                                                     \
  MLA_FORTRAN void name(void* s, void* r, Fint* count, Fint* type, Fint* op, Fint* comm, Fint* ierr) { \
    Allreduce(#name, MLA_ENTRY_FORTRAN, s, r, count, type, op, comm, ierr);                            \
  }
#define MLA_DEFINE_AllreduceF08(name)                                                                  \
  MLA_FORTRAN void name(void* s, void* r, Fint* count, Fint* type, Fint* op, Fint* comm, Fint* ierr) { \
    Allreduce(#name, MLA_ENTRY_F08, s, r, count, type, op, comm, ierr);                                \
  }
#define MLA_DEFINE_Iallreduce(name)                                                                                   \
  MLA_FORTRAN void name(void* s, void* r, Fint* count, Fint* type, Fint* op, Fint* comm, Fint* request, Fint* ierr) { \
    Iallreduce(#name, s, r, count, type, op, comm, request, ierr);                                                    \
  }
#define MLA_DEFINE_Init(name) \
  MLA_FORTRAN void name(Fint* ierr) { Init(#name, ierr); }
#define MLA_DEFINE_InitThread(name) \
  MLA_FORTRAN void name(Fint* required, Fint* provided, Fint* ierr) { InitThread(#name, required, provided, ierr); }
#define MLA_DEFINE_Finalize(name) \
  MLA_FORTRAN void name(Fint* ierr) { Finalize(#name, ierr); }

#define MLA_DEFINE(name, kind) MLA_DEFINE_##kind(name)
#if defined(OPEN_MPI)
MLA_OPENMPI_FORTRAN_NAMES(MLA_DEFINE)
#else
MLA_MPICH_FORTRAN_NAMES(MLA_DEFINE)
#endif

#endif  // (OPEN_MPI || MPICH_VERSION) && !MLA_SIMULATION
