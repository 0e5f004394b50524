// tune_record.cc: what `multilane tune` stores (tune_record.h).
#include "launcher/tune/tune_record.h"

#include "vocab/ranks_per_gpu.h"
#include "vocab/utc_time.h"

#include <cstdint>
#include <cstdlib>
#include <map>

#include "launcher/context.h"
#include "db/node_type.h"
#include "launcher/tune/tune_layout.h"
#include "tuner/candidates.h"

namespace multilane {
namespace {

mldb::ProfileEntryRow EntryFromBin(const mltuner::Space& space, const mltuner::Bin& bin, int ppg) {
  mldb::ProfileEntryRow e;
  e.mem_kind = mltuner::MemKindName(bin.mem);
  e.min_bytes = static_cast<int64_t>(bin.from);
  if (bin.to != UINT64_MAX) e.max_bytes = static_cast<int64_t>(bin.to);
  mltuner::Candidate c;
  std::string error;
  if (mltuner::ParseCandidate(space, bin.winner, &c, &error)) {
    e.algo = c.algo;
    for (const auto& [key, value] : c.params) {
      uint64_t bytes = 0;
      if (key == "lanes")
        e.lanes = std::atoi(value.c_str());
      else if (key == "chunk" && mltuner::ParseByteSize(value, &bytes))
        e.chunk_bytes = static_cast<int64_t>(bytes);
      else if (key == "transport")
        e.transport = value;
      else if (key == "mpi")
        e.system_algorithm = value;
    }
  } else {
    e.algo = bin.winner.substr(0, bin.winner.find(' '));
  }
  e.ppg = ppg;
  e.time_us = bin.time_us;
  e.mpi_time_us = bin.mpi_time_us;
  return e;
}

// The profile's metadata lines (docs/profile-format.md): what `show` and
// `resolve` say about how the profile was tuned.
std::map<std::string, std::string> TuneMetadata(const std::vector<ProbeLaunch>& launches, const TuneOutcome& outcome,
                                                const std::string& node_type_key, const std::string& tuned_at) {
  const ProbeLaunch* best = outcome.best;
  std::map<std::string, std::string> metadata = {{"node_type", node_type_key},
                                                 {"tuned_at", tuned_at},
                                                 {"nodes", std::to_string(best->nodes)},
                                                 {"ranks", std::to_string(best->np)}};
  // Whether those nodes were virtual (MULTILANE_RANKS_PER_NODE on one
  // machine) or real ones of a Slurm allocation: `show` and `resolve` say it.
  metadata["nodes_virtual"] = outcome.virtual_nodes && best->nodes > 1 ? "yes" : "no";
  if (!outcome.partition.empty()) metadata["partition"] = outcome.partition;
  if (outcome.oversubscribed)
    metadata["oversubscribed"] =
        OversubscribedMark(launches.size() > 1 || outcome.per_gpu_launches ? best->np : best->per_node, outcome.cores);
  if (outcome.per_gpu_launches) {
    std::string tuned;
    bool any_shared = false, all_mps = true;
    for (const ProbeLaunch& l : launches) {
      tuned += (tuned.empty() ? "" : ",") + std::to_string(l.ranks_per_gpu);
      if (outcome.device && l.ranks_per_gpu > 1) {
        any_shared = true;
        all_mps = all_mps && l.mps;
      }
    }
    metadata["ranks_per_gpu"] = std::to_string(outcome.recommended);
    metadata["ranks_per_gpu_tuned"] = tuned;
    metadata["mps"] = !any_shared ? "none" : all_mps ? "on" : "off";
    if (outcome.weighted) metadata["weights"] = "job-report";
  }
  return metadata;
}

// Every sampled measurement of `launches` as the store keeps it.
std::vector<mldb::Measurement> StoredMeasurements(const std::vector<ProbeLaunch>& launches) {
  std::vector<mldb::Measurement> raw;
  for (const ProbeLaunch& l : launches) {
    for (const auto& m : l.measurements) {
      if (m.samples.empty()) continue;
      mldb::Measurement r;
      r.mem_kind = mltuner::MemKindName(m.mem);
      r.bytes = static_cast<int64_t>(m.bytes);
      r.candidate = m.candidate + (m.valid ? "" : " (wrong result)");
      r.ppg = mla::RanksPerGpuOrOne(l.ranks_per_gpu);
      r.time_us = mltuner::Median(m.samples);
      r.reps = static_cast<int>(m.samples.size());
      raw.push_back(r);
    }
  }
  return raw;
}

}  // namespace

mldb::ProfileRecord BuildTuneRecord(const std::vector<ProbeLaunch>& launches, const TuneOutcome& outcome,
                                    const std::string& mpi_version, const std::string& node_type_key,
                                    double duration_s) {
  const ProbeLaunch* best = outcome.best;
  mldb::ProfileRecord record;
  record.partition = outcome.partition;
  record.nodes = best->nodes;
  record.ranks_per_gpu = mla::RanksPerGpuOrOne(best->ranks_per_gpu);
  record.library_version = LibraryVersion();
  record.mpi_version = mpi_version;
  record.tuned_by = CurrentUser();
  record.tuned_at = mla::UtcNow();
  record.duration_s = duration_s;
  const auto metadata = TuneMetadata(launches, outcome, node_type_key, record.tuned_at);
  // Entries: each value's own (ppg=N) when several were tuned, and the
  // recommended value's again without ppg, for jobs of any other layout.
  std::vector<mltuner::Bin> bins;
  const mltuner::Space space = mltuner::DefaultSpace();
  for (const ProbeLaunch& l : launches) {
    if (launches.size() < 2) break;
    for (mltuner::Bin b : l.decided.bins) {
      b.ppg = l.ranks_per_gpu;
      bins.push_back(b);
    }
  }
  for (const mltuner::Bin& b : best->decided.bins) bins.push_back(b);
  record.profile_text = mltuner::RenderProfile(bins, metadata);
  for (const auto& bin : bins) record.entries.push_back(EntryFromBin(space, bin, bin.ppg));
  return record;
}

bool StoreTuneRecord(mldb::ProfileStore* store, const StoreTarget& target, const mldb::NodeFingerprint& fp,
                     const std::vector<ProbeLaunch>& launches, mldb::ProfileRecord* record, std::string* error) {
  if (!store->Publish(fp, record, StoredMeasurements(launches), error)) return false;
  return FinishStoreTarget(store, target, error);
}

}  // namespace multilane
