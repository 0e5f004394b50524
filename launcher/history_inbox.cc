// history_inbox.cc: job reports into the job history (history_inbox.h).
#include "history_inbox.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include <nlohmann/json.hpp>

#include "report_analysis.h"
#include "vocab/byte_size.h"
#include "vocab/job_key.h"
#include "vocab/profile.h"

namespace multilane {
namespace {

// 16 hex digits of FNV-1a 64 over `text`: which profile text a run had.
std::string Digest(const std::string& text) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char out[17];
  std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(h));
  return out;
}

// The algorithm that ran most of a bin's calls ("" when none is named).
std::string MostCalls(const ReportBin& b) {
  std::string best;
  int64_t most = -1;
  for (const auto& [name, calls] : b.algos)
    if (calls > most) {
      most = calls;
      best = name;
    }
  return best;
}

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

}  // namespace

mldb::JobRunRow RunOfReport(const JobReport& r) {
  const JobAnalysis a = AnalyzeJob(r);
  mldb::JobRunRow run;
  run.job_key = r.job_key.empty() ? mla::DefaultJobKey(r.job_name, "") : r.job_key;
  run.job_name = r.job_name;
  run.job_id = r.job_id;
  run.started_utc = r.started_utc;
  if (r.profile_text) {
    run.node_type = mla::ProfileHeaderValue(*r.profile_text, "node_type");
    run.profile_digest = Digest(*r.profile_text);
  }
  run.nodes = r.nodes;
  run.ranks = r.ranks;
  run.gpus = r.gpus;
  run.ranks_per_gpu = r.ranks_per_gpu;
  nlohmann::json histogram = nlohmann::json::array();
  for (const ReportBin& b : r.bins) {
    const std::string algo = MostCalls(b);
    if (!algo.empty())
      run.algorithms += (run.algorithms.empty() ? "" : "; ") + b.memory + " " + mla::FormatByteSize(b.from) + " " + algo;
    histogram.push_back({b.memory, b.from, b.calls, b.bytes, b.time_s.mean});
  }
  run.histogram_json = histogram.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  run.wall_s = a.split.wall_s;
  run.compute_s = a.split.compute_s;
  run.allreduce_s = a.split.allreduce_s;
  run.wait_s = a.split.wait_s;
  if (a.energy.measured) run.energy_j = a.energy.energy_j;
  return run;
}

std::string MakeInbox(const std::string& inbox) {
  for (size_t at = inbox.find('/', 1); at != std::string::npos; at = inbox.find('/', at + 1)) {
    const std::string parent = inbox.substr(0, at);
    if (mkdir(parent.c_str(), 0755) != 0 && errno != EEXIST) return "cannot create " + parent + ": " + std::strerror(errno);
  }
  if (mkdir(inbox.c_str(), 0700) != 0 && errno != EEXIST) return "cannot create " + inbox + ": " + std::strerror(errno);
  struct stat st;
  if (stat(inbox.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return inbox + " is not a folder";
  return "";
}

bool RecordInbox(const std::string& inbox, mldb::ProfileStore* store, InboxResult* result, std::string* error) {
  for (const std::string& name : ReportFiles(inbox)) {
    const std::string path = inbox + "/" + name;
    JobReport report;
    std::string why;
    bool usable = ReadJobReport(path, &report, &why);
    mldb::JobRunRow run;
    if (usable) {
      run = RunOfReport(report);
      why = mldb::InvalidJobRun(run);
      if (!why.empty()) why = path + ": " + why;
      usable = why.empty();
    }
    if (!usable) {
      const bool moved = rename(path.c_str(), (path + ".ignored").c_str()) == 0;
      result->notes.push_back(why + (moved ? "; left out of the history (renamed to " + name + ".ignored)"
                                           : "; left out of the history"));
      continue;
    }
    bool added = false;
    if (!store->RecordJobRun(run, &added, error)) return false;
    ++(added ? result->recorded : result->known);
    unlink(path.c_str());
  }
  return true;
}

}  // namespace multilane
