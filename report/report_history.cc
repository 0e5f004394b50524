// report_history.cc: runs as the history keeps them, and this run beside the
// earlier ones (report_history.h).
#include "report/report_history.h"

#include "report/report_analysis.h"

#include <algorithm>
#include <cstdint>

#include <nlohmann/json.hpp>

#include "vocab/byte_size.h"
#include "vocab/job_key.h"
#include "vocab/profile.h"

namespace mlreport {
namespace {

// The library names each report multilane-report-<job id>-<UTC>-<pid>.json,
// the same in the report folder and in the history inbox: that name tells two
// runs of one second apart.  A file renamed since: job id and start.
std::string RunId(const JobReport& r) {
  const size_t slash = r.path.rfind('/');
  const std::string base = slash == std::string::npos ? r.path : r.path.substr(slash + 1);
  if (base.rfind("multilane-report-", 0) == 0 && base.size() > 5 && base.compare(base.size() - 5, 5, ".json") == 0)
    return base.substr(0, base.size() - 5);
  return r.job_id + "-" + r.started_utc;
}

// The number at the end of a run id (the library's: rank 0's pid), or -1.
long long TrailingNumber(const std::string& id) {
  size_t at = id.size();
  while (at > 0 && id[at - 1] >= '0' && id[at - 1] <= '9') --at;
  if (at == id.size() || id.size() - at > 18) return -1;
  return std::stoll(id.substr(at));
}

// What differs between two runs of one job, in words.
std::vector<std::string> Changes(const mla::JobRun& before, const mla::JobRun& now) {
  std::vector<std::string> out;
  const auto number = [&](const char* what, int a, int b) {
    if (a != b) out.push_back(std::string(what) + " " + std::to_string(a) + " -> " + std::to_string(b));
  };
  number("nodes", before.nodes, now.nodes);
  number("ranks", before.ranks, now.ranks);
  number("GPUs", before.gpus, now.gpus);
  number("ranks per GPU", before.ranks_per_gpu, now.ranks_per_gpu);
  if (before.profile_digest != now.profile_digest)
    out.push_back(now.profile_digest.empty() ? "no profile" : before.profile_digest.empty() ? "a profile" : "profile");
  if (before.algorithms != now.algorithms) out.push_back("algorithms: " + now.algorithms);
  return out;
}

}  // namespace

bool StartedBefore(const mla::JobRun& a, const mla::JobRun& b) {
  if (a.started_utc != b.started_utc) return a.started_utc < b.started_utc;
  const long long x = TrailingNumber(a.run_id), y = TrailingNumber(b.run_id);
  if (x >= 0 && y >= 0 && x != y) return x < y;
  return a.run_id < b.run_id;
}

mla::JobRun SummarizeRun(const JobReport& r, const JobAnalysis& a) {
  mla::JobRun s;
  s.job_key = r.job_key.empty() ? mla::DefaultJobKey(r.job_name, "") : r.job_key;
  s.job_name = r.job_name;
  s.job_id = r.job_id;
  s.run_id = RunId(r);
  s.started_utc = r.started_utc;
  if (r.profile_text) {
    s.node_type = mla::ProfileHeaderValue(*r.profile_text, "node_type");
    s.profile_digest = mla::Fnv1a64Hex(*r.profile_text);
  }
  s.nodes = r.nodes;
  s.ranks = r.ranks;
  s.gpus = r.gpus;
  s.ranks_per_gpu = r.ranks_per_gpu;
  nlohmann::json histogram = nlohmann::json::array();
  for (const ReportBin& b : r.bins) {
    const std::string algo = MostCalls(b);
    if (!algo.empty())
      s.algorithms += (s.algorithms.empty() ? "" : "; ") + b.memory + " " + mla::FormatByteSize(b.from) + " " + algo;
    histogram.push_back({b.memory, b.from, b.calls, b.bytes, b.time_s.mean});
  }
  s.histogram_json = histogram.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  s.wall_s = a.split.wall_s;
  s.compute_s = a.split.compute_s;
  s.allreduce_s = a.split.allreduce_s;
  s.wait_s = a.split.wait_s;
  if (a.energy.measured) s.energy_j = a.energy.energy_j;
  return s;
}

HistoryComparison CompareWithHistory(const mla::JobRun& current, std::vector<mla::JobRun> earlier) {
  HistoryComparison h;
  earlier.erase(std::remove_if(earlier.begin(), earlier.end(),
                               [&](const mla::JobRun& r) {
                                 // Only runs before this one.
                                 return r.job_key != current.job_key || r.run_id == current.run_id ||
                                        !StartedBefore(r, current);
                               }),
                earlier.end());
  std::stable_sort(earlier.begin(), earlier.end(), StartedBefore);
  if (earlier.empty()) {
    h.note = "no earlier run of job " + current.job_key + " in the history";
    return h;
  }
  h.known = true;
  h.runs = std::move(earlier);
  h.runs.push_back(current);
  const mla::JobRun& before = h.runs[h.runs.size() - 2];
  h.changes = Changes(before, current);
  h.wall_ratio = before.wall_s > 0 ? current.wall_s / before.wall_s : 1;
  if (!h.changes.empty())
    h.paid = h.wall_ratio < 1 - kHistorySameWallMargin   ? "yes"
             : h.wall_ratio > 1 + kHistorySameWallMargin ? "no"
                                                         : "same";
  h.best = std::min_element(h.runs.begin(), h.runs.end(),
                            [](const mla::JobRun& x, const mla::JobRun& y) { return x.wall_s < y.wall_s; }) -
           h.runs.begin();
  return h;
}

void AddHistory(const JobReport& report, JobAnalysis* a, std::vector<mla::JobRun> earlier,
                const std::string& why_none) {
  const mla::JobRun current = SummarizeRun(report, *a);
  a->history = CompareWithHistory(current, std::move(earlier));
  if (!why_none.empty() && !a->history.known) a->history.note = why_none;
  const HistoryComparison& h = a->history;
  if (!h.known) return;
  const mla::JobRun& before = h.runs[h.runs.size() - 2];
  const std::string wall = FormatNumber("the wall time went from %.4g s", before.wall_s) +
                           FormatNumber(" to %.4g s", current.wall_s) + FormatNumber(" (x%.2f)", h.wall_ratio);
  std::string changes;
  for (const std::string& c : h.changes) changes += (changes.empty() ? "" : ", ") + c;
  Verdict v{"history", VerdictLevel::kNote,
            "since the job's run before (" + before.started_utc + "): " + changes + "; " + wall};
  if (h.changes.empty()) {
    v.text = "nothing changed since the job's run before (" + before.started_utc + "): " + wall;
  } else if (h.paid == "yes") {
    v.level = VerdictLevel::kGood;
    v.text += ": the change paid";
  } else if (h.paid == "no") {
    v.level = VerdictLevel::kWarn;
    v.text += ": the change did not pay; the fastest run was " + h.runs[h.best].started_utc + " (" +
              std::to_string(h.runs[h.best].ranks_per_gpu) + " rank(s) per GPU)";
  } else {
    v.text +=
        ": within the " + std::to_string(static_cast<int>(kHistorySameWallMargin * 100)) + " % that counts as the same";
  }
  a->verdicts.push_back(v);
}

}  // namespace mlreport
