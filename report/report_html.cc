// report_html.cc: the self-contained report page (report_html.h).
#include "report/report_html.h"

#include "report/entry_points.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "report/svg_chart.h"

namespace mlreport {
namespace {

constexpr char kCompute[] = "#4e79a7";
constexpr char kAllreduce[] = "#e15759";
constexpr char kWaiting[] = "#f28e2b";
constexpr char kExpected[] = "#59a14f";
constexpr char kMpi[] = "#9c755f";
constexpr char kIdeal[] = "#bab0ac";

constexpr char kStyle[] = R"(
body { font: 15px/1.45 system-ui, sans-serif; color: #222; margin: 24px auto; max-width: 920px; padding: 0 12px; }
h1 { font-size: 24px; } h2 { font-size: 20px; margin-top: 36px; border-bottom: 2px solid #ddd; }
h3 { font-size: 16px; margin-top: 22px; }
table { border-collapse: collapse; margin: 6px 0 12px; display: block; max-width: 100%; overflow-x: auto; }
td, th { padding: 3px 10px; border-bottom: 1px solid #eee; text-align: right; white-space: nowrap; }
table.facts td { white-space: normal; overflow-wrap: anywhere; }
table.bins td, table.bins th { padding: 3px 6px; } td.price { white-space: normal; }
table.facts td.profile { white-space: pre-wrap; font: 12px/1.4 ui-monospace, monospace; }
th { background: #f5f5f5; white-space: normal; } td.l, th.l { text-align: left; }
ul.verdicts { list-style: none; padding: 0; }
li.verdict { padding: 6px 10px; margin: 4px 0; border-left: 5px solid #999; background: #f7f7f7; }
li.good { border-color: #59a14f; } li.warn { border-color: #e15759; background: #fdf0f0; }
li.note { border-color: #4e79a7; }
svg.chart { display: block; max-width: 100%; height: auto; }
svg text { font: 12px system-ui, sans-serif; fill: #333; } svg text.inbar { fill: #fff; font-weight: bold; }
svg line.grid { stroke: #e4e4e4; } svg line.axisline { stroke: #666; }
.meta { color: #666; } code { background: #f3f3f3; padding: 0 3px; }
)";

// The machine value: enough digits to compare with --json exactly enough.
std::string Value(double v) { return FormatNumber("%.10g", v); }

class Page {
 public:
  void Raw(const std::string& s) { html_ += s; }
  // `before`, `text` escaped, `after`: an element around outside text.
  void Wrap(const std::string& before, const std::string& text, const std::string& after) {
    html_ += before + HtmlEscape(text) + after;
  }
  // <TAG id="PREFIX-NAME" data-figure="NAME" data-value="V">SHOWN</TAG>
  void Figure(const char* tag, const std::string& prefix, const std::string& name, double value,
              const std::string& shown) {
    MaybeFigure(tag, prefix, name, value, [&shown](double) { return shown; });
  }
  // A figure that may be unknown: data-value="" and "-" shown; else show(value).
  template <typename Show>
  void MaybeFigure(const char* tag, const std::string& prefix, const std::string& name,
                   const std::optional<double>& value, Show show) {
    html_ += "<" + std::string(tag) + " id=\"" + HtmlEscape(prefix + "-" + name) + "\" data-figure=\"" +
             HtmlEscape(name) + "\" data-value=\"" + (value ? Value(*value) : "") + "\">" +
             (value ? HtmlEscape(show(*value)) : "-") + "</" + tag + ">";
  }
  // The same, shown as printf format `fmt` says.
  void MaybeFigure(const char* tag, const std::string& prefix, const std::string& name,
                   const std::optional<double>& value, const char* fmt) {
    MaybeFigure(tag, prefix, name, value, [fmt](double v) { return FormatNumber(fmt, v); });
  }
  std::string& html() { return html_; }

 private:
  std::string html_;
};

void Verdicts(Page* p, const std::vector<Verdict>& verdicts) {
  p->Raw("<ul class=\"verdicts\">");
  for (const Verdict& v : verdicts) {
    p->Raw(std::string("<li class=\"verdict ") + LevelName(v.level) + "\" data-id=\"" + HtmlEscape(v.id) +
           "\" data-level=\"" + LevelName(v.level) + "\">");
    p->Wrap("", v.text, "</li>");
  }
  p->Raw("</ul>");
}

void Facts(Page* p, const JobReport& r) {
  p->Raw("<table class=\"facts\">");
  const auto row = [&](const std::string& k, const std::string& v) {
    p->Wrap("<tr><th class=\"l\">", k, "</th>");
    p->Wrap("<td class=\"l\">", v, "</td></tr>");
  };
  row("file", r.path);
  row("job", r.job_name + " (id " + r.job_id + "), started " + r.started_utc);
  row("layout", std::to_string(r.ranks) + " rank(s) on " + std::to_string(r.nodes) + " node(s), " +
                    std::to_string(r.gpus) + " GPU(s), " + std::to_string(r.ranks_per_gpu) + " rank(s) per GPU");
  std::string hosts;
  for (const std::string& h : r.hosts) hosts += (hosts.empty() ? "" : ", ") + h;
  row("hosts", hosts.empty() ? "-" : hosts);
  row("libmlallreduce", r.library_version + ", MULTILANE_ALGO=" + (r.settings_algo.empty() ? "auto" : r.settings_algo));
  // The profile one entry a line (its one-line form separates them by ';').
  std::string profile = r.profile_text ? *r.profile_text : "none";
  for (size_t at = profile.find(';'); at != std::string::npos; at = profile.find(';', at)) {
    profile.replace(at, profile.compare(at, 2, "; ") == 0 ? 2 : 1, "\n");
  }
  p->Wrap("<tr><th class=\"l\">profile</th><td class=\"l profile\">", profile, "</td></tr>");
  const std::string used = EntryPointsUsed(r);
  if (!used.empty()) row("entry points (rank 0)", used);
  const std::string not_served = EntryPointsNotServed(r);
  if (!not_served.empty()) row("not served by multilane", not_served);
  const std::string unsupported = UnsupportedCalls(r);
  if (!unsupported.empty()) row("unsupported (rank 0)", unsupported);
  p->Raw("</table>");
}

void TimeSplitPart(Page* p, const std::string& id, const TimeSplit& t) {
  p->Raw("<h3>Where the time went</h3>");
  p->Raw(StackedBarSvg("time split", {{"computation", t.compute_share, kCompute},
                                      {"allreduce", t.allreduce_share, kAllreduce},
                                      {"waiting for the slowest rank", t.wait_share, kWaiting}}));
  p->Raw("<table class=\"split\"><tr><th class=\"l\">part</th><th>seconds (mean over ranks)</th><th>share</th></tr>");
  const auto row = [&](const char* label, const char* name, double s, double share) {
    p->Raw(std::string("<tr><td class=\"l\">") + label + "</td>");
    p->Figure("td", id, std::string("time-") + name, s, FormatNumber("%.3f s", s));
    p->Figure("td", id, std::string("share-") + name, share, Percent(share));
    p->Raw("</tr>");
  };
  row("computation", "compute", t.compute_s, t.compute_share);
  row("allreduce (waiting excluded)", "allreduce", t.allreduce_s, t.allreduce_share);
  row("waiting", "waiting", t.wait_s, t.wait_share);
  p->Raw("<tr><td class=\"l\">wall</td>");
  p->Figure("td", id, "time-wall", t.wall_s, FormatNumber("%.3f s", t.wall_s));
  p->Raw("<td>100 %</td></tr></table>");
}

void BinsPart(Page* p, const std::string& id, const JobAnalysis& a) {
  if (a.bins.empty()) {
    p->Raw("<h3>Message sizes</h3><p>No allreduce call was recorded.</p>");
    return;
  }
  bool both_kinds = false;
  for (const BinAnalysis& b : a.bins) both_kinds = both_kinds || b.memory != a.bins.front().memory;
  std::vector<std::string> labels;
  Series calls{"share of calls", kCompute, {}, false}, time{"share of allreduce time", kAllreduce, {}, false};
  Series achieved{"achieved busbw", kAllreduce, {}, false}, expected{"profile's expectation", kExpected, {}, false},
      mpi{"system MPI (profile)", kMpi, {}, false};
  for (const BinAnalysis& b : a.bins) {
    labels.push_back(BinLabel(b, both_kinds));
    calls.values.push_back(b.calls_share * 100);
    time.values.push_back(b.time_share * 100);
    achieved.values.push_back(b.busbw_gbs);
    expected.values.push_back(b.expected_busbw_gbs);
    mpi.values.push_back(b.mpi_busbw_gbs);
  }
  p->Raw("<h3>Message sizes</h3>");
  p->Raw(GroupedBarsSvg("size histogram", labels, {calls, time}, "% of calls / of allreduce time"));
  p->Raw("<h3>Bus bandwidth per size</h3>");
  p->Raw(GroupedBarsSvg("busbw per size", labels, {achieved, expected, mpi}, "busbw GB/s", /*log_y=*/true));
  p->Raw(
      "<table class=\"bins\"><tr><th class=\"l\">memory</th><th class=\"l\">size</th><th class=\"l\">algorithm</th>"
      "<th>calls</th><th>% calls</th><th>% time</th><th>us per call</th><th>busbw GB/s</th>"
      "<th>expected GB/s</th><th>system MPI GB/s</th><th>saved s</th><th class=\"l\">priced</th></tr>");
  for (size_t i = 0; i < a.bins.size(); ++i) {
    const BinAnalysis& b = a.bins[i];
    const std::string bid = id + "-bin" + std::to_string(i);
    p->Raw("<tr class=\"bin\" data-memory=\"" + HtmlEscape(b.memory) + "\" data-from=\"" + std::to_string(b.from) +
           "\" data-to=\"" + (b.to ? std::to_string(*b.to) : std::string()) + "\"><td class=\"l\">");
    p->Wrap("", b.memory, "</td>");
    p->Wrap("<td class=\"l\">", BinLabel(b, false), "</td>");
    p->Wrap("<td class=\"l\">", b.algo, "</td>");
    p->Figure("td", bid, "calls", static_cast<double>(b.calls), std::to_string(b.calls));
    p->Figure("td", bid, "calls-share", b.calls_share, Percent(b.calls_share));
    p->Figure("td", bid, "time-share", b.time_share, Percent(b.time_share));
    p->Figure("td", bid, "per-call-us", b.per_call_us, FormatNumber("%.1f", b.per_call_us));
    p->Figure("td", bid, "busbw", b.busbw_gbs, FormatNumber("%.3g", b.busbw_gbs));
    p->MaybeFigure("td", bid, "expected-busbw", b.expected_busbw_gbs, "%.3g");
    p->MaybeFigure("td", bid, "mpi-busbw", b.mpi_busbw_gbs, "%.3g");
    p->MaybeFigure("td", bid, "saved-s", b.saved_s, "%.3g");
    // How the profile's figures were priced (docs/report.md): measured,
    // interpolated, extrapolated, or the entry's one time (older profiles).
    p->Wrap("<td class=\"l price\" id=\"" + bid + "-price\" data-basis=\"" + HtmlEscape(b.price_basis) + "\">",
            PriceNote(b), "</td></tr>");
  }
  p->Raw("</table>");
}

void SavingsPart(Page* p, const std::string& id, const Savings& s) {
  p->Raw("<h3>What multilane saved</h3>");
  if (!s.known) {
    p->Raw("<p id=\"" + id + "-saved-unknown\">Unknown: no bin has a system MPI time in the profile.</p>");
    return;
  }
  p->Raw("<table class=\"savings\"><tr><th class=\"l\">allreduce time saved against the system MPI's tuned times</th>");
  p->Figure("td", id, "saved-s", s.saved_s, FormatNumber("%.3f s", s.saved_s));
  p->Raw("</tr><tr><th class=\"l\">share of the wall time</th>");
  p->Figure("td", id, "saved-share", s.share_of_wall, Percent(s.share_of_wall));
  p->Raw("</tr><tr><th class=\"l\">the job ran as fast as</th>");
  p->Figure("td", id, "saved-speedup", s.job_speedup, Times(s.job_speedup));
  p->Raw("</tr><tr><th class=\"l\">bins with system MPI times</th><td>" + std::to_string(s.bins_known) + " of " +
         std::to_string(s.bins_total) + "</td></tr></table>");
}

// Adds `points` to a speedup chart (x: factor, label: scale): its ideal (the factor), speedup and `other` lines.
template <typename Point, typename Other>
void AddSpeedups(const std::vector<Point>& points, Other Point::*other, std::vector<double>* x,
                 std::vector<std::string>* labels, std::vector<Series>* lines) {
  for (const Point& pt : points) {
    x->push_back(pt.factor);
    labels->push_back(std::to_string(pt.scale));
    (*lines)[0].values.push_back(pt.factor);
    (*lines)[1].values.push_back(pt.speedup);
    (*lines)[2].values.push_back(pt.*other);
  }
}

void PredictionPart(Page* p, const std::string& id, const JobAnalysis& a) {
  p->Raw("<h3>Scaling prediction</h3>");
  if (!a.prediction_possible) {
    p->Wrap("<p id=\"" + id + "-prediction-none\">No prediction: ", a.prediction_note, "</p>");
    return;
  }
  std::vector<double> x = {1};
  std::vector<std::string> labels = {std::to_string(a.scale)};
  const std::optional<double> mpi_now =
      a.savings.known ? std::optional<double>(1 / a.savings.job_speedup) : std::nullopt;
  std::vector<Series> lines = {{"ideal", kIdeal, {1.0}, true},
                               {"predicted (multilane)", kAllreduce, {1.0}, false},
                               {"predicted (system MPI)", kMpi, {mpi_now}, true}};
  AddSpeedups(a.prediction, &PredictionPoint::speedup_system_mpi, &x, &labels, &lines);
  if (!a.savings.known) lines.pop_back();
  p->Raw(LineChartSvg("scaling prediction", x, labels, lines, a.scale_unit, "speedup over this run"));
  const BetweenNodes& b = a.between_nodes;
  p->Raw(
      "<p class=\"meta\">Strong scaling: computation and waiting divide by k; each allreduce grows by "
      "(1 − s) × the ring factor 2(kn−1)/kn ÷ 2(n−1)/n of the " +
      a.scale_unit + " (n = " + std::to_string(a.scale) + " now) + s × that of the machines (" +
      std::to_string(b.nodes) + " now), with s the step between nodes: ");
  p->Figure("span", id, "between-nodes-share", b.share, Percent(b.share));
  p->Wrap(" (" + HtmlEscape(b.basis) + ": ", b.note,
          "). The system MPI curve adds what multilane saved back to the allreduce time.</p>");
  p->Raw("<table class=\"prediction\"><tr><th>" + a.scale_unit +
         "</th><th>factor</th><th>ring factor</th><th>node ring factor</th><th>allreduce growth</th>"
         "<th>predicted time</th><th>speedup</th><th>efficiency</th><th>speedup with the system MPI</th></tr>");
  for (const PredictionPoint& pt : a.prediction) {
    const std::string pid = id + "-predict-" + std::to_string(static_cast<int>(pt.factor)) + "x";
    p->Raw("<tr class=\"predict\" data-factor=\"" + Value(pt.factor) + "\"><td>" + std::to_string(pt.scale) +
           "</td><td>" + HtmlEscape(Times(pt.factor)) + "</td>");
    p->Figure("td", pid, "ring-factor", pt.ring_factor, FormatNumber("%.3f", pt.ring_factor));
    p->Figure("td", pid, "node-ring-factor", pt.node_ring_factor, FormatNumber("%.3f", pt.node_ring_factor));
    p->Figure("td", pid, "growth", pt.allreduce_growth, FormatNumber("%.3f", pt.allreduce_growth));
    p->Figure("td", pid, "time", pt.time_s, FormatNumber("%.3f s", pt.time_s));
    p->Figure("td", pid, "speedup", pt.speedup, Times(pt.speedup));
    p->Figure("td", pid, "efficiency", pt.efficiency, Percent(pt.efficiency));
    p->MaybeFigure("td", pid, "speedup-system-mpi", pt.speedup_system_mpi, Times);
    p->Raw("</tr>");
  }
  p->Raw("</table>");
}

void EnergyPart(Page* p, const std::string& id, const JobReport& r, const EnergyAnalysis& e) {
  p->Raw("<h3>Energy</h3>");
  if (!e.measured) {
    p->Raw("<p id=\"" + id + "-energy-none\">Not measured: no GPU was sampled (host buffers only, or no NVML).</p>");
    return;
  }
  std::vector<std::string> labels;
  Series energy{"energy kJ", kCompute, {}, false};
  for (const ReportGpu& g : r.gpus_sampled) {
    labels.push_back(g.host + ":" + std::to_string(g.index));
    energy.values.push_back(g.energy_j ? std::optional<double>(*g.energy_j / 1000) : std::nullopt);
  }
  p->Raw(GroupedBarsSvg("energy per GPU", labels, {energy}, "kJ"));
  p->Raw("<table class=\"energy\"><tr><th class=\"l\">energy of " + std::to_string(e.gpus) + " GPU(s)</th>");
  p->Figure("td", id, "energy-j", e.energy_j, Joules(e.energy_j));
  p->Raw("</tr><tr><th class=\"l\">mean board power per GPU</th>");
  p->Figure("td", id, "power-mean-w", e.mean_power_w, FormatNumber("%.4g W", e.mean_power_w));
  p->Raw("</tr><tr><th class=\"l\">mean GPU utilisation</th>");
  p->MaybeFigure("td", id, "utilization-mean-pct", e.mean_utilization_pct, "%.1f %%");
  p->Raw("</tr><tr><th class=\"l\">while in allreduce or waiting (by time share)</th>");
  p->Figure("td", id, "energy-communication-j", e.communication_energy_j, Joules(e.communication_energy_j));
  p->Raw("</tr></table>");
}

// This run beside the job's earlier runs: the split of each as grouped bars
// and a table, oldest first, this run last.
void HistoryPart(Page* p, const std::string& id, const HistoryComparison& h) {
  p->Raw("<h3>Earlier runs of this job</h3>");
  if (!h.known) {
    p->Wrap("<p id=\"" + id + "-history-none\">None: ", h.note.empty() ? "no job history was read" : h.note, "</p>");
    return;
  }
  std::vector<std::string> labels;
  Series compute{"computation s", kCompute, {}, false}, allreduce{"allreduce s", kAllreduce, {}, false},
      waiting{"waiting s", kWaiting, {}, false};
  for (size_t i = 0; i < h.runs.size(); ++i) {
    const mla::JobRun& r = h.runs[i];
    labels.push_back((i + 1 == h.runs.size() ? "this run" : r.started_utc.substr(0, 16)) + ", " +
                     std::to_string(r.ranks_per_gpu) + "/GPU");
    compute.values.push_back(r.compute_s);
    allreduce.values.push_back(r.allreduce_s);
    waiting.values.push_back(r.wait_s);
  }
  p->Raw(GroupedBarsSvg("the job's runs", labels, {compute, allreduce, waiting}, "seconds"));
  p->Raw(
      "<table class=\"history\"><tr><th class=\"l\">started (UTC)</th><th>nodes</th><th>ranks</th>"
      "<th>ranks per GPU</th><th>wall</th><th>computation</th><th>allreduce</th><th>waiting</th>"
      "<th class=\"l\">algorithms</th></tr>");
  for (size_t i = 0; i < h.runs.size(); ++i) {
    const mla::JobRun& r = h.runs[i];
    const std::string rid = id + "-run" + std::to_string(i);
    p->Raw(std::string("<tr") + (i == h.best ? " class=\"best\"" : "") + "><td class=\"l\">");
    p->Wrap("", r.started_utc + (i + 1 == h.runs.size() ? " (this run)" : ""), "</td>");
    p->Raw("<td>" + std::to_string(r.nodes) + "</td><td>" + std::to_string(r.ranks) + "</td><td>" +
           std::to_string(r.ranks_per_gpu) + "</td>");
    p->Figure("td", rid, "wall", r.wall_s, FormatNumber("%.3f s", r.wall_s));
    p->Figure("td", rid, "compute", r.compute_s, FormatNumber("%.3f s", r.compute_s));
    p->Figure("td", rid, "allreduce", r.allreduce_s, FormatNumber("%.3f s", r.allreduce_s));
    p->Figure("td", rid, "wait", r.wait_s, FormatNumber("%.3f s", r.wait_s));
    p->Wrap("<td class=\"l\">", r.algorithms, "</td></tr>");
  }
  p->Raw("</table>");
}

void JobSection(Page* p, size_t index, const JobReport& r, const JobAnalysis& a) {
  const std::string id = "j" + std::to_string(index);
  p->Raw("<section class=\"job\" id=\"" + id + "\" data-file=\"" + HtmlEscape(r.path) + "\" data-job-name=\"" +
         HtmlEscape(r.job_name) + "\" data-scale=\"" + std::to_string(a.scale) + "\"><h2>Job ");
  p->Wrap("", r.job_name + " — " + std::to_string(a.scale) + " " + a.scale_unit, "</h2>");
  Facts(p, r);
  p->Raw("<h3>Verdicts</h3>");
  Verdicts(p, a.verdicts);
  TimeSplitPart(p, id, a.split);
  BinsPart(p, id, a);
  SavingsPart(p, id, a.savings);
  PredictionPart(p, id, a);
  EnergyPart(p, id, r, a.energy);
  HistoryPart(p, id, a.history);
  p->Raw("</section>");
}

void SeriesSection(Page* p, size_t index, const ScalingSeries& s) {
  const std::string id = "s" + std::to_string(index);
  p->Raw("<section class=\"series\" id=\"" + id + "\" data-job-name=\"" + HtmlEscape(s.job_name) +
         "\"><h2>Measured scaling of ");
  p->Wrap("", s.job_name, "</h2>");
  Verdicts(p, s.verdicts);
  std::vector<double> x;
  std::vector<std::string> labels;
  std::vector<Series> lines = {{"ideal", kIdeal, {}, true},
                               {"measured", kAllreduce, {}, false},
                               {"predicted from the smallest run", kExpected, {}, true}};
  AddSpeedups(s.points, &SeriesPoint::predicted_speedup, &x, &labels, &lines);
  p->Raw(LineChartSvg("measured scaling", x, labels, lines, s.scale_unit, "speedup over the smallest run"));
  p->Raw("<table class=\"series-points\"><tr><th>" + s.scale_unit +
         "</th><th>wall s</th><th>ideal</th><th>speedup</th><th>efficiency</th><th>predicted</th>"
         "<th>allreduce share</th></tr>");
  for (size_t i = 0; i < s.points.size(); ++i) {
    const SeriesPoint& pt = s.points[i];
    const std::string pid = id + "-p" + std::to_string(i);
    p->Raw("<tr class=\"series-point\" data-scale=\"" + std::to_string(pt.scale) + "\"><td>" +
           std::to_string(pt.scale) + "</td>");
    p->Figure("td", pid, "wall", pt.wall_s, FormatNumber("%.3f", pt.wall_s));
    p->Figure("td", pid, "factor", pt.factor, Times(pt.factor));
    p->Figure("td", pid, "speedup", pt.speedup, Times(pt.speedup));
    p->Figure("td", pid, "efficiency", pt.efficiency, Percent(pt.efficiency));
    p->MaybeFigure("td", pid, "predicted-speedup", pt.predicted_speedup, Times);
    p->Figure("td", pid, "allreduce-share", pt.allreduce_share, Percent(pt.allreduce_share));
    p->Raw("</tr>");
  }
  p->Raw("</table></section>");
}

}  // namespace

std::string RenderReportHtml(const ReportSet& set) {
  Page p;
  std::string title = "multilane report";
  std::vector<std::string> names;
  for (const JobReport& r : set.reports)
    if (std::find(names.begin(), names.end(), r.job_name) == names.end()) names.push_back(r.job_name);
  for (size_t i = 0; i < names.size(); ++i) title += (i ? ", " : ": ") + names[i];
  p.Wrap("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>", title, "</title><style>");
  p.Raw(kStyle);
  p.Wrap("</style></head><body><h1>", title, "</h1>");
  p.Raw("<p class=\"meta\">" + std::to_string(set.reports.size()) +
        " job report file(s). Figures: means over ranks; shares of the wall time. How to read this page: "
        "docs/report.md of multilane.</p>");
  for (size_t i = 0; i < set.series.size(); ++i) SeriesSection(&p, i, set.series[i]);
  for (size_t i = 0; i < set.jobs.size(); ++i) JobSection(&p, i, set.reports[i], set.jobs[i]);
  p.Raw("</body></html>\n");
  return std::move(p.html());
}

}  // namespace mlreport
