// system_choice.h: a profile's `mpi=NAME` (docs/profile-format.md): the
// system MPI's own allreduce algorithm NAME runs a passthrough entry's calls,
// chosen per call through sysalgo/ where it is right for the call.
#ifndef MLA_SYSTEM_CHOICE_H_
#define MLA_SYSTEM_CHOICE_H_

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <string>

#include "vocab/profile.h"

namespace mla::lib {

// Whether any entry of `profile` names a system algorithm (mpi=).
bool ProfileNamesSystemAlgorithms(const Profile& profile);

// Before PMPI_Init, when the profile names system algorithms: Open MPI's
// coll/tuned takes a chosen algorithm only with its dynamic rules on, so they
// are turned on for this process, unless the user set them or a rules file
// (their settings win; with nothing chosen they decide as the fixed rules do,
// so ranks with and without this agree).
void PrepareSystemAlgorithms(const Profile& profile);

// Runs one passthrough call (`count` elements, `bytes` in all, of `op` on
// comm) as `system_mpi(on)` runs it on a communicator `on`: with the system
// MPI's algorithm `name` where it is right for the call (the MPI has it, the
// op is commutative where the algorithm needs it, enough elements per rank,
// not MPI_THREAD_MULTIPLE), for host buffers and for the host collective of
// staged device buffers alike; everywhere else as system_mpi(comm).
// system_mpi counts the call when it succeeds.  Every rank of comm
// decides alike from the same arguments.  The first call on a communicator
// with a name makes the library's copy of it (Open MPI) or checks that every
// rank's MPI takes the name (MPICH, whose variable is then written just
// before each such call and put back after it); collective, once, and timed
// as the job report's one-time setup (ReportSetupTimer), not as the call.  Where
// `name` ran the call, *ran is set to its slot (stats.h SystemAlgorithmSlot),
// else left as it is.
int SystemAlgorithmAllreduce(const std::string& name, int count, MPI_Op op, MPI_Comm comm, uint64_t bytes,
                             const std::function<int(MPI_Comm)>& system_mpi, int* ran);

// Before PMPI_Finalize: frees the communicators made for the choices.
void ReleaseSystemAlgorithms();

}  // namespace mla::lib

#endif  // MLA_SYSTEM_CHOICE_H_
