// svg_chart.h: the few charts of the report page, drawn as inline SVG
// (no script, no external resource: the page works offline).
#ifndef MULTILANE_REPORT_SVG_CHART_H_
#define MULTILANE_REPORT_SVG_CHART_H_

#include <optional>
#include <string>
#include <vector>

namespace mlreport {

// Escapes text for HTML/SVG content and attribute values (& < > " '), its
// control bytes first written out by mla::EscapeControlBytes: the page never
// holds a raw NUL or ESC.
std::string HtmlEscape(const std::string& text);

// One coloured part of a whole.
struct Segment {
  std::string label;
  double share = 0;  // of 1
  std::string color;
};

// A 100 % horizontal bar of `segments` with a legend; `title` becomes the
// SVG's accessible title.
std::string StackedBarSvg(const std::string& title, const std::vector<Segment>& segments);

// A series of bars (one per category) or of points (one per x).
struct Series {
  std::string name;
  std::string color;
  std::vector<std::optional<double>> values;  // one per category / x; absent: not drawn
  bool dashed = false;                        // line charts: dashed line
};

// Bars grouped by category: for each category one bar per series, a y axis
// labelled `y_label` (from 0, or with `log_y` logarithmic over the decades
// of the positive values, which then are the only ones drawn), and a legend.
std::string GroupedBarsSvg(const std::string& title, const std::vector<std::string>& categories,
                           const std::vector<Series>& series, const std::string& y_label, bool log_y = false);

// Lines through points (x[i], series.values[i]) on a log2 x axis (x > 0),
// y from 0; x ticks at each x, labelled by `x_labels`.
std::string LineChartSvg(const std::string& title, const std::vector<double>& x,
                         const std::vector<std::string>& x_labels, const std::vector<Series>& series,
                         const std::string& x_label, const std::string& y_label);

}  // namespace mlreport

#endif  // MULTILANE_REPORT_SVG_CHART_H_
