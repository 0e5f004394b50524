// report_text.h: `multilane report`'s terminal summary.
#ifndef MULTILANE_REPORT_REPORT_TEXT_H_
#define MULTILANE_REPORT_REPORT_TEXT_H_

#include <string>

#include "report/report_analysis.h"

namespace mlreport {

// The summary of every file and series, plain text lines of at most about
// 100 columns, figures rounded for people (the same rounding as the HTML page).
std::string FormatReportText(const ReportSet& set);

}  // namespace mlreport

#endif  // MULTILANE_REPORT_REPORT_TEXT_H_
