// report_text.cc: the terminal summary (report_text.h).
#include "report/report_text.h"

#include "report/entry_points.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <string>
#include <tuple>

namespace mlreport {
namespace {

void Line(std::string* out, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
// Appends one formatted line, however long (a line of 16 long host names is
// not cut).  Its %s arguments hold no NUL: the reader escapes the report's
// text (report_reader.h).
void Line(std::string* out, const char* fmt, ...) {
  va_list ap, again;
  va_start(ap, fmt);
  va_copy(again, ap);
  const int n = std::vsnprintf(nullptr, 0, fmt, ap);
  va_end(ap);
  if (n > 0) {
    std::string buf(static_cast<size_t>(n) + 1, '\0');
    std::vsnprintf(buf.data(), buf.size(), fmt, again);
    out->append(buf.data(), static_cast<size_t>(n));
  }
  va_end(again);
  *out += '\n';
}

std::string Bar(double share, int width) {
  return std::string(static_cast<size_t>(std::clamp(static_cast<int>(share * width + 0.5), 0, width)), '#');
}

// `s` padded with spaces to `width` characters (UTF-8 aware: "–" is one),
// on the right, or with `left` on the left (right-aligned).
std::string Pad(const std::string& s, size_t width, bool left = false) {
  size_t chars = 0;
  for (unsigned char c : s) chars += (c & 0xC0) != 0x80;
  if (chars >= width) return s;
  const std::string spaces(width - chars, ' ');
  return left ? spaces + s : s + spaces;
}

std::string Opt(const std::optional<double>& v, const char* fmt) { return v ? FormatNumber(fmt, *v) : "-"; }

// The verdicts, one a line, each marked by its level.
void VerdictLines(const std::vector<Verdict>& verdicts, std::string* out) {
  constexpr const char* kMarks[] = {"ok", "--", "!!"};  // in VerdictLevel's order
  Line(out, "  verdicts:");
  for (const Verdict& v : verdicts) Line(out, "    %s %s", kMarks[static_cast<int>(v.level)], v.text.c_str());
}

// The job's runs side by side, oldest first, this run last.
void HistoryLines(const HistoryComparison& h, std::string* out) {
  if (!h.known) {
    if (!h.note.empty()) Line(out, "  job history: %s", h.note.c_str());
    return;
  }
  Line(out, "  job history of %s (%zu runs, this one last; * the fastest):", h.runs.back().job_key.c_str(),
       h.runs.size());
  Line(out, "    %-21s %5s %5s %4s %10s %8s %9s %6s  %s", "started (UTC)", "nodes", "ranks", "ppg", "wall s", "compute",
       "allreduce", "wait", "algorithms");
  for (size_t i = 0; i < h.runs.size(); ++i) {
    const mla::JobRun& r = h.runs[i];
    const double w = r.wall_s > 0 ? r.wall_s : 1;
    Line(out, "    %-20s%s %5d %5d %4d %10.3f %8s %9s %6s  %s", r.started_utc.c_str(), i == h.best ? "*" : " ", r.nodes,
         r.ranks, r.ranks_per_gpu, r.wall_s, Percent(r.compute_s / w).c_str(), Percent(r.allreduce_s / w).c_str(),
         Percent(r.wait_s / w).c_str(), r.algorithms.c_str());
  }
}

// The size bins, one line each, the algorithm column as wide as its longest
// label.
void BinsTable(const JobAnalysis& a, std::string* out) {
  if (a.bins.empty()) return;
  Line(out, "  sizes (busbw GB/s: achieved, profile's expectation, system MPI per the profile):");
  int width = 11;  // the algorithm column: "passthrough", or a longer "passthrough mpi=NAME"
  for (const BinAnalysis& b : a.bins) width = std::max(width, static_cast<int>(b.algo.size()));
  Line(out, "    %-16s %-*s %9s %7s %7s %10s %9s %9s %9s %10s  %s", "bin", width, "algorithm", "calls", "calls", "time",
       "us/call", "busbw", "expected", "mpi", "saved s", "priced");
  for (const BinAnalysis& b : a.bins) {
    Line(out, "    %s %-*s %9lld %7s %7s %10.1f %9.3g %9s %9s %10s  %s", Pad(BinLabel(b, true), 16).c_str(), width,
         b.algo.c_str(), static_cast<long long>(b.calls), Percent(b.calls_share).c_str(), Percent(b.time_share).c_str(),
         b.per_call_us, b.busbw_gbs, Opt(b.expected_busbw_gbs, "%.3g").c_str(), Opt(b.mpi_busbw_gbs, "%.3g").c_str(),
         Opt(b.saved_s, "%.3g").c_str(), PriceNote(b).c_str());
  }
}

void Job(const JobReport& r, const JobAnalysis& a, std::string* out) {
  Line(out, "%s: job %s (id %s), %d rank(s) on %d node(s), %d GPU(s), started %s, libmlallreduce %s", r.path.c_str(),
       r.job_name.c_str(), r.job_id.c_str(), r.ranks, r.nodes, r.gpus, r.started_utc.c_str(),
       r.library_version.c_str());
  if (!r.hosts.empty()) {
    constexpr size_t kHostsShown = 16;
    std::string hosts;
    for (size_t i = 0; i < r.hosts.size() && i < kHostsShown; ++i) hosts += (i ? ", " : "") + r.hosts[i];
    if (r.hosts.size() > kHostsShown) hosts += " and " + std::to_string(r.hosts.size() - kHostsShown) + " more";
    Line(out, "  hosts: %s", hosts.c_str());
  }
  Line(out, "  profile: %s; MULTILANE_ALGO=%s", r.profile_text ? "in force" : "none",
       r.settings_algo.empty() ? "auto" : r.settings_algo.c_str());
  const std::string used = EntryPointsUsed(r);
  if (!used.empty()) Line(out, "  entry points (rank 0): %s", used.c_str());
  const std::string not_served = EntryPointsNotServed(r);
  if (!not_served.empty()) Line(out, "  not served by multilane: %s", not_served.c_str());
  const std::string unsupported = UnsupportedCalls(r);
  if (!unsupported.empty()) Line(out, "  unsupported (rank 0): %s", unsupported.c_str());
  const TimeSplit& t = a.split;
  Line(out, "  time split (mean over ranks, wall %.3f s):", t.wall_s);
  for (const auto& [part, s, share] :
       {std::tuple<const char*, double, double>{"computation", t.compute_s, t.compute_share},
        {"allreduce", t.allreduce_s, t.allreduce_share},
        {"waiting", t.wait_s, t.wait_share}})
    Line(out, "    %-12s %10.3f s %7s  %s", part, s, Percent(share).c_str(), Bar(share, 40).c_str());
  if (t.setup_s > 0)
    Line(out,
         "    (of the allreduce time, %.3f s was multilane's one-time setup in the first calls: the CUDA module, "
         "communicator layouts; the size bins leave it out)",
         t.setup_s);
  BinsTable(a, out);
  const Savings& s = a.savings;
  if (s.known)
    Line(out, "  multilane saved %s%.3f s (%s of the wall time, %s as fast) on %d of %d bin(s) with system MPI times",
         s.capped ? "at least " : "", s.saved_s, Percent(s.share_of_wall).c_str(), Times(s.job_speedup).c_str(),
         s.bins_known, s.bins_total);
  else
    Line(out, "  multilane saved: unknown (%s)",
         !r.profile_text      ? "no profile in force"
         : !s.why_not.empty() ? s.why_not.c_str()
                              : "no system MPI times in the profile");
  if (a.layout.known) {
    std::string per;
    for (const auto& [ppg, us] : a.layout.predicted_us)
      per += (per.empty() ? "" : ", ") + std::to_string(ppg) + ": " + FormatNumber("%.4g s", us * 1e-6);
    Line(out, "  ranks per GPU by the profile (tuned time of the job's device calls): %s; ran %d, fastest %d",
         per.c_str(), a.layout.job_ppg, a.layout.best_ppg);
  }
  if (a.prediction_possible) {
    const BetweenNodes& b = a.between_nodes;
    Line(out, "  scaling prediction (strong scaling; compute and waiting / k, allreduce x growth):");
    Line(out, "    step between nodes: %s of the allreduce time (%s: %s)", Percent(b.share).c_str(), b.basis.c_str(),
         b.note.c_str());
    for (const PredictionPoint& p : a.prediction) {
      std::string mpi = p.speedup_system_mpi ? ", with the system MPI " + Times(*p.speedup_system_mpi) : "";
      Line(out, "    %s the %s (%d): allreduce x %.3f, %.3f s, speedup %s, efficiency %s%s", Times(p.factor).c_str(),
           a.scale_unit.c_str(), p.scale, p.allreduce_growth, p.time_s, Times(p.speedup).c_str(),
           Percent(p.efficiency).c_str(), mpi.c_str());
    }
  } else {
    Line(out, "  scaling prediction: none (%s)", a.prediction_note.c_str());
  }
  const EnergyAnalysis& e = a.energy;
  if (e.measured) {
    Line(out, "  energy: %s on %d GPU(s), mean power %.4g W%s; about %s while in allreduce or waiting",
         Joules(e.energy_j).c_str(), e.gpus, e.mean_power_w,
         e.mean_utilization_pct ? (", mean utilisation " + Percent(*e.mean_utilization_pct / 100)).c_str() : "",
         Joules(e.communication_energy_j).c_str());
  } else {
    Line(out, "  energy: not measured (no GPU samples)");
  }
  HistoryLines(a.history, out);
  VerdictLines(a.verdicts, out);
}

}  // namespace

std::string FormatReportText(const ReportSet& set) {
  std::string out;
  for (size_t i = 0; i < set.jobs.size(); ++i) {
    if (i) out += "\n";
    Job(set.reports[i], set.jobs[i], &out);
  }
  for (const ScalingSeries& s : set.series) {
    out += "\n";
    Line(&out, "measured scaling of job %s over %zu runs:", s.job_name.c_str(), s.points.size());
    Line(&out, "    %8s %10s %9s %10s %10s %10s", s.scale_unit.c_str(), "wall s", "ideal", "speedup", "efficiency",
         "predicted");
    for (const SeriesPoint& p : s.points)
      Line(&out, "    %8d %10.3f %s %s %s %s", p.scale, p.wall_s, Pad(Times(p.factor), 9, true).c_str(),
           Pad(Times(p.speedup), 10, true).c_str(), Pad(Percent(p.efficiency), 10, true).c_str(),
           Pad(p.predicted_speedup ? Times(*p.predicted_speedup) : "-", 10, true).c_str());
    VerdictLines(s.verdicts, &out);
  }
  return out;
}

}  // namespace mlreport
