// svg_chart.cc: inline SVG charts (svg_chart.h).
#include "report/svg_chart.h"

#include <algorithm>
#include <cmath>

#include "report/report_analysis.h"
#include "vocab/terminal_text.h"

namespace mlreport {
namespace {

constexpr int kWidth = 860;
constexpr int kLeft = 70;  // room for the y axis labels
constexpr int kRight = 20;
constexpr int kTop = 20;
constexpr int kPlotHeight = 220;
constexpr int kBottom = 70;           // x labels and legend
constexpr size_t kUprightLabels = 8;  // more categories than this: slanted labels

std::string Num(double v) { return FormatNumber("%.1f", v); }

std::string Label(double v) { return FormatNumber("%g", v); }

// A round step so that about 5 ticks cover [0, top].
double NiceStep(double top) {
  if (!(top > 0)) return 1;
  const double raw = top / 5;
  const double mag = std::pow(10, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * mag) return m * mag;
  return 10 * mag;
}

std::string Open(const std::string& title, int height) {
  return "<svg class=\"chart\" role=\"img\" viewBox=\"0 0 " + std::to_string(kWidth) + " " + std::to_string(height) +
         "\" width=\"" + std::to_string(kWidth) + "\" height=\"" + std::to_string(height) + "\"><title>" +
         HtmlEscape(title) + "</title>";
}

std::string Text(double x, double y, const std::string& text, const char* anchor = "start", const char* cls = "") {
  return "<text x=\"" + Num(x) + "\" y=\"" + Num(y) + "\" text-anchor=\"" + anchor + "\" class=\"" + cls + "\">" +
         HtmlEscape(text) + "</text>";
}

std::string Legend(const std::vector<Series>& series, double y) {
  std::string out;
  double x = kLeft;
  for (const Series& s : series) {
    out += "<rect x=\"" + Num(x) + "\" y=\"" + Num(y - 10) + "\" width=\"12\" height=\"12\" fill=\"" + s.color + "\"/>";
    out += Text(x + 16, y, s.name);
    x += 30 + 7.5 * static_cast<double>(s.name.size());
  }
  return out;
}

// A grid line across the plot at height `y`, with its tick label.
std::string GridLine(double y, const std::string& label) {
  return "<line class=\"grid\" x1=\"" + std::to_string(kLeft) + "\" x2=\"" + std::to_string(kWidth - kRight) +
         "\" y1=\"" + Num(y) + "\" y2=\"" + Num(y) + "\"/>" + Text(kLeft - 6, y + 4, label, "end", "tick");
}

// The title of the y axis, written upwards beside it.
std::string YTitle(const std::string& title) {
  return "<text class=\"axis\" transform=\"translate(14," + Num(kTop + kPlotHeight / 2.0) +
         ") rotate(-90)\" text-anchor=\"middle\">" + HtmlEscape(title) + "</text>";
}

// The y axis and its grid; returns the top of the axis.
double YAxis(double top_value, const std::string& y_label, std::string* out) {
  const double step = NiceStep(top_value);
  const double top = std::max(step, std::ceil(top_value / step - 1e-9) * step);
  for (double v = 0; v <= top + step / 2; v += step) {
    const double y = kTop + kPlotHeight * (1 - v / top);
    *out += GridLine(y, Label(v));
  }
  *out += YTitle(y_label);
  return top;
}

}  // namespace

std::string HtmlEscape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : mla::EscapeControlBytes(text)) {
    const char* entity = c == '&'    ? "&amp;"
                         : c == '<'  ? "&lt;"
                         : c == '>'  ? "&gt;"
                         : c == '"'  ? "&quot;"
                         : c == '\'' ? "&#39;"
                                     : nullptr;
    if (entity != nullptr)
      out += entity;
    else
      out += c;
  }
  return out;
}

std::string StackedBarSvg(const std::string& title, const std::vector<Segment>& segments) {
  const int height = 90;
  std::string out = Open(title, height);
  const double width = kWidth - kLeft - kRight;
  double x = kLeft;
  for (const Segment& s : segments) {
    const double w = std::max(0.0, s.share) * width;
    out += "<rect x=\"" + Num(x) + "\" y=\"10\" width=\"" + Num(w) + "\" height=\"40\" fill=\"" + s.color +
           "\"><title>" + HtmlEscape(s.label) + "</title></rect>";
    if (w > 60) out += Text(x + w / 2, 35, FormatNumber("%.0f %%", s.share * 100), "middle", "inbar");
    x += w;
  }
  std::vector<Series> legend;
  for (const Segment& s : segments) legend.push_back(Series{s.label, s.color, {}, false});
  out += Legend(legend, 75);
  return out + "</svg>";
}

