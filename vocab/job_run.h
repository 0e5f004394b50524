// job_run.h: one run of a job as the job history keeps it (docs/history.md):
// a summary of its job report, under its job key (vocab/job_key.h).  One
// struct for every part: report/report_history.h makes it from a report and
// compares runs, db/job_history.h stores it in the user's database, the
// launcher moves it between the two.
#ifndef MLVOCAB_JOB_RUN_H_
#define MLVOCAB_JOB_RUN_H_

#include <cstdint>
#include <optional>
#include <string>

namespace mla {

struct JobRun {
  int64_t id = 0;       // the database's row id, set when read back
  std::string job_key;  // job.key; DefaultJobKey(name, "") for reports written before keys
  std::string run_id;   // the report file's name without .json when the library named it, else job id-start
  std::string job_name;
  std::string job_id;          // SLURM_JOB_ID or "local"
  std::string started_utc;     // ISO 8601, from the report
  std::string recorded_utc;    // ISO 8601, when the database kept it ("" until then)
  std::string node_type;       // the profile's node_type=, "" without a profile
  std::string profile_digest;  // 16 hex digits of the profile text in force, "" without one
  int nodes = 0, ranks = 0, gpus = 0, ranks_per_gpu = 0;
  std::string algorithms;  // per bin with calls: "host 4M lane; host 16M split" (what ran most)
  double wall_s = 0, compute_s = 0, allreduce_s = 0, wait_s = 0;  // means over ranks (the analysis' TimeSplit)
  std::optional<double> energy_j;                                 // the sampled GPUs', when sampled
  std::string histogram_json;  // [[memory, from, calls, bytes, time_s], ...] compact JSON
};

}  // namespace mla

#endif  // MLVOCAB_JOB_RUN_H_
