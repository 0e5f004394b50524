// history_reader.cc: the job history, read only (history_reader.h).
#include "launcher/history_reader.h"

#include <unistd.h>

#include <algorithm>

#include "db/job_history.h"
#include "db/paths.h"
#include "launcher/history_inbox.h"

namespace multilane {

HistoryReader::HistoryReader(const std::string& database) {
  if (database.empty()) {
    why_ = "no user database (HOME is not set)";
  } else if (access(database.c_str(), F_OK) == 0) {
    store_ = mldb::ProfileStore::Open(database, mldb::ProfileStore::Access::kReadOnly, &why_);
  }
  if (!mldb::HistoryInboxOf(database).empty()) pending_ = PendingRuns(mldb::HistoryInboxOf(database), &inbox_notes_);
  if (!store_ && why_.empty() && pending_.empty()) why_ = "no job history yet (" + database + " does not exist)";
}

std::vector<mla::JobRun> HistoryReader::Runs(const std::string& key, std::string* note) const {
  std::vector<mla::JobRun> runs;
  *note = why_;
  if (store_) {
    std::string error;
    for (const mla::JobRun& row : store_->JobRuns(key, &error)) runs.push_back(ShownRun(row));
    if (!error.empty()) *note = "the job history cannot be read: " + error;
  }
  for (const mla::JobRun& p : pending_)
    if (p.job_key == key &&
        std::none_of(runs.begin(), runs.end(), [&](const mla::JobRun& e) { return e.run_id == p.run_id; }))
      runs.push_back(p);
  return runs;
}

std::string HistoryReader::InboxNote() const {
  if (inbox_notes_.empty()) return "";
  std::string line = "left out " + std::to_string(inbox_notes_.size()) + " file(s) of the history inbox: ";
  for (size_t i = 0; i < inbox_notes_.size(); ++i) line += (i ? "; " : "") + inbox_notes_[i];
  return line;
}

}  // namespace multilane
