// report_json.cc: the analysis as JSON (report_json.h).
#include "report/report_json.h"

#include "report/entry_points.h"

#include <optional>

#include "vocab/terminal_text.h"

// An unknown figure (an empty std::optional) is null: nlohmann-json 3.11 has
// no serializer of its own for std::optional.
template <typename T>
struct nlohmann::adl_serializer<std::optional<T>> {
  static void to_json(json& j, const std::optional<T>& v) { j = v ? json(*v) : json(nullptr); }
  static void from_json(const json& j, std::optional<T>& v) {
    v = j.is_null() ? std::nullopt : std::optional(j.get<T>());
  }
};

namespace mlreport {

using nlohmann::json;

// The figures whose names in the JSON are their names in the analysis (the
// functions nlohmann-json finds by their type; from_json goes unused).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(TimeSplit, wall_s, compute_s, allreduce_s, wait_s, setup_s, compute_share,
                                   allreduce_share, wait_share, clamped)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Savings, known, saved_s, share_of_wall, job_speedup, bins_known, bins_total, capped,
                                   why_not)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(BetweenNodes, nodes, share, basis, note)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(PredictionPoint, factor, scale, ring_factor, node_ring_factor, allreduce_growth,
                                   time_s, speedup, efficiency, speedup_system_mpi)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(EnergyAnalysis, measured, gpus, energy_j, mean_power_w, mean_utilization_pct,
                                   communication_energy_j)
// A size bin's figures; BinJson adds how its profile was priced.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(BinAnalysis, memory, from, to, calls, mean_message_bytes, algo, choices, time_s,
                                   time_share, transfer_s, transfer_share, calls_share, per_call_us, busbw_gbs, time_us,
                                   mpi_time_us, expected_busbw_gbs, mpi_busbw_gbs, vs_expected, saved_s, too_few_calls)

namespace {

json Verdicts(const std::vector<Verdict>& verdicts) {
  json out = json::array();
  for (const Verdict& v : verdicts) out.push_back({{"id", v.id}, {"level", LevelName(v.level)}, {"text", v.text}});
  return out;
}

// One size bin of the analysis: its figures and how its profile was priced.
json BinJson(const BinAnalysis& b) {
  json j = b;
  // How the profile's figures were priced at mean_message_bytes (docs/report.md).
  j["price"] = b.price_basis.empty()
                   ? json(nullptr)
                   : json{{"basis", b.price_basis}, {"from_bytes", b.priced_from}, {"to_bytes", b.priced_to},
                          {"noise", b.noise},       {"vs_profile", b.vs_profile},  {"off_profile", b.off_profile}};
  return j;
}

// The job's runs under its history key and what changed between them.
json HistoryJson(const HistoryComparison& h) {
  json runs = json::array();
  for (const mla::JobRun& r : h.runs) runs.push_back(JobRunJson(r));
  return {{"known", h.known}, {"note", h.note},       {"key", h.runs.empty() ? std::string() : h.runs.back().job_key},
          {"runs", runs},     {"changes", h.changes}, {"wall_ratio", h.wall_ratio},
          {"paid", h.paid},   {"best", h.best}};
}

// One job: its report's facts and the analysis of them.
json JobJson(const JobReport& r, const JobAnalysis& a) {
  json j;
  j["file"] = mla::EscapeControlBytes(r.path);  // the command line's: the reader escapes the file's own text
  j["job"] = {{"name", r.job_name},      {"id", r.job_id},           {"started_utc", r.started_utc},
              {"ranks", r.ranks},        {"nodes", r.nodes},         {"ranks_per_gpu", r.ranks_per_gpu},
              {"gpus", r.gpus},          {"hosts", r.hosts},         {"library_version", r.library_version},
              {"algo", r.settings_algo}, {"profile", r.profile_text}};
  j["entries"] = json::object();
  for (const ReportEntry& e : r.entries)
    j["entries"][e.name] = {{"label", EntryLabel(e.name)},
                            {"calls", e.calls},
                            {"not_served", e.not_served},
                            {"not_served_why", e.not_served > 0 ? json(EntryNotServedWhy(e.name)) : json(nullptr)}};
  j["unsupported"] = r.unsupported;
  j["scale_unit"] = a.scale_unit;
  j["scale"] = a.scale;
  j["time"] = a.split;
  j["bins"] = json::array();
  for (const BinAnalysis& b : a.bins) j["bins"].push_back(BinJson(b));
  j["savings"] = a.savings;
  const LayoutAdvice& l = a.layout;
  json predicted = json::array();
  for (const auto& [ppg, us] : l.predicted_us) predicted.push_back({{"ranks_per_gpu", ppg}, {"time_us", us}});
  j["ranks_per_gpu"] = {{"known", l.known}, {"note", l.note},       {"job", l.job_ppg},      {"best", l.best_ppg},
                        {"ratio", l.ratio}, {"saved_s", l.saved_s}, {"predicted", predicted}};
  j["history"] = HistoryJson(a.history);
  j["prediction"] = {{"possible", a.prediction_possible},
                     {"note", a.prediction_note},
                     {"between_nodes", a.between_nodes},
                     {"points", a.prediction}};
  j["energy"] = a.energy;
  j["verdicts"] = Verdicts(a.verdicts);
  return j;
}

}  // namespace

