// pmix_channel.h: the start-up ballots carried by PMIx, the process manager
// interface Open MPI (mpirun, prterun) and Slurm (srun --mpi=pmix) start
// every rank with.  A rank publishes its ballot before MPI_Init, MPI_Init's
// own exchange carries it to every rank, and after MPI_Init node leaders
// combine the ballots in a tree through the same store (ballot_tree.h): no
// message of multilane's own, so a rank without multilane is seen as absent,
// never paired with.
// No MPI, no link to libpmix: the library the MPI uses is opened at run time.
#ifndef MLA_PMIX_CHANNEL_H_
#define MLA_PMIX_CHANNEL_H_

#include <optional>
#include <string>
#include <vector>

#include "libmlallreduce/startup/ballot.h"
#include "libmlallreduce/startup/ballot_summary.h"

namespace mla::lib {

// True when the launcher started this process as a PMIx client
// (PMIX_NAMESPACE and PMIX_RANK are set).
bool PmixLaunched();

// Before MPI_Init: connects to the PMIx server (libpmix.so.2) and publishes
// `ballot` under the agreement's key.  Returns false, with *why set, when
// PMIx cannot be used; then Collect returns nullopt.
bool PmixPublish(const std::string& ballot, std::string* why);

// After MPI_Init (whose exchange carried the ballots): the summary of the
// ballots of ranks 0..size-1 of this process's namespace, combined by the
// tree of ballot_tree.h over nodes of `ranks_per_node` ranks (0: the job's
// nodes as PMIx counts them); this process, `rank` with the ballot `mine`,
// publishes its subtree's summary where it leads its block.
// Adds the PMIx reads it made to *reads.  Returns nullopt when PmixPublish
// did not succeed.  Disconnects from PMIx (the MPI keeps its own connection).
std::optional<BallotSummary> PmixAgree(int size, int rank, int ranks_per_node, const Ballot& mine, int* reads);

// Disconnects from PMIx without reading, for a rank that cannot count; its
// ballot stays published for the others.
void PmixRelease();

// Bracket the MPI's own initialisation (MPI_Init and its kin, every binding).
// In between, until the MPI calls PMIx_Init itself, this library's
// PMIx_Initialized answers "no": Open MPI 5 skips its own PMIx_Init when PMIx
// is initialised already and then has no process name, so the ballot's
// connection would make every MPI_Init fail.  PMIx_Init on an initialised
// client only counts one more user and returns the process's name, so the
// MPI gets its name and PMIx_Finalize stays balanced.  Calls nest.
void PmixMpiInitBegins();
void PmixMpiInitEnds();

}  // namespace mla::lib

#endif  // MLA_PMIX_CHANNEL_H_
