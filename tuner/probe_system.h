// probe_system.h: the system MPI's own allreduce algorithms as mlprobe's
// candidates ("passthrough mpi=NAME"): which of them to probe, and the
// communicator on which PMPI_Allreduce runs each.
//
// As a job's profile applies the winner (mpi=NAME,
// libmlallreduce/algorithms/system_choice.h): Open MPI's coll/tuned choice lives in a
// communicator, made once; MPICH's is a variable read at every call, written
// just before each call of the candidate and put back after it (Begin, End),
// as the library does; for device memory, the staged path's host collective
// runs them.  Where the user's own settings are in force, none is probed and
// the result says why.
#ifndef MLTUNER_PROBE_SYSTEM_H_
#define MLTUNER_PROBE_SYSTEM_H_

#include <mpi.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tuner/candidates.h"
#include "sysalgo/system_allreduce.h"

namespace mltuner {

class SystemAlgorithms {
 public:
  // After MPI_Init, collective over MPI_COMM_WORLD: finds the MPI's
  // algorithms.  `left_off`: what mlsys::PrepareBeforeInit returned before
  // MPI_Init ("" when coll/tuned's dynamic rules are on).
  explicit SystemAlgorithms(const std::string& left_off);
  // Frees the communicators made: destroy it before MPI_Finalize.
  ~SystemAlgorithms();
  SystemAlgorithms(const SystemAlgorithms&) = delete;
  SystemAlgorithms& operator=(const SystemAlgorithms&) = delete;

  // The candidates to probe on memory `mem` (host, or device: staged) for
  // the plan's `space`, or none
  // (why: Describe).  Names the plan gives that the MPI lacks are listed by
  // Describe.
  std::vector<Candidate> Candidates(const Space& space, MemKind mem);

  // False when candidate `c` (a system one) must not run `count` floats
  // summed over `nranks` ranks: the MPI would run another algorithm, abort
  // or compute a wrong result (mlsys::SystemAllreduce::Applies).  True for
  // every other candidate.
  bool Applies(const Candidate& c, int count, int nranks) const;

  // The communicator the calls of system candidate `c` run on, made at its
  // first use (MPICH: MPI_COMM_WORLD, once every rank's MPI took the name);
  // MPI_COMM_NULL with *error when none is probed here (why: Describe) or
  // the MPI refused (on any rank).
  // Collective over MPI_COMM_WORLD: every rank asks for the same candidates
  // in the same order.
  MPI_Comm CommFor(const Candidate& c, std::string* error);

  // True where the choice is a variable read at every call (MPICH): each
  // call of a system candidate is then bracketed by Begin(name) and End().
  bool PerCall() const;
  void Begin(const std::string& name);
  void End();

  // The result's "system_algorithms" object (tuner/README.md): mechanism,
  // offered, probed (those that ran), not_offered and, when none may run
  // here, why_none.
  nlohmann::json Describe() const;

 private:
  std::unique_ptr<mlsys::SystemAllreduce> system_;
  std::string why_none_;  // "" when the offered algorithms may be probed
  std::vector<std::string> probed_, not_offered_;
  std::map<std::string, MPI_Comm> comms_;        // by name; MPI_COMM_NULL: refused
  std::map<std::string, std::string> why_made_;  // by name: why it was refused
};

}  // namespace mltuner

#endif  // MLTUNER_PROBE_SYSTEM_H_
