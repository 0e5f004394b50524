// intercept_init.h: the library's part around the MPI's own MPI_Init and
// MPI_Finalize, shared by the C interposers (intercept.cc) and the Fortran
// ones (intercept_fortran.cc), so that a program starts the library the same
// way whichever binding it calls.
#ifndef MLA_INTERCEPT_INIT_H_
#define MLA_INTERCEPT_INIT_H_

#include <functional>

namespace mla::lib {

// Runs `init` (the MPI's own initialisation, returning its error code) inside
// the start-up agreement: the ballot before, the count and the library's
// set-up after a success.  Under the other family's MPI only the off ballot
// is cast.  Returns what `init` returned.
int InitWithLibrary(const std::function<int()>& init);

// Prints the counters and frees the library's state (unless this is the
// other family's MPI), then calls PMPI_Finalize and returns its code.
int FinalizeWithLibrary();

}  // namespace mla::lib

#endif  // MLA_INTERCEPT_INIT_H_
