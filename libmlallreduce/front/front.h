// front.h: what the front's exported entry points (front_entries.cc) need
// from its resolution (front.cc): the slot of each forwarded function, where
// it points, and the front's part in the start-up agreement.
#ifndef MLA_FRONT_FRONT_H_
#define MLA_FRONT_FRONT_H_

#include "libmlallreduce/intercept/fortran_names.h"

// Every function the front forwards, in slot order: first the C entry points
// every family build defines, then the Fortran names of fortran_names.h, which
// only one family's build defines (under the other family they go to the
// MPI's own function).
#define MLA_FRONT_C_SLOTS(X) \
  X(MPI_Init)                \
  X(MPI_Init_thread)         \
  X(MPI_Finalize) X(MPI_Allreduce) X(MPI_Allreduce_c) X(MPI_Iallreduce) X(MPI_Allreduce_init) X(MPIX_Allreduce_init)
#define MLA_FRONT_SLOTS(X) MLA_FRONT_C_SLOTS(X) MLA_OPENMPI_FORTRAN_NAMES(X) MLA_MPICH_FORTRAN_NAMES(X)

namespace mla::lib::front {

#define MLA_SLOT_OF(name, ...) k_##name,
enum Slot { MLA_FRONT_SLOTS(MLA_SLOT_OF) kSlots };
#undef MLA_SLOT_OF
#define MLA_COUNT_ONE(name) +1
constexpr int kFirstOptional = 0 MLA_FRONT_C_SLOTS(MLA_COUNT_ONE);  // the first Fortran slot
#undef MLA_COUNT_ONE

// The function slot `s` forwards to: the family build's, or the MPI's own
// when the front passes the job through.  Resolves the process's MPI family
// on first use.  A program that calls a function no loaded library defines
// gets one line and an abort, as the dynamic linker would have given.
void* Target(Slot s);

// The front's part in the start-up agreement around the MPI's own
// initialisation when it passes the job through (nothing otherwise): the off
// ballot before, counting the ballots after a success (rc == 0).  Nested
// calls (MPICH's Fortran MPI_INIT calls MPI_Init) take part once.
void BeforeInit();
void AfterInit(int rc);

}  // namespace mla::lib::front

#endif  // MLA_FRONT_FRONT_H_
