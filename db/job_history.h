// job_history.h: the job history in the user's database (`multilane
// history`, docs/history.md): runs of jobs (vocab/job_run.h), kept under
// their job keys.  ProfileStore records, lists and forgets them
// (profile_store.h); db/job_history.cc holds that code.
#ifndef MLDB_JOB_HISTORY_H_
#define MLDB_JOB_HISTORY_H_

#include <string>

#include "vocab/job_run.h"

namespace mldb {

// At most this many runs are kept per job key, and this many in all: the
// oldest (by started_utc, then id) go first.
inline constexpr int kHistoryRunsPerKey = 20;
inline constexpr int kHistoryRunsInAll = 1000;

// What RecordJobRun refuses, with the field named; "" when `run` may be kept.
std::string InvalidJobRun(const mla::JobRun& run);

}  // namespace mldb

#endif  // MLDB_JOB_HISTORY_H_
