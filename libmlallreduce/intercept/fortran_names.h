// fortran_names.h: the names of the Fortran entry points that multilane
// serves, in one table per family read by the family builds
// (intercept_fortran.cc defines them) and by the front (front/, which
// forwards them).  MLA_OPENMPI_FORTRAN_NAMES(X) calls X(name, kind) once per
// name, where kind says the function and, for the allreduce, the binding:
//   Allreduce   mpif.h and `use mpi`: the four manglings a Fortran compiler
//               may use, and the C-named alias Open MPI exports;
//   AllreduceF08  `use mpi_f08` (it calls ompi_allreduce_f in Open MPI 4.1
//               and 5.0), and its C-named alias;
//   Iallreduce, Init, InitThread, Finalize: every binding.
#ifndef MLA_FORTRAN_NAMES_H_
#define MLA_FORTRAN_NAMES_H_

// Left as written: clang-format 14 realigns these continuation lines on every run.
// clang-format off
#define MLA_OPENMPI_FORTRAN_NAMES(X)                                                                \
  X(mpi_allreduce_, Allreduce) X(mpi_allreduce, Allreduce) X(mpi_allreduce__, Allreduce)           \
  X(MPI_ALLREDUCE, Allreduce) X(MPI_Allreduce_f, Allreduce)                                        \
  X(ompi_allreduce_f, AllreduceF08) X(MPI_Allreduce_f08, AllreduceF08)                             \
  X(mpi_iallreduce_, Iallreduce) X(mpi_iallreduce, Iallreduce) X(mpi_iallreduce__, Iallreduce)     \
  X(MPI_IALLREDUCE, Iallreduce) X(MPI_Iallreduce_f, Iallreduce) X(MPI_Iallreduce_f08, Iallreduce)  \
  X(ompi_iallreduce_f, Iallreduce)                                                                  \
  X(mpi_init_, Init) X(mpi_init, Init) X(mpi_init__, Init) X(MPI_INIT, Init) X(MPI_Init_f, Init)   \
  X(MPI_Init_f08, Init) X(ompi_init_f, Init)                                                        \
  X(mpi_init_thread_, InitThread) X(mpi_init_thread, InitThread) X(mpi_init_thread__, InitThread)  \
  X(MPI_INIT_THREAD, InitThread) X(MPI_Init_thread_f, InitThread)                                  \
  X(MPI_Init_thread_f08, InitThread) X(ompi_init_thread_f, InitThread)                             \
  X(mpi_finalize_, Finalize) X(mpi_finalize, Finalize) X(mpi_finalize__, Finalize)                 \
  X(MPI_FINALIZE, Finalize) X(MPI_Finalize_f, Finalize) X(MPI_Finalize_f08, Finalize)              \
  X(ompi_finalize_f, Finalize)

// MPICH's Fortran bindings call the C MPI_Allreduce (and MPI_Allreduce_c),
// but its `use mpi_f08` starts and ends MPI with PMPI_Init, PMPI_Init_thread
// and PMPI_Finalize directly: these names take their place in the MPICH build.
#define MLA_MPICH_FORTRAN_NAMES(X) \
  X(mpi_init_f08_, Init) X(mpi_init_thread_f08_, InitThread) X(mpi_finalize_f08_, Finalize)
// clang-format on

#endif  // MLA_FORTRAN_NAMES_H_
