// cmd_history.cc: `multilane history [--key KEY] [--json] [--forget KEY |
// --forget-all]`: records the job reports waiting in the user's history
// inbox (history_inbox.h), then lists the job history of the user's database
// or forgets some of it (docs/history.md).
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "launcher/commands.h"
#include "launcher/context.h"
#include "db/job_history.h"
#include "db/paths.h"
#include "db/profile_store.h"
#include "launcher/history_inbox.h"
#include "report/report_json.h"
#include "vocab/job_key.h"
#include "vocab/outside_input.h"
#include "vocab/terminal_text.h"

namespace multilane {
namespace {

struct HistoryOptions {
  std::string database;
  std::string key;
  std::string forget;
  bool forget_all = false;
  bool json = false;
  bool make_inbox = false;
};

// The run as the report writes it (mlreport::JobRunJson), with its key,
// name, node type, when it was recorded and its size histogram.
nlohmann::json RunJson(const mla::JobRun& r) {
  nlohmann::json histogram = nlohmann::json::parse(r.histogram_json, nullptr, false);
  nlohmann::json j = mlreport::JobRunJson(r);
  j.update({{"key", r.job_key},
            {"name", r.job_name},
            {"recorded_utc", r.recorded_utc},
            {"node_type", r.node_type},
            {"histogram", histogram.is_discarded() ? nlohmann::json::array() : histogram}});
  return j;
}

std::string Shown(const std::string& outside) { return mla::EscapeControlBytes(mla::Excerpt(outside)); }

// One line per run of one key; one line per key otherwise.
void PrintRuns(const std::vector<mla::JobRun>& runs, bool per_run) {
  if (runs.empty()) {
    std::printf("no job history yet: run a job with its report on (MULTILANE_REPORT=DIR multilane run -- ...)\n");
    return;
  }
  if (per_run) {
    std::printf("%-20s  %-10s  %5s  %5s  %4s  %10s  %7s  %9s  %6s  %s\n", "started (UTC)", "job id", "nodes", "ranks",
                "ppg", "wall s", "compute", "allreduce", "wait", "algorithms");
    for (const mla::JobRun& r : runs) {
      const double w = r.wall_s > 0 ? r.wall_s : 1;
      std::printf("%-20s  %-10s  %5d  %5d  %4d  %10.3f  %6.0f%%  %8.0f%%  %5.0f%%  %s\n", Shown(r.started_utc).c_str(),
                  Shown(r.job_id).c_str(), r.nodes, r.ranks, r.ranks_per_gpu, r.wall_s, 100 * r.compute_s / w,
                  100 * r.allreduce_s / w, 100 * r.wait_s / w, Shown(r.algorithms).c_str());
    }
    return;
  }
  std::map<std::string, std::vector<const mla::JobRun*>> by_key;
  for (const mla::JobRun& r : runs) by_key[r.job_key].push_back(&r);
  std::printf("%-40s  %4s  %-20s  %10s  %10s  %s\n", "job key", "runs", "last run (UTC)", "last wall s", "best wall s",
              "best at ranks/GPU");
  for (const auto& [key, list] : by_key) {
    const mla::JobRun* best = list.front();
    for (const mla::JobRun* r : list)
      if (r->wall_s < best->wall_s) best = r;
    std::printf("%-40s  %4zu  %-20s  %10.3f  %10.3f  %d\n", Shown(key).c_str(), list.size(),
                Shown(list.back()->started_utc).c_str(), list.back()->wall_s, best->wall_s, best->ranks_per_gpu);
  }
}

// --make-inbox: makes the user's history inbox and says where it is, as
// key=value lines for the Slurm plugin (which runs this as the job's user in
// report mode): history_inbox=PATH, or history_note=ONE LINE.
int MakeInboxForPlugin() {
  const std::string inbox = mldb::UserHistoryInboxPath();
  std::string why = inbox.empty() ? "no user database (HOME is not set)" : "";
  if (why.empty() && inbox.find_first_of("\n\r") != std::string::npos) why = "its path holds a line break";
  if (why.empty()) why = MakeInbox(inbox);
  if (why.empty()) {
    std::printf("history_inbox=%s\n", inbox.c_str());
  } else {
    for (char& c : why)
      if (c == '\n' || c == '\r') c = ' ';
    std::printf("history_note=the job history is not kept: %s\n", why.c_str());
  }
  return 0;
}

int History(const HistoryOptions& opt) {
  if (opt.make_inbox) return MakeInboxForPlugin();
  for (const std::string* k : {&opt.key, &opt.forget})
    if (!k->empty() && !mla::ValidJobKey(*k))
      return Fail("job key '" + Shown(*k) + "' must be " + mla::JobKeyRule() + "; `multilane history` lists the keys");
  const std::string database =
      HistoryDatabase(opt.database.empty() ? std::vector<std::string>{} : std::vector<std::string>{opt.database});
  if (database.empty()) return Fail("no user database: HOME is not set; set HOME or MULTILANE_USER_DB");
  std::string error;
  auto store = mldb::ProfileStore::Open(database, mldb::ProfileStore::Access::kReadWrite, &error);
  if (!store) return Fail(error);
  const std::string inbox = mldb::HistoryInboxOf(database);
  InboxResult in;
  if (!RecordInbox(inbox, store.get(), &in, &error)) return Fail(error);
  for (const std::string& note : in.notes)
    std::fprintf(stderr, "multilane: history: %s\n", mla::EscapeControlBytes(note).c_str());
  if (!opt.forget.empty() || opt.forget_all) {
    int forgotten = 0;
    if (!store->ForgetJobRuns(opt.forget, &forgotten, &error)) return Fail(error);
    std::printf("forgot %d run(s)%s\n", forgotten, opt.forget.empty() ? "" : (" of " + Shown(opt.forget)).c_str());
    return 0;
  }
  const std::vector<mla::JobRun> runs = store->JobRuns(opt.key, &error);
  if (!error.empty()) return Fail(error);
  if (opt.json) {
    nlohmann::json list = nlohmann::json::array();
    for (const mla::JobRun& r : runs) list.push_back(RunJson(r));
    nlohmann::json doc = {
        {"database", database}, {"inbox", inbox}, {"recorded", in.recorded}, {"ignored", in.notes}, {"runs", list}};
    std::printf("%s\n", doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return 0;
  }
  PrintRuns(runs, !opt.key.empty());
  return 0;
}

}  // namespace

void AddHistoryCommand(CLI::App& app, int* status) {
  auto* opt = new HistoryOptions();  // lives as long as the app
  CLI::App* cmd = app.add_subcommand(
      "history", "List the job history of your database (jobs run with their report on), or forget some of it");
  cmd->add_option("--db", opt->database,
                  "The database (default: your own, $MULTILANE_USER_DB or under $HOME); its inbox is the folder "
                  "history beside it, where `multilane run --db` puts its jobs' reports");
  cmd->add_option("--key", opt->key, "Only this job's runs, one line each");
  CLI::Option* forget = cmd->add_option("--forget", opt->forget, "Forget the runs of this job key");
  cmd->add_flag("--forget-all", opt->forget_all, "Forget every run")->excludes(forget);
  cmd->add_flag("--json", opt->json, "Print the runs as JSON");
  cmd->add_flag("--make-inbox", opt->make_inbox,
                "Only make your history inbox and print history_inbox=PATH (for the Slurm plugin)");
  cmd->footer(
      "Jobs started by `multilane run` with MULTILANE_REPORT set drop their report into the history "
      "inbox beside the database; each `multilane history` records them first.");
  cmd->callback([opt, status] { *status = History(*opt); });
}

}  // namespace multilane
