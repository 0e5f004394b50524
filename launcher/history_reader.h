// history_reader.h: the job history as `multilane report` and `multilane
// resolve` read it (docs/history.md): the runs of a job key in the user's
// database, opened read only, and the runs still waiting in its inbox.
#ifndef MULTILANE_LAUNCHER_HISTORY_READER_H_
#define MULTILANE_LAUNCHER_HISTORY_READER_H_

#include <memory>
#include <string>
#include <vector>

#include "db/profile_store.h"
#include "report/report_history.h"

namespace multilane {

class HistoryReader {
 public:
  // Opens `database` read only (when it exists) and reads the runs waiting
  // in its inbox (db/paths.h HistoryInboxOf).  Never fails: what cannot be
  // read is said by Runs' note.
  explicit HistoryReader(const std::string& database);

  // The runs of `key`, any order: the database's, then the inbox's that the
  // database does not hold yet.  *note: "" or why the history is empty or
  // incomplete (no database, not readable).
  std::vector<mla::JobRun> Runs(const std::string& key, std::string* note) const;

  // One line naming the inbox files left out (not job reports, not the
  // user's), or "" when none.
  std::string InboxNote() const;

 private:
  std::vector<std::string> inbox_notes_;
  std::unique_ptr<mldb::ProfileStore> store_;
  std::vector<mla::JobRun> pending_;
  std::string why_;
};

}  // namespace multilane

#endif  // MULTILANE_LAUNCHER_HISTORY_READER_H_
