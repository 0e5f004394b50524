// report_json.h: `multilane report --json`: the analysis for machines.
#ifndef MULTILANE_LAUNCHER_REPORT_JSON_H_
#define MULTILANE_LAUNCHER_REPORT_JSON_H_

#include <nlohmann/json.hpp>

#include "report/report_analysis.h"

namespace mlreport {

// Every figure of the analysis (format `multilane-report-analysis`, version
// 1; docs/report.md), unrounded; unknown figures are null.  The HTML page's
// data-value attributes carry the same numbers.
nlohmann::json AnalysisJson(const ReportSet& set);

}  // namespace mlreport

#endif  // MULTILANE_LAUNCHER_REPORT_JSON_H_
