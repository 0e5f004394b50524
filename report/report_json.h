// report_json.h: `multilane report --json`: the analysis for machines.
#ifndef MULTILANE_REPORT_REPORT_JSON_H_
#define MULTILANE_REPORT_REPORT_JSON_H_

#include <nlohmann/json.hpp>

#include "report/report_analysis.h"

namespace mlreport {

// Every figure of the analysis (format `multilane-report-analysis`, version
// 1; docs/report.md), unrounded; unknown figures are null.  The HTML page's
// data-value attributes carry the same numbers.
nlohmann::json AnalysisJson(const ReportSet& set);

// One run of the job history (vocab/job_run.h): its start, ids, layout,
// algorithms, profile digest, times and energy (null: not measured), as the
// report's history and `multilane history --json` write it.
nlohmann::json JobRunJson(const mla::JobRun& run);

}  // namespace mlreport

#endif  // MULTILANE_REPORT_REPORT_JSON_H_