std::string GroupedBarsSvg(const std::string& title, const std::vector<std::string>& categories,
                           const std::vector<Series>& series, const std::string& y_label, bool log_y) {
  const bool slanted = categories.size() > kUprightLabels;
  const int bottom = slanted ? kBottom + 40 : kBottom;
  const int height = kTop + kPlotHeight + bottom;
  std::string out = Open(title, height);
  double top_value = 0, least_positive = 0;
  for (const Series& s : series)
    for (const auto& v : s.values)
      if (v && std::isfinite(*v)) {
        top_value = std::max(top_value, *v);
        if (*v > 0) least_positive = least_positive > 0 ? std::min(least_positive, *v) : *v;
      }
  log_y = log_y && least_positive > 0;
  double top = 1, lo_decade = 0, hi_decade = 1;
  if (log_y) {
    lo_decade = std::floor(std::log10(least_positive));
    hi_decade = std::max(lo_decade + 1, std::ceil(std::log10(top_value)));
    for (double d = lo_decade; d <= hi_decade + 0.5; d += 1) {
      const double y = kTop + kPlotHeight * (1 - (d - lo_decade) / (hi_decade - lo_decade));
      out += GridLine(y, Label(std::pow(10, d)));
    }
    out += YTitle(y_label + " (log scale)");
  } else {
    top = YAxis(top_value, y_label, &out);
  }
  // The height of a bar of value v > 0.
  const auto bar_height = [&](double v) {
    if (!log_y) return kPlotHeight * v / top;
    return kPlotHeight * std::max(0.0, (std::log10(v) - lo_decade) / (hi_decade - lo_decade));
  };
  const double plot_width = kWidth - kLeft - kRight;
  const size_t n = std::max<size_t>(categories.size(), 1);
  const double group = plot_width / static_cast<double>(n);
  const double bar = std::min(40.0, group * 0.8 / static_cast<double>(std::max<size_t>(series.size(), 1)));
  for (size_t c = 0; c < categories.size(); ++c) {
    const double x0 = kLeft + group * static_cast<double>(c) + (group - bar * static_cast<double>(series.size())) / 2;
    for (size_t i = 0; i < series.size(); ++i) {
      if (c >= series[i].values.size() || !series[i].values[c] || !std::isfinite(*series[i].values[c])) continue;
      const double v = std::max(0.0, *series[i].values[c]);
      if (log_y && v <= 0) continue;
      const double h = bar_height(v);
      out += "<rect x=\"" + Num(x0 + bar * static_cast<double>(i)) + "\" y=\"" + Num(kTop + kPlotHeight - h) +
             "\" width=\"" + Num(bar - 1) + "\" height=\"" + Num(h) + "\" fill=\"" + series[i].color + "\"><title>" +
             HtmlEscape(series[i].name + " " + categories[c] + ": " + Label(v)) + "</title></rect>";
    }
    const double label_x = kLeft + group * (static_cast<double>(c) + 0.5);
    if (slanted) {  // many bins: slanted labels do not overlap
      out += "<text class=\"tick\" text-anchor=\"end\" transform=\"translate(" + Num(label_x) + "," +
             Num(kTop + kPlotHeight + 12) + ") rotate(-35)\">" + HtmlEscape(categories[c]) + "</text>";
    } else {
      out += Text(label_x, kTop + kPlotHeight + 16, categories[c], "middle", "tick");
    }
  }
  out += "<line class=\"axisline\" x1=\"" + std::to_string(kLeft) + "\" x2=\"" + std::to_string(kWidth - kRight) +
         "\" y1=\"" + std::to_string(kTop + kPlotHeight) + "\" y2=\"" + std::to_string(kTop + kPlotHeight) + "\"/>";
  out += Legend(series, kTop + kPlotHeight + bottom - 20);
  return out + "</svg>";
}

std::string LineChartSvg(const std::string& title, const std::vector<double>& x,
                         const std::vector<std::string>& x_labels, const std::vector<Series>& series,
                         const std::string& x_label, const std::string& y_label) {
  const int height = kTop + kPlotHeight + kBottom;
  std::string out = Open(title, height);
  double top_value = 0;
  for (const Series& s : series)
    for (const auto& v : s.values)
      if (v && std::isfinite(*v)) top_value = std::max(top_value, *v);
  const double top = YAxis(top_value, y_label, &out);
  std::vector<double> logs;  // log2 of the positive x: the x axis's range
  for (double v : x)
    if (v > 0) logs.push_back(std::log2(v));
  const double lo = logs.empty() ? 0 : *std::min_element(logs.begin(), logs.end());
  const double hi = logs.empty() ? 0 : *std::max_element(logs.begin(), logs.end());
  const double span = hi > lo ? hi - lo : 1;
  const double plot_width = kWidth - kLeft - kRight - 40;
  const auto px = [&](double v) { return kLeft + 20 + plot_width * (std::log2(v) - lo) / span; };
  const auto py = [&](double v) { return kTop + kPlotHeight * (1 - std::max(0.0, v) / top); };
  for (size_t i = 0; i < x.size(); ++i) {
    if (!(x[i] > 0)) continue;
    out += Text(px(x[i]), kTop + kPlotHeight + 16, i < x_labels.size() ? x_labels[i] : Label(x[i]), "middle", "tick");
  }
  out += Text(kLeft + plot_width / 2, kTop + kPlotHeight + 32, x_label, "middle", "axis");
  for (const Series& s : series) {
    std::string points;
    for (size_t i = 0; i < x.size() && i < s.values.size(); ++i) {
      if (!(x[i] > 0) || !s.values[i] || !std::isfinite(*s.values[i])) continue;
      points += Num(px(x[i])) + "," + Num(py(*s.values[i])) + " ";
      out += "<circle cx=\"" + Num(px(x[i])) + "\" cy=\"" + Num(py(*s.values[i])) + "\" r=\"4\" fill=\"" + s.color +
             "\"><title>" + HtmlEscape(s.name + ": " + Label(*s.values[i])) + "</title></circle>";
    }
    out += "<polyline fill=\"none\" stroke=\"" + s.color + "\" stroke-width=\"2\"" +
           (s.dashed ? " stroke-dasharray=\"6 4\"" : "") + " points=\"" + points + "\"/>";
  }
  out += Legend(series, kTop + kPlotHeight + 55);
  return out + "</svg>";
}

}  // namespace mlreport
