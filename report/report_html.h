// report_html.h: `multilane report --html OUT.html`: one self-contained page
// (inline CSS and SVG, no script, no external resource) with the charts and
// every figure also in the DOM for tests and tools (docs/report.md).
#ifndef MULTILANE_REPORT_REPORT_HTML_H_
#define MULTILANE_REPORT_REPORT_HTML_H_

#include <string>

#include "report/report_analysis.h"

namespace mlreport {

// The whole page.  Each job is a <section class="job" id="jN">, each series a
// <section class="series" id="sN">; every figure is an element with
// id="jN-NAME" (or sN-...), data-figure="NAME" and data-value="NUMBER" (the
// unrounded figure of `multilane report --json`), its text rounded for people.
// Everything taken from the files is HTML-escaped.
std::string RenderReportHtml(const ReportSet& set);

}  // namespace mlreport

#endif  // MULTILANE_REPORT_REPORT_HTML_H_