json JobRunJson(const mla::JobRun& r) {
  return {{"started_utc", r.started_utc},
          {"run_id", r.run_id},
          {"job_id", r.job_id},
          {"nodes", r.nodes},
          {"ranks", r.ranks},
          {"gpus", r.gpus},
          {"ranks_per_gpu", r.ranks_per_gpu},
          {"algorithms", r.algorithms},
          {"profile_digest", r.profile_digest},
          {"wall_s", r.wall_s},
          {"compute_s", r.compute_s},
          {"allreduce_s", r.allreduce_s},
          {"wait_s", r.wait_s},
          {"energy_j", r.energy_j}};
}

json AnalysisJson(const ReportSet& set) {
  json out = {{"format", "multilane-report-analysis"}, {"version", 1}};
  out["thresholds"] = {
      {"scales_well_efficiency", kScalesWellEfficiency}, {"communication_bound_share", kCommunicationBoundShare},
      {"waiting_high_share", kWaitingHighShare},         {"below_expectation_ratio", kBelowExpectationRatio},
      {"bin_min_time_share", kBinMinTimeShare},          {"verdict_min_calls", kVerdictMinCalls},
      {"slower_than_mpi_margin", kSlowerThanMpiMargin},  {"savings_noticeable_share", kSavingsNoticeableShare},
      {"small_message_bytes", kSmallMessageBytes},       {"small_messages_share", kSmallMessagesShare},
      {"gpu_underused_pct", kGpuUnderusedPct},           {"measured_efficiency_low", kMeasuredEfficiencyLow}};
  out["jobs"] = json::array();
  for (size_t i = 0; i < set.jobs.size(); ++i) out["jobs"].push_back(JobJson(set.reports[i], set.jobs[i]));
  out["series"] = json::array();
  for (const ScalingSeries& s : set.series) {
    json points = json::array();
    for (const SeriesPoint& p : s.points)
      points.push_back({{"file", mla::EscapeControlBytes(set.reports[p.file].path)},
                        {"index", p.file},
                        {"scale", p.scale},
                        {"wall_s", p.wall_s},
                        {"factor", p.factor},
                        {"speedup", p.speedup},
                        {"efficiency", p.efficiency},
                        {"predicted_speedup", p.predicted_speedup},
                        {"allreduce_share", p.allreduce_share}});
    out["series"].push_back({{"job_name", s.job_name},
                             {"scale_unit", s.scale_unit},
                             {"points", points},
                             {"verdicts", Verdicts(s.verdicts)}});
  }
  return out;
}

}  // namespace mlreport
