// cmd_report.cc: `multilane report FILE... [--html OUT.html] [--json]`: reads
// the job report files the library wrote, prints a summary (or the analysis
// as JSON) and writes a self-contained HTML page (docs/report.md).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "launcher/commands.h"
#include "launcher/context.h"
#include "db/job_history.h"
#include "db/profile_store.h"
#include "launcher/history_reader.h"
#include "report/report_history.h"
#include "report/report_reader.h"
#include "vocab/terminal_text.h"
#include "launcher/output_file.h"
#include "report/report_analysis.h"
#include "report/report_html.h"
#include "report/report_json.h"
#include "report/report_text.h"

namespace multilane {

using mlreport::JobReport;
using mlreport::ReportSet;

namespace {

struct ReportOptions {
  std::vector<std::string> files;
  std::string html;
  bool json = false;
  std::string history_db;  // "": the user's database
  bool no_history = false;
};

// Each job beside its earlier runs in the job history of `database` (read
// only; docs/history.md), with the runs still waiting in its inbox.  No
// database or one that cannot be read: the report says so and goes on.  An
// entry of the inbox moved aside while it was read (history_inbox.h) is named
// here, once.
void AddHistories(const std::string& database, ReportSet* set) {
  const HistoryReader history(database);
  if (!history.InboxNote().empty())
    std::fprintf(stderr, "multilane: history: %s\n", mla::EscapeControlBytes(history.InboxNote()).c_str());
  for (size_t i = 0; i < set->jobs.size(); ++i) {
    const mla::JobRun me = mlreport::SummarizeRun(set->reports[i], set->jobs[i]);
    std::string note;
    std::vector<mla::JobRun> earlier = history.Runs(me.job_key, &note);
    mlreport::AddHistory(set->reports[i], &set->jobs[i], std::move(earlier), note);
  }
}

// Exit status of a file the command cannot use (like a usage error).
constexpr int kBadFileStatus = 2;

int Report(const ReportOptions& opt) {
  std::vector<JobReport> reports;
  bool bad = false;
  for (const std::string& path : opt.files) {
    JobReport r;
    std::string error;
    if (!mlreport::ReadJobReport(path, &r, &error)) {
      std::fprintf(stderr, "multilane: error: %s\n", mla::EscapeControlBytes(error).c_str());
      bad = true;
      continue;
    }
    reports.push_back(std::move(r));
  }
  if (bad) return kBadFileStatus;
  ReportSet set = mlreport::AnalyzeReports(std::move(reports));
  if (!opt.no_history)
    AddHistories(
        HistoryDatabase(opt.history_db.empty() ? std::vector<std::string>{} : std::vector<std::string>{opt.history_db}),
        &set);
  if (opt.json) {
    std::printf("%s\n",
                mlreport::AnalysisJson(set).dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  } else {
    // The report's fields are escaped as read; this is the last guard, which
    // keeps the summary's own line breaks.
    const std::string text = mla::EscapeControlBytes(mlreport::FormatReportText(set), true);
    std::fwrite(text.data(), 1, text.size(), stdout);
  }
  if (!opt.html.empty()) {
    std::string error;
    if (!WriteOutputFile(opt.html, mlreport::RenderReportHtml(set), &error)) {
      std::fprintf(stderr, "multilane: error: %s\n", mla::EscapeControlBytes(error).c_str());
      return 1;
    }
    if (!opt.json) std::printf("\nwrote %s\n", mla::EscapeControlBytes(opt.html).c_str());
  }
  return 0;
}

}  // namespace

void AddReportCommand(CLI::App& app, int* status) {
  auto* opt = new ReportOptions();
  CLI::App* cmd = app.add_subcommand(
      "report", "Summarise job report files (MULTILANE_REPORT=DIR): time split, sizes, busbw, scaling, verdicts");
  cmd->add_option("files", opt->files,
                  "Job report files (multilane-report-*.json); several runs of one job at "
                  "different scales give the measured scaling")
      ->required();
  cmd->add_option("--html", opt->html, "Also write a self-contained HTML page with charts to this file");
  cmd->add_flag("--json", opt->json, "Print the analysis as JSON instead of the summary");
  cmd->add_option("--db,--history-db", opt->history_db,
                  "Read the job's earlier runs from this database and its history inbox (default: your own; "
                  "`multilane history`)");
  cmd->add_flag("--no-history", opt->no_history, "Do not read the job history");
  cmd->callback([opt, status] { *status = Report(*opt); });
}

}  // namespace multilane
