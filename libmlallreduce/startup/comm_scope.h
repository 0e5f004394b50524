// comm_scope.h: which communicators the start-up agreement speaks for.
//
// The agreement (startup.h) counts the ballots of one MPI_COMM_WORLD.  A
// communicator that reaches processes of another world (MPI_Comm_spawn,
// connect/accept, MPI_Comm_join, then MPI_Intercomm_merge or a split of the
// merged communicator) holds processes whose library, version and settings
// nobody counted: some may run without multilane and would never make the
// library's collectives.  Such a communicator is not served: every call on it
// goes to the system MPI, the same on every rank of it that carries
// multilane (the test is local: a comparison of groups, no message).
#ifndef MLA_COMM_SCOPE_H_
#define MLA_COMM_SCOPE_H_

#include <mpi.h>

namespace mla::lib {

// True when every process of `comm` belongs to this process's MPI_COMM_WORLD
// (an intracommunicator whose group is a subset of the world's group), so
// that the world's agreement covers it; also for intercommunicators, which
// are never served anyway (call_support.h counts them).  False for a null
// handle and for communicators that reach another world: then, the
// first time on this process, the lowest rank of `comm` among this world's
// members prints one line saying that its calls go to the system MPI.  Local
// (no communication); the answer is cached on `comm` and computed once per
// communicator.  Thread-safe.  Call only after MPI_Init.
bool WithinWorld(MPI_Comm comm);

// Frees the attribute key the answers are cached under; call before
// PMPI_Finalize.
void ReleaseCommScope();

}  // namespace mla::lib

#endif  // MLA_COMM_SCOPE_H_
