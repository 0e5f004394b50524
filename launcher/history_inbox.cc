// history_inbox.cc: job reports into the job history (history_inbox.h).
#include "launcher/history_inbox.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "report/report_analysis.h"
#include "vocab/outside_input.h"
#include "vocab/terminal_text.h"

namespace multilane {

using mlreport::AnalyzeJob;
using mlreport::JobReport;
using mlreport::ReadJobReport;
using mlreport::SummarizeRun;

namespace {

std::vector<std::string> ReportFiles(const std::string& inbox) {
  std::vector<std::string> names;
  DIR* d = opendir(inbox.c_str());
  if (d == nullptr) return names;
  while (dirent* e = readdir(d)) {
    const std::string n = e->d_name;
    if (n.rfind("multilane-report-", 0) == 0 && n.size() > 5 && n.compare(n.size() - 5, 5, ".json") == 0)
      names.push_back(n);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

// Moves the inbox entry `path` aside to PATH.ignored, which is no report's
// name, so that it is named once and not on every later run; rename(2) acts
// on the name only (it never follows a link nor opens a FIFO).  Returns the
// note: `why`, then what became of the entry.
std::string SetAside(const std::string& path, const std::string& why) {
  const std::string name = path.substr(path.rfind('/') + 1);
  if (rename(path.c_str(), (path + ".ignored").c_str()) == 0)
    return why + "; left out of the history (renamed to " + name + ".ignored)";
  return why + "; left out of the history (it cannot be renamed to " + name + ".ignored: " + std::strerror(errno) +
         "; move it out of the inbox)";
}

}  // namespace

mla::JobRun ShownRun(mla::JobRun run) {
  // The database's text, shown by the report's renderers, escaped as the
  // report reader escapes a file's (report_reader.h); the key and the run id
  // stay as stored, for matching.
  for (std::string* text : {&run.job_name, &run.job_id, &run.started_utc, &run.node_type, &run.algorithms})
    *text = mla::EscapeControlBytes(*text);
  return run;
}

std::string MakeInbox(const std::string& inbox) {
  if (inbox.empty() || inbox[0] != '/') return "the history inbox '" + inbox + "' is not an absolute path";
  for (size_t at = inbox.find('/', 1); at != std::string::npos; at = inbox.find('/', at + 1)) {
    const std::string parent = inbox.substr(0, at);
    if (mkdir(parent.c_str(), 0755) != 0 && errno != EEXIST)
      return "cannot create " + parent + ": " + std::strerror(errno);
  }
  if (mkdir(inbox.c_str(), 0700) != 0 && errno != EEXIST) return "cannot create " + inbox + ": " + std::strerror(errno);
  return CheckInbox(inbox);
}

std::string CheckInbox(const std::string& inbox) {
  struct stat st;
  if (lstat(inbox.c_str(), &st) != 0) return "cannot read " + inbox + ": " + std::strerror(errno);
  if (!S_ISDIR(st.st_mode)) return inbox + " is not a folder (a link or a file): move it away";
  if (st.st_uid != geteuid()) return inbox + " belongs to another user: move it away";
  if ((st.st_mode & 077) != 0 && chmod(inbox.c_str(), 0700) != 0)
    return inbox + " is open to others and cannot be made private: " + std::strerror(errno);
  return "";
}

std::vector<std::string> PendingReports(const std::string& inbox, std::vector<std::string>* notes) {
  std::vector<std::string> paths;
  if (!CheckInbox(inbox).empty()) return paths;
  for (const std::string& name : ReportFiles(inbox)) {
    const std::string path = inbox + "/" + name;
    struct stat st;
    if (lstat(path.c_str(), &st) != 0) continue;
    if (S_ISREG(st.st_mode) && st.st_uid == geteuid()) {
      paths.push_back(path);
      continue;
    }
    const std::string what = S_ISREG(st.st_mode) ? "another user's file" : mla::FileKind(st.st_mode);
    const std::string note = SetAside(path, path + ": " + what + ", not a job report file of yours");
    if (notes) notes->push_back(note);
  }
  return paths;
}

bool RecordInbox(const std::string& inbox, mldb::ProfileStore* store, InboxResult* result, std::string* error) {
  struct stat st;
  if (lstat(inbox.c_str(), &st) != 0) return true;  // no inbox: nothing waits
  if (const std::string why = CheckInbox(inbox); !why.empty()) {
    result->notes.push_back("the history inbox is not used: " + why);
    return true;
  }
  for (const std::string& path : PendingReports(inbox, &result->notes)) {
    JobReport report;
    std::string why;
    bool usable = ReadJobReport(path, &report, &why);
    mla::JobRun run;
    if (usable) {
      run = SummarizeRun(report, AnalyzeJob(report));
      why = mldb::InvalidJobRun(run);
      if (!why.empty()) why = path + ": " + why;
      usable = why.empty();
    }
    if (!usable) {
      result->notes.push_back(SetAside(path, why));
      continue;
    }
    bool added = false;
    if (!store->RecordJobRun(run, &added, error)) return false;
    ++(added ? result->recorded : result->known);
    unlink(path.c_str());
  }
  return true;
}

std::vector<mla::JobRun> PendingRuns(const std::string& inbox, std::vector<std::string>* notes) {
  std::vector<mla::JobRun> runs;
  for (const std::string& path : PendingReports(inbox, notes)) {
    JobReport report;
    std::string why;
    if (ReadJobReport(path, &report, &why)) {
      runs.push_back(SummarizeRun(report, AnalyzeJob(report)));
    } else {
      // Set aside as `multilane history` would: named by this run only.
      const std::string note = SetAside(path, why.rfind(path, 0) == 0 ? why : path + ": " + why);
      if (notes != nullptr) notes->push_back(note);
    }
  }
  return runs;
}

}  // namespace multilane
