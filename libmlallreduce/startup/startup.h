// startup.h: the start-up agreement that makes a job all in or all out
// (docs/all-in-or-all-out.md).  Both the family builds (runtime.cc) and the
// front library, when it cannot forward to a family build, run it, so every
// rank that carries multilane takes part whatever its state.  No mpi.h: the
// caller hands over the three MPI calls it needs.
#ifndef MLA_STARTUP_H_
#define MLA_STARTUP_H_

#include <cstdint>
#include <functional>
#include <string>

#include "libmlallreduce/startup/ballot.h"

namespace mla::lib {

// The MPI calls the agreement makes, bound by the caller to its MPI.
struct StartupMpi {
  std::function<int()> world_size;  // MPI_Comm_size(MPI_COMM_WORLD): local
  std::function<int()> world_rank;  // MPI_Comm_rank(MPI_COMM_WORLD): local
  // The frozen collective: an in-place MPI_Allreduce of n 64-bit unsigned
  // words with MPI_MAX over MPI_COMM_WORLD; false when it failed.
  std::function<bool(uint64_t* words, int n)> combine_max;
};

// Before PMPI_Init/PMPI_Init_thread: publishes this rank's ballot where the
// launcher offers PMIx.  Call once per process.
void CastBallot(const Ballot& mine);

// After MPI_Init succeeded: gathers every rank's ballot and returns the
// decision all ranks take alike.  Makes no MPI call of its own unless every
// rank is known to make the same one: with PMIx it only reads; without, the
// frozen collective runs only in a job of one rank, where the launcher
// certified with MULTILANE_ALL_RANKS=1 that every rank carries multilane, or
// where the program is linked with the family build and every rank runs it
// (one_program.h: not in an MPMD job).
// With PMIx, node leaders combine the ballots in a tree over nodes of
// `ranks_per_node` ranks (MULTILANE_RANKS_PER_NODE; 0: the job's nodes as
// PMIx counts them), so a rank reads O(ranks per node) values (ballot_tree.h).
Verdict CountBallots(const Ballot& mine, const StartupMpi& mpi, int ranks_per_node);

// What this process's CountBallots cost: the PMIx reads it made (0 without
// PMIx) and its time.
struct AgreementCost {
  int reads = 0;
  double seconds = 0;
};
AgreementCost LastAgreementCost();

// Releases what CastBallot opened, for a rank that cannot count (its MPI is
// another family's): its ballot stays published for the others.
void ReleaseBallotChannel();

}  // namespace mla::lib

#endif  // MLA_STARTUP_H_
