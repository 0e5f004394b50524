// job_history.h: one run of a job as the user's database keeps it (the job
// history, `multilane history`, docs/history.md): a summary of its job report,
// under its job key (vocab/job_key.h).  ProfileStore records, lists and
// forgets them (profile_store.h); db/job_history.cc holds that code.
#ifndef MLDB_JOB_HISTORY_H_
#define MLDB_JOB_HISTORY_H_

#include <cstdint>
#include <optional>
#include <string>

namespace mldb {

// At most this many runs are kept per job key, and this many in all: the
// oldest (by started_utc, then id) go first.
inline constexpr int kHistoryRunsPerKey = 20;
inline constexpr int kHistoryRunsInAll = 1000;

struct JobRunRow {
  int64_t id = 0;                // set when read back
  std::string job_key;           // vocab/job_key.h
  std::string run_id;            // which run: the report file's name (multilane-report-<job>-<UTC>-<pid>)
  std::string job_name;
  std::string job_id;            // SLURM_JOB_ID or "local"
  std::string started_utc;       // ISO 8601, from the report
  std::string recorded_utc;      // ISO 8601; RecordJobRun fills it when empty
  std::string node_type;         // the profile's node_type=, "" without a profile
  std::string profile_digest;    // 16 hex digits of the profile text in force, "" without one
  int nodes = 0, ranks = 0, gpus = 0, ranks_per_gpu = 0;
  std::string algorithms;        // per bin: "host 4K passthrough; host 4M lane", what ran most
  double wall_s = 0, compute_s = 0, allreduce_s = 0, wait_s = 0;  // means over ranks
  std::optional<double> energy_j;  // the sampled GPUs', when sampled
  std::string histogram_json;    // [[memory, from, calls, bytes, time_s], ...] compact JSON
};

// What RecordJobRun refuses, with the field named; "" when `run` may be kept.
std::string InvalidJobRun(const JobRunRow& run);

}  // namespace mldb

#endif  // MLDB_JOB_HISTORY_H_
