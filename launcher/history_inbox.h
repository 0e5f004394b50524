// history_inbox.h: the job history's way in (docs/history.md).  A job run by
// `multilane run` with its report on drops a copy of its job report into the
// user's history inbox (MULTILANE_HISTORY, db/paths.h UserHistoryInboxPath);
// RecordInbox turns each file into a run of the user's database and removes
// it.
#ifndef MULTILANE_LAUNCHER_HISTORY_INBOX_H_
#define MULTILANE_LAUNCHER_HISTORY_INBOX_H_

#include <string>
#include <vector>

#include "db/job_history.h"
#include "db/profile_store.h"
#include "report/report_history.h"
#include "report/report_reader.h"

namespace multilane {

// A run read from the database as the report's renderers show it: its free
// text (job name and id, start, node type, algorithms) escaped as the report
// reader escapes a file's; the key and the run id as stored, for matching.
mla::JobRun ShownRun(mla::JobRun run);

// Makes the folder `inbox` (an absolute path; mode 0700) and its missing
// parents (0755), as `multilane run` does before a job with its report on,
// then CheckInbox.  Returns "" or what failed.
std::string MakeInbox(const std::string& inbox);

// "" when `inbox` is a real folder (not a link) of this user's, made private
// (0700) where it was open to others; else why it is not used.
std::string CheckInbox(const std::string& inbox);

// The job report files waiting in `inbox` (CheckInbox passed), sorted by
// name: regular files of this user's only.  Any other entry with a report's
// name (a link, a FIFO, a folder, another user's file) is never followed or
// opened: it is renamed to NAME.ignored, so that it is named once, in one
// note, and not again on later runs (the inbox is the user's own, 0700).
std::vector<std::string> PendingReports(const std::string& inbox, std::vector<std::string>* notes);

// The runs waiting in `inbox`, not recorded: what `multilane report` adds to
// the database's runs.  Files it cannot read are left out, each with a line
// in `notes` (when not null), and renamed to NAME.ignored as RecordInbox
// does, so that the next run does not name them again.
std::vector<mla::JobRun> PendingRuns(const std::string& inbox, std::vector<std::string>* notes = nullptr);

// What RecordInbox did.
struct InboxResult {
  int recorded = 0;                // new runs
  int known = 0;                   // runs the database had already
  std::vector<std::string> notes;  // one line per file left alone, with why
};

// Records every job report file (multilane-report-*.json) of the folder
// `inbox` (PendingReports) into `store` and removes each file recorded.  A file that is not a
// job report the reader takes (or not a regular file) is never fatal: it is
// renamed to NAME.ignored, so that it is named once, and a note says why.  A
// missing inbox is empty.  Returns false only when the store fails (*error).
bool RecordInbox(const std::string& inbox, mldb::ProfileStore* store, InboxResult* result, std::string* error);

}  // namespace multilane

#endif  // MULTILANE_LAUNCHER_HISTORY_INBOX_H_
