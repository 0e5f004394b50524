// tune_record.h: what `multilane tune` stores once its probes ran
// (cmd_tune.cc): the profile record of the node type, with the metadata
// `show` and `resolve` read, the entries of every ranks-per-GPU value
// tuned, and the raw measurements, published into the target database.
#ifndef MULTILANE_LAUNCHER_TUNE_RECORD_H_
#define MULTILANE_LAUNCHER_TUNE_RECORD_H_

#include <string>
#include <vector>

#include "db/profile_store.h"
#include "launcher/tune/probe_launch.h"
#include "launcher/store_target.h"

namespace multilane {

// How the tune ended, besides its launches.
struct TuneOutcome {
  const ProbeLaunch* best = nullptr;  // the launch of the recommended ranks per GPU
  int recommended = 0;                // the recommended ranks per GPU
  bool per_gpu_launches = false;      // one launch per ranks-per-GPU value (device memory or a list)
  bool device = false;                // device memory was tuned
  bool oversubscribed = false;        // the layout was marked oversubscribed (tune_layout.h)
  int cores = 0;                      // usable cores of a node
  std::string partition;              // --partition; "": none
  bool virtual_nodes = false;         // the nodes were virtual (--virtual-nodes on one machine)
  bool weighted = false;              // --weights chose the ranks per GPU
};

// The profile record of a tune of node type `node_type_key` with MPI
// `mpi_version` that has run `duration_s` so far: the outcome's partition,
// nodes and ranks per GPU of the best launch, this library's version, the user, now; the
// profile text (metadata and bins) and its entries: with several launches
// each value's own bins (ppg=N), then the best launch's without ppg, for
// jobs of any other layout.
mldb::ProfileRecord BuildTuneRecord(const std::vector<ProbeLaunch>& launches, const TuneOutcome& outcome,
                                    const std::string& mpi_version, const std::string& node_type_key,
                                    double duration_s);

// Publishes *record with the launches' sampled measurements (median time,
// repetitions, ranks per GPU, a wrong result marked in the candidate's name)
// for node type `fp` into `store` and finishes the target (publishing the
// snapshot of the system database).  Sets record->id.  On failure returns
// false with *error set.
bool StoreTuneRecord(mldb::ProfileStore* store, const StoreTarget& target, const mldb::NodeFingerprint& fp,
                     const std::vector<ProbeLaunch>& launches, mldb::ProfileRecord* record, std::string* error);

}  // namespace multilane

#endif  // MULTILANE_LAUNCHER_TUNE_RECORD_H_
