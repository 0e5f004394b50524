// report_analysis.cc: the figures and verdicts of `multilane report`
// (report_analysis.h; the model is documented in docs/report.md).
#include "report/report_analysis.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "vocab/byte_size.h"
#include "vocab/price.h"
#include "vocab/profile.h"
#include "vocab/terminal_text.h"

namespace mlreport {
namespace {

// "1.2 s", "340 ms", "12 us": a duration for people.
std::string Seconds(double s) {
  const double a = std::fabs(s);
  if (a >= 1) return FormatNumber("%.3g s", s);
  if (a >= 1e-3) return FormatNumber("%.3g ms", s * 1e3);
  return FormatNumber("%.3g us", s * 1e6);
}

std::string Gbs(double v) { return FormatNumber("%.3g GB/s", v); }

TimeSplit Split(const JobReport& r) {
  TimeSplit t;
  t.wall_s = r.wall_s.mean;
  const double in_allreduce = std::min(r.allreduce_s.mean, t.wall_s);
  const double wait = std::min(r.wait_s.mean, in_allreduce);
  t.clamped = in_allreduce < r.allreduce_s.mean || wait < r.wait_s.mean;
  t.wait_s = wait;
  t.allreduce_s = in_allreduce - wait;
  t.setup_s = std::clamp(r.setup_s.mean, 0.0, t.allreduce_s);
  t.compute_s = t.wall_s - in_allreduce;
  if (t.wall_s > 0) {
    t.compute_share = t.compute_s / t.wall_s;
    t.allreduce_share = t.allreduce_s / t.wall_s;
    t.wait_share = t.wait_s / t.wall_s;
  }
  return t;
}

// The calls of `bin` that multilane chose something else than the system
// MPI's default for: its own algorithms and the system algorithms it chose.
int64_t MultilaneCalls(const ReportBin& bin) {
  if (bin.algos.empty()) return bin.profile && bin.profile->algo != "passthrough" ? bin.calls : 0;
  int64_t n = 0;
  for (const auto& [name, calls] : ChoiceCalls(bin))
    if (name != "passthrough") n += calls;
  return std::min(n, bin.calls);
}

// The profile's header value `key` as a number; 0 when absent or not one.
int HeaderInt(const mla::Profile& p, const std::string& key) {
  auto it = p.metadata().find(key);
  int v = 0;
  if (it == p.metadata().end() || std::sscanf(it->second.c_str(), "%d", &v) != 1) return 0;
  return v;
}

// Why the profile's times are not comparable with a job's, or "" when they
// are: a rank count recorded and within kComparableRanks of the job's.
std::string RanksNotComparable(const JobReport& r, const mla::Profile& p) {
  const int ranks = HeaderInt(p, "ranks");
  if (ranks <= 0) return "the profile does not record the rank count it was tuned at (re-tune with this version)";
  if (r.ranks <= 0) return "the job report does not say how many ranks the job ran";
  if (r.ranks * kComparableRanks < ranks || r.ranks > ranks * kComparableRanks)
    return "the profile was tuned on " + std::to_string(ranks) + " ranks and the job ran " + std::to_string(r.ranks) +
           ": its times are not comparable (a factor of " + FormatNumber("%g", kComparableRanks) + " at most)";
  return "";
}

// Why a device entry's times do not hold for the job's ranks per GPU, or "".
std::string PpgNotComparable(const JobReport& r, const mla::Profile& p, const mla::ProfileEntry& e) {
  const int tuned = e.ppg > 0 ? e.ppg : HeaderInt(p, "ranks_per_gpu");
  if (tuned <= 0 || r.ranks_per_gpu <= 0) return "";  // no GPU layout recorded on either side: nothing to compare
  if (tuned != r.ranks_per_gpu)
    return "the profile's device entries were tuned at " + std::to_string(tuned) + " rank(s) per GPU and the job ran " +
           std::to_string(r.ranks_per_gpu);
  return "";
}

// Sets the profile's figures of the bin: its time `time_us` and the system
// MPI's `mpi_time_us` per call (each when > 0), the bandwidths they give, and
// the savings against `mpi_saved_us`, the system MPI's time that they count.
void SetProfileTimes(const ReportBin& b, double bus_factor, double time_us, double mpi_time_us, double mpi_saved_us,
                     BinAnalysis* a) {
  const auto busbw_at = [&](double us) { return a->mean_message_bytes / (us * 1e-6) / 1e9 * bus_factor; };
  if (time_us > 0) {
    a->time_us = time_us;
    if (bus_factor > 0) a->expected_busbw_gbs = busbw_at(time_us);
    if (a->expected_busbw_gbs && a->busbw_gbs > 0) a->vs_expected = a->busbw_gbs / *a->expected_busbw_gbs;
  }
  if (mpi_time_us > 0) {
    a->mpi_time_us = mpi_time_us;
    if (bus_factor > 0) a->mpi_busbw_gbs = busbw_at(mpi_time_us);
    const int64_t by_multilane = MultilaneCalls(b);
    a->saved_s = by_multilane == 0 ? 0.0 : static_cast<double>(by_multilane) * (mpi_saved_us - a->per_call_us) * 1e-6;
  }
}

// Prices the bin from the entry's points (mla::PriceEntry at the mean size,
// the system MPI's times across the entry's layout from mla::SystemCurve):
// the profile's figures, the savings, and whether the job is off the profile
// by more than its noise.
void PriceFromPoints(const ReportBin& b, const mla::Profile& profile, const mla::ProfileEntry& entry, double bus_factor,
                     BinAnalysis* a) {
  const mla::Price price =
      mla::PriceEntry(entry, a->mean_message_bytes, mla::SystemCurve(profile.entries(), entry.kind, entry.ppg));
  a->price_basis = mla::PriceBasisName(price.basis);
  a->priced_from = price.lo_bytes;
  a->priced_to = price.hi_bytes;
  const double noise = price.noise >= 0 ? price.noise : kDefaultProfileNoise;
  a->noise = noise;
  SetProfileTimes(b, bus_factor, price.time_us, price.mpi_time_us, price.mpi_time_us, a);
  if (price.time_us > 0 && a->per_call_us > 0) {
    a->vs_profile = a->per_call_us / price.time_us;
    a->off_profile = *a->vs_profile > 1 + noise || *a->vs_profile < 1 / (1 + noise);
  }
}

// `entry`: the profile's entry that covers the bin, or null.
BinAnalysis AnalyzeBin(const ReportBin& b, int ranks, double total_time, int64_t total_calls,
                       const mla::Profile& profile, const mla::ProfileEntry* entry) {
  BinAnalysis a;
  a.memory = b.memory;
  a.from = b.from;
  a.to = b.to;
  a.calls = b.calls;
  a.time_s = b.time_s.mean;
  a.time_share = total_time > 0 ? b.time_s.mean / total_time : 0;
  a.transfer_s = std::max(0.0, b.time_s.mean - b.wait_s);
  a.calls_share = total_calls > 0 ? static_cast<double>(b.calls) / static_cast<double>(total_calls) : 0;
  a.busbw_gbs = b.busbw_gbs;
  a.algo = MostCalls(b);
  a.choices = ChoiceCalls(b);
  if (a.algo.empty() && b.profile) a.algo = b.profile->algo;
  if (b.calls <= 0) return a;
  a.mean_message_bytes = static_cast<double>(b.bytes) / static_cast<double>(b.calls);
  a.per_call_us = std::max(0.0, b.time_s.max - b.wait_s) / static_cast<double>(b.calls) * 1e6;
  // busbw = algbw x 2(n-1)/n with n the ranks of the bin's communicator
  // (comm_ranks; files without it: the world's).
  const int n = b.comm_ranks > 0 ? b.comm_ranks : ranks;
  const double bus_factor = 2.0 * (n - 1) / std::max(n, 1);
  if (!b.profile) return a;
  if (entry != nullptr && !entry->points.empty() && a.mean_message_bytes > 0) {
    PriceFromPoints(b, profile, *entry, bus_factor, &a);
    return a;
  }
  // A profile without points (pts=): its one time per entry, as before.
  a.price_basis = mla::PriceBasisName(mla::PriceBasis::kEntry);
  const uint64_t measured_bytes = entry ? entry->measured_bytes : 0;
  a.priced_from = a.priced_to = measured_bytes;
  // A lower bound of the system MPI's time at the job's mean message size:
  // time grows with size and at most linearly, so the tuned time scaled
  // down by mean/measured (never up) is at most what the MPI would take.
  const double mpi_us = b.profile->mpi_time_us.value_or(0);
  const double scale_down = measured_bytes > 0 && a.mean_message_bytes < static_cast<double>(measured_bytes)
                                ? a.mean_message_bytes / static_cast<double>(measured_bytes)
                                : 1;
  SetProfileTimes(b, bus_factor, b.profile->time_us.value_or(0), mpi_us, mpi_us * scale_down, &a);
  return a;
}

EnergyAnalysis Energy(const JobReport& r, const TimeSplit& split) {
  EnergyAnalysis e;
  double power = 0, util = 0;
  int with_power = 0, with_util = 0;
  for (const ReportGpu& g : r.gpus_sampled) {
    if (g.energy_j) {
      e.measured = true;
      e.energy_j += *g.energy_j;
      ++e.gpus;
    }
    if (g.power_mean_w) {
      power += *g.power_mean_w;
      ++with_power;
    }
    if (g.utilization_mean_pct) {
      util += *g.utilization_mean_pct;
      ++with_util;
    }
  }
  if (with_power) e.mean_power_w = power / with_power;
  if (with_util) e.mean_utilization_pct = util / with_util;
  e.communication_energy_j = e.energy_j * (split.allreduce_share + split.wait_share);
  return e;
}

void Add(std::vector<Verdict>* v, const char* id, VerdictLevel level, const std::string& text) {
  v->push_back(Verdict{id, level, text});
}

bool AnyPricedFromPoints(const JobAnalysis& a) {
  for (const BinAnalysis& b : a.bins)
    if (!b.price_basis.empty() && b.price_basis != "entry") return true;
  return false;
}

// "38.5 us against the profile's 41.2 us (interpolated 16K-64K, noise 5 %)".
std::string AgainstProfile(const BinAnalysis& b, double profile_us) {
  std::string from = SizeLabel(b.priced_from);
  if (b.priced_to != b.priced_from) from += "–" + SizeLabel(b.priced_to);
  return Seconds(b.per_call_us * 1e-6) + " per call against the profile's " + Seconds(profile_us * 1e-6) + " (" +
         b.price_basis + (b.price_basis == "interpolated" ? " between " : " from ") + from + ", noise " +
         Percent(b.noise.value_or(kDefaultProfileNoise)) + ")";
}

// Whether the bin holds the evidence a verdict of its own needs: at least
// kBinMinTimeShare of the transfer time and kVerdictMinCalls calls.
bool Judged(const BinAnalysis& b) { return b.transfer_share >= kBinMinTimeShare && !b.too_few_calls; }

// The bins that would be judged but for their calls: "too few calls to
// judge", each with its time per call and the profile's price.
void TooFewCallsVerdict(JobAnalysis* a) {
  std::string bins;
  for (const BinAnalysis& b : a->bins) {
    if (!b.too_few_calls) continue;
    bins += (bins.empty() ? "" : "; ") + BinLabel(b, true) + " (" + mla::CountOf(b.calls, "call") + ", " +
            Seconds(b.per_call_us * 1e-6) + " per call" +
            (b.time_us ? " against the profile's " + Seconds(*b.time_us * 1e-6) : std::string()) + ")";
  }
  if (!bins.empty())
    Add(&a->verdicts, "too-few-calls", VerdictLevel::kNote,
        "too few calls to judge " + bins + ": a verdict on a bin needs at least " + std::to_string(kVerdictMinCalls) +
            " calls, so that one slow call does not decide it");
}

// The bins priced from points (pts=) that hold at least kBinMinTimeShare of
// the transfer time and kVerdictMinCalls calls (Judged): re-tune when the job's own time per call is off the
// profile's by more than the profile's noise at that size, naming the bins;
// a loss against the system MPI's price beyond the noise is named too.
void RetuneVerdict(JobAnalysis* a) {
  std::vector<Verdict>* v = &a->verdicts;
  std::string off, within;
  int checked = 0;
  for (const BinAnalysis& b : a->bins) {
    if (b.price_basis.empty() || b.price_basis == "entry" || !b.vs_profile || !Judged(b)) continue;
    ++checked;
    if (b.off_profile) off += (off.empty() ? "" : "; ") + BinLabel(b, true) + " " + AgainstProfile(b, *b.time_us);
    const double noise = b.noise.value_or(kDefaultProfileNoise);
    if (b.mpi_time_us && b.algo != "passthrough" && b.per_call_us > *b.mpi_time_us * (1 + noise))
      Add(v, "slower-than-mpi", VerdictLevel::kWarn,
          BinLabel(b, true) + ": " + b.algo + " took " + Seconds(b.per_call_us * 1e-6) +
              " per call, above the system MPI's " + Seconds(*b.mpi_time_us * 1e-6) +
              " priced at the job's mean size " + SizeLabel(static_cast<uint64_t>(b.mean_message_bytes)) + " (" +
              b.price_basis + ", beyond the noise of " + Percent(noise) + ")");
  }
  if (!off.empty())
    Add(v, "re-tune", VerdictLevel::kWarn,
        "re-tune this node type: the job's own time is off the profile's by more than the profile's noise at its "
        "size in " +
            off);
  else if (checked > 0)
    Add(v, "re-tune", VerdictLevel::kGood,
        "no re-tune needed: the job's time per call is within the profile's noise of its price in the " +
            std::to_string(checked) + " bin(s) that hold at least " + Percent(kBinMinTimeShare) +
            " of the allreduce time and " + std::to_string(kVerdictMinCalls) + " calls");
}

// Whether more GPUs would pay: the scaling prediction.
void ScalingVerdict(JobAnalysis* a) {
  std::vector<Verdict>* v = &a->verdicts;
  const TimeSplit& t = a->split;
  const std::string unit = a->scale_unit;
  if (!a->prediction_possible)
    return Add(v, "scaling", VerdictLevel::kNote, "no scaling prediction: " + a->prediction_note);
  const PredictionPoint& p = a->prediction.front();
  const bool well = p.efficiency >= kScalesWellEfficiency;
  std::string text = "allreduce takes " + Percent(t.allreduce_share) + " of the time: doubling the " + unit + " (" +
                     std::to_string(a->scale) + " to " + std::to_string(p.scale) + ") is predicted to give " +
                     Times(p.speedup);
  if (well || p.speedup >= 1)
    text += std::string(well ? " (efficiency " : ", not 2× (efficiency ") + Percent(p.efficiency) +
            (well ? ", at or above the " : ", below the ") + Percent(kScalesWellEfficiency) +
            " that counts as scaling well)";
  else
    text += ": the job would be slower on more " + unit +
            ", its allreduces would grow more than its computation shrinks (efficiency " + Percent(p.efficiency) + ")";
  Add(v, "scaling", well ? VerdictLevel::kGood : VerdictLevel::kWarn, text);
}

// Where the wall time goes: communication-bound, waiting for the slowest rank.
void TimeSplitVerdicts(const JobReport& r, JobAnalysis* a) {
  std::vector<Verdict>* v = &a->verdicts;
  const TimeSplit& t = a->split;
  if (t.allreduce_share >= kCommunicationBoundShare)
    Add(v, "communication-bound", VerdictLevel::kWarn,
        "communication-bound: allreduce transfers take " + Percent(t.allreduce_share) +
            " of the wall time (threshold " + Percent(kCommunicationBoundShare) +
            "): overlap them with computation, or send fewer, larger messages");
  if (t.wait_share >= kWaitingHighShare) {
    Add(v, "waiting", VerdictLevel::kWarn,
        "load imbalance: ranks wait " + Percent(t.wait_share) + " of the time (" + Seconds(t.wait_s) +
            ") for the slowest rank to reach the allreduce (threshold " + Percent(kWaitingHighShare) +
            "): balance the work between ranks; a faster network does not help here");
  } else if (r.wait_sampled_calls == 0 && r.allreduce_s.mean > 0) {
    Add(v, "waiting", VerdictLevel::kNote,
        "no call was sampled for waiting (MULTILANE_REPORT_SAMPLE): the allreduce share includes any waiting");
  }
}

// What multilane saved against the system MPI, or why that is not known.
Verdict SavingsVerdict(const JobReport& r, const JobAnalysis& a) {
  const Savings& s = a.savings;
  const auto note = [](const std::string& text) { return Verdict{"savings", VerdictLevel::kNote, text}; };
  if (s.known && s.share_of_wall >= kSavingsNoticeableShare)
    return {"savings", VerdictLevel::kGood,
            std::string(s.capped ? "multilane saved at least " : "multilane saved ") + Seconds(s.saved_s) +
                " against the system MPI's tuned times (" + Percent(s.share_of_wall) +
                " of the wall time: the job ran " + Times(s.job_speedup) + " as fast)"};
  // A loss priced from points: the re-tune verdict decides (noise per size);
  // else, as before, a loss is itself the reason.
  if (s.known && s.share_of_wall <= -kSavingsNoticeableShare)
    return {"savings", VerdictLevel::kWarn,
            "multilane cost " + Seconds(-s.saved_s) + " against the system MPI's tuned times (" +
                Percent(-s.share_of_wall) + " of the wall time)" +
                (AnyPricedFromPoints(a) ? "" : ": re-tune this node type")};
  if (s.known)
    return note("multilane made little difference: " + Seconds(s.saved_s) + " saved, under " +
                Percent(kSavingsNoticeableShare) + " of the wall time");
  if (!r.profile_text && !r.settings_algo.empty() && r.settings_algo != "auto")
    return note("MULTILANE_ALGO=" + r.settings_algo +
                " forced the algorithm and no profile was in force: no system MPI times to compare with");
  if (!r.profile_text)
    return note("no profile was in force: the allreduces ran on the system MPI (multilane tune, then multilane run)");
  if (!s.why_not.empty()) return note("what multilane saved is not claimed: " + s.why_not);
  return note("the profile records no system MPI times for these sizes: what multilane saved is unknown");
}

// Whether another number of ranks per GPU would have been faster.
void RanksPerGpuVerdict(JobAnalysis* a) {
  std::vector<Verdict>* v = &a->verdicts;
  const LayoutAdvice& l = a->layout;
  if (l.known && l.best_ppg != l.job_ppg && l.ratio < 1) {
    Add(v, "ranks-per-gpu", VerdictLevel::kNote,
        "the profile predicts " + std::to_string(l.best_ppg) +
            " rank(s) per GPU would have been fastest for this job's device allreduces: " + Percent(1 - l.ratio) +
            " less time than at the " + std::to_string(l.job_ppg) + " it ran (about " + Seconds(l.saved_s) + ")" +
            (l.note.empty() ? "" : "; " + l.note));
  } else if (l.known) {
    Add(v, "ranks-per-gpu", VerdictLevel::kGood,
        "the job ran " + std::to_string(l.job_ppg) +
            " rank(s) per GPU, the fastest the profile knows for its device allreduces" +
            (l.note.empty() ? "" : "; " + l.note));
  }
}

// Per size bin priced from a profile entry: below the expected bandwidth,
// slower than the system MPI.
void BinVerdicts(JobAnalysis* a) {
  std::vector<Verdict>* v = &a->verdicts;
  for (const BinAnalysis& b : a->bins) {
    if (!Judged(b) || b.price_basis != "entry") continue;  // from points: RetuneVerdict
    if (b.vs_expected && *b.vs_expected < kBelowExpectationRatio)
      Add(v, "below-expectation", VerdictLevel::kWarn,
          BinLabel(b, true) + " reaches " + Percent(*b.vs_expected) + " of the bus bandwidth the profile expects (" +
              Gbs(b.busbw_gbs) + " of " + Gbs(*b.expected_busbw_gbs) + "; threshold " +
              Percent(kBelowExpectationRatio) + "): the network may be shared, or the profile is stale (re-tune)");
    if (b.mpi_time_us && b.algo != "passthrough" && b.calls > 0) {
      const double mpi_us = *b.mpi_time_us;
      if (b.per_call_us > mpi_us * (1 + kSlowerThanMpiMargin))
        Add(v, "slower-than-mpi", VerdictLevel::kWarn,
            BinLabel(b, true) + ": " + b.algo + " took " + Seconds(b.per_call_us * 1e-6) + " per call, more than " +
                Percent(kSlowerThanMpiMargin) + " above the system MPI's tuned " + Seconds(mpi_us * 1e-6) +
                ": re-tune this node type");
    }
  }
}

// Small messages, idle GPUs, and a split that had to be clamped.
void OtherVerdicts(JobAnalysis* a) {
  std::vector<Verdict>* v = &a->verdicts;
  const TimeSplit& t = a->split;
  double small = 0;
  for (const BinAnalysis& b : a->bins)
    if (b.to && *b.to <= kSmallMessageBytes) small += b.transfer_share;
  if (small >= kSmallMessagesShare)
    Add(v, "small-messages", VerdictLevel::kNote,
        Percent(small) + " of the allreduce time (waiting excluded) is in messages under " +
            SizeLabel(kSmallMessageBytes) + " (threshold " + Percent(kSmallMessagesShare) +
            "): latency, not bandwidth, limits them and multilane leaves them to the system MPI; fuse small "
            "allreduces into larger buckets");
  if (a->energy.mean_utilization_pct && *a->energy.mean_utilization_pct < kGpuUnderusedPct)
    Add(v, "gpu-underused", VerdictLevel::kNote,
        "the GPUs were busy " + Percent(*a->energy.mean_utilization_pct / 100) + " of the time on average (threshold " +
            Percent(kGpuUnderusedPct / 100) + ")");
  if (t.clamped)
    Add(v, "inconsistent", VerdictLevel::kNote,
        "the time inside MPI_Allreduce exceeds the wall time (calls from several threads at once each count), or "
        "the waiting exceeds it: the split is clamped to the wall time and is only indicative");
}

void JobVerdicts(const JobReport& r, JobAnalysis* a) {
  ScalingVerdict(a);
  TimeSplitVerdicts(r, a);
  a->verdicts.push_back(SavingsVerdict(r, *a));
  RanksPerGpuVerdict(a);
  BinVerdicts(a);
  RetuneVerdict(a);
  TooFewCallsVerdict(a);
  OtherVerdicts(a);
}

}  // namespace

std::map<std::string, int64_t> ChoiceCalls(const ReportBin& b) {
  std::map<std::string, int64_t> choices = b.algos;
  for (const auto& [name, calls] : b.system_algos) {
    choices[mla::SystemChoiceText(name)] += calls;
    auto plain = choices.find("passthrough");
    if (plain != choices.end() && (plain->second -= calls) <= 0) choices.erase(plain);
  }
  return choices;
}

std::string MostCalls(const ReportBin& b) {
  std::string best;
  int64_t most = -1;
  for (const auto& [name, calls] : ChoiceCalls(b))
    if (calls > most) {
      most = calls;
      best = name;
    }
  return best;
}

std::string FormatNumber(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

std::string Percent(double share) {
  const double p = share * 100;
  if (std::fabs(p) >= 9.95) return FormatNumber("%.0f %%", p);
  return FormatNumber("%.1f %%", p);
}

std::string Times(double factor) {
  std::string s = FormatNumber(std::fabs(factor) >= 10 ? "%.1f" : "%.2f", factor);
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s + "×";
}

std::string Joules(double j) {
  if (std::fabs(j) < 1e3) return FormatNumber("%.0f J", j);
  if (std::fabs(j) < 1e6) return FormatNumber("%.1f kJ", j / 1e3);
  return FormatNumber("%.2f MJ", j / 1e6);
}

std::string SizeLabel(uint64_t bytes) { return mla::FormatByteSize(bytes); }

std::string BinLabel(const BinAnalysis& bin, bool with_memory) {
  std::string s = SizeLabel(bin.from) + "–" + (bin.to ? SizeLabel(*bin.to) : std::string("inf"));
  return with_memory ? bin.memory + " " + s : s;
}

std::string PriceNote(const BinAnalysis& b) {
  if (b.price_basis.empty()) return "-";
  const std::string from = SizeLabel(b.priced_from);
  if (b.price_basis == "interpolated") return b.price_basis + " " + from + "–" + SizeLabel(b.priced_to);
  if (b.price_basis == "measured") return b.price_basis + " " + from;
  if (b.price_basis == "extrapolated") return b.price_basis + " from " + from;
  return b.priced_from > 0 ? "entry at " + from : "entry";
}

const char* LevelName(VerdictLevel level) {
  constexpr const char* kNames[] = {"good", "note", "warn"};  // in VerdictLevel's order
  return kNames[static_cast<int>(level)];
}

namespace {

// Predicts the job's time on k times the GPUs (docs/report.md): compute and
// waiting divide by k, allreduce time grows by `growth` (AllreduceGrowth).
// `extra_allreduce_s` is added to the allreduce time (the savings, for the
// system MPI's curve).
double PredictTime(const TimeSplit& split, double growth, double k, double extra_allreduce_s = 0) {
  return split.compute_s / k + split.wait_s / k + (split.allreduce_s + extra_allreduce_s) * growth;
}

LayoutAdvice AdviseLayout(const JobReport& r, const mla::Profile& p, const std::vector<BinAnalysis>& bins) {
  LayoutAdvice l;
  l.job_ppg = r.ranks_per_gpu;
  std::set<int> tuned;  // the ranks-per-GPU values of the profile's device entries
  for (const mla::ProfileEntry& e : p.entries())
    if (e.kind == mla::MemKind::kDevice && e.ppg > 0) tuned.insert(e.ppg);
  double device_transfer_s = 0;
  std::vector<mla::BinCalls> calls;  // the job's device calls
  for (const BinAnalysis& b : bins)
    if (b.memory == "device" && b.calls > 0) {
      device_transfer_s += b.transfer_s;
      calls.push_back({mla::MemKind::kDevice, b.from, static_cast<double>(b.calls), b.mean_message_bytes});
    }
  if (calls.empty()) {
    l.note = "the job made no allreduce calls on device memory";
    return l;
  }
  if (tuned.size() < 2) {
    l.note = "the profile holds device entries of one ranks-per-GPU value (tune with --ranks-per-gpu LIST)";
    return l;
  }
  if (!tuned.count(r.ranks_per_gpu)) {
    l.note = "the job ran " + std::to_string(r.ranks_per_gpu) + " rank(s) per GPU, which the profile did not tune";
    return l;
  }
  const std::string why_not = RanksNotComparable(r, p);
  for (int ppg : tuned) {
    std::vector<mla::ProfileEntry> entries;  // this value's own device entries (ppg=N)
    for (const mla::ProfileEntry& e : p.entries())
      if (e.kind == mla::MemKind::kDevice && e.ppg == ppg) entries.push_back(e);
    const mla::CallsPrice price = mla::PriceCalls(entries, calls);
    if (price.complete) l.predicted_us.emplace_back(ppg, price.total_us);
  }
  double job_us = -1;
  for (const auto& [ppg, us] : l.predicted_us)
    if (ppg == r.ranks_per_gpu) job_us = us;
  if (job_us <= 0 || l.predicted_us.size() < 2) {
    l.note = "the profile has no tuned time for some of the job's device sizes at some ranks-per-GPU values";
    return l;
  }
  auto best = std::min_element(l.predicted_us.begin(), l.predicted_us.end(),
                               [](const auto& x, const auto& y) { return x.second < y.second; });
  l.known = true;
  l.best_ppg = best->first;
  l.ratio = best->second / job_us;
  l.saved_s = (1 - l.ratio) * device_transfer_s;
  if (!why_not.empty()) l.note = "only indicative: " + why_not;
  return l;
}

// The model's share of the step between nodes (report_scaling.h): the job's
// machines are its distinct hosts; its bins priced by a profile tuned on one
// machine say how much of its time the same calls take inside one.
BetweenNodes BetweenNodesOf(const JobReport& r, bool have_profile, const std::vector<BinAnalysis>& bins) {
  const int machines = r.hosts.empty() ? r.nodes : static_cast<int>(r.hosts.size());
  bool one_machine = false;
  if (have_profile) {
    const std::string virt = mla::ProfileHeaderValue(*r.profile_text, "nodes_virtual");
    one_machine = virt == "yes" || mla::ProfileHeaderValue(*r.profile_text, "nodes") == "1";
  }
  std::vector<PricedCalls> priced;
  for (const BinAnalysis& b : bins)
    if (b.time_us && b.calls > 0) priced.push_back({static_cast<double>(b.calls), b.per_call_us, *b.time_us});
  return EstimateBetweenNodes(machines, one_machine, priced);
}

// Groups the files by job name; every name with at least two distinct scales
// gives a series, sorted by scale (ties keep the given order).
std::vector<ScalingSeries> MeasuredScaling(const std::vector<JobReport>& reports,
                                           const std::vector<JobAnalysis>& analyses) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<size_t>> groups;
  for (size_t i = 0; i < reports.size(); ++i) {
    if (!groups.count(reports[i].job_name)) order.push_back(reports[i].job_name);
    groups[reports[i].job_name].push_back(i);
  }
  std::vector<ScalingSeries> out;
  for (const std::string& name : order) {
    const std::vector<size_t>& files = groups[name];
    bool all_gpus = true;
    for (size_t i : files) all_gpus = all_gpus && reports[i].gpus > 0;
    const auto scale_of = [&](size_t i) { return all_gpus ? reports[i].gpus : reports[i].ranks; };
    std::vector<size_t> sorted = files;
    std::stable_sort(sorted.begin(), sorted.end(), [&](size_t x, size_t y) { return scale_of(x) < scale_of(y); });
    if (scale_of(sorted.front()) == scale_of(sorted.back())) continue;  // one scale: no curve
    ScalingSeries s;
    s.job_name = name;
    s.scale_unit = all_gpus ? "GPUs" : "ranks";
    const size_t first = sorted.front();
    const double t0 = analyses[first].split.wall_s;
    const int n0 = scale_of(first);
    for (size_t i : sorted) {
      SeriesPoint p;
      p.file = i;
      p.scale = scale_of(i);
      p.wall_s = analyses[i].split.wall_s;
      p.factor = static_cast<double>(p.scale) / n0;
      p.speedup = p.wall_s > 0 ? t0 / p.wall_s : 0;
      p.efficiency = p.speedup / p.factor;
      p.allreduce_share = analyses[i].split.allreduce_share;
      if (n0 >= 2 && t0 > 0) {
        const double t =
            PredictTime(analyses[first].split, AllreduceGrowth(n0, analyses[first].between_nodes, p.factor), p.factor);
        if (t > 0) p.predicted_speedup = t0 / t;
      }
      s.points.push_back(p);
    }
    const SeriesPoint& last = s.points.back();
    std::string text = "from " + std::to_string(n0) + " to " + std::to_string(last.scale) + " " + s.scale_unit +
                       " the job ran " + Times(last.speedup) + " as fast, against " + Times(last.factor) +
                       " ideal (efficiency " + Percent(last.efficiency);
    if (last.predicted_speedup)
      text += "; the model of the " + std::to_string(n0) + "-" + (all_gpus ? "GPU" : "rank") + " run predicted " +
              Times(*last.predicted_speedup);
    const bool good = last.efficiency >= kMeasuredEfficiencyLow;
    s.verdicts.push_back(Verdict{
        "measured-scaling", good ? VerdictLevel::kGood : VerdictLevel::kWarn,
        text + (good ? "; at or above the " : "; below the ") + Percent(kMeasuredEfficiencyLow) + " threshold)"});
    out.push_back(s);
  }
  return out;
}

}  // namespace

JobAnalysis AnalyzeJob(const JobReport& r) {
  JobAnalysis a;
  a.split = Split(r);
  a.scale_unit = r.gpus > 0 ? "GPUs" : "ranks";
  a.scale = r.gpus > 0 ? r.gpus : r.ranks;

  double total_time = 0;
  int64_t total_calls = 0;
  for (const ReportBin& b : r.bins) {
    total_time += b.time_s.mean;
    total_calls += b.calls;
  }
  mla::Profile profile;
  std::string profile_error;
  const bool have_profile = r.profile_text && profile.Parse(*r.profile_text, &profile_error);
  const std::string ranks_why_not = !r.profile_text ? ""
                                    : !have_profile ? "the profile in force does not parse (" + profile_error + ")"
                                                    : RanksNotComparable(r, profile);
  for (const ReportBin& b : r.bins) {
    const mla::MemKind kind = b.memory == "device" ? mla::MemKind::kDevice : mla::MemKind::kHost;
    const mla::ProfileEntry* entry = have_profile ? profile.Lookup(kind, b.from, r.ranks_per_gpu) : nullptr;
    a.bins.push_back(AnalyzeBin(b, r.ranks, total_time, total_calls, profile, entry));
    BinAnalysis& ba = a.bins.back();
    ++a.savings.bins_total;
    if (!ba.saved_s) continue;
    std::string why_not = ranks_why_not;
    if (why_not.empty() && entry && kind == mla::MemKind::kDevice) why_not = PpgNotComparable(r, profile, *entry);
    if (!why_not.empty()) {
      ba.saved_s.reset();  // not comparable: no claim
      if (a.savings.why_not.empty()) a.savings.why_not = why_not;
      continue;
    }
    a.savings.known = true;
    ++a.savings.bins_known;
    a.savings.saved_s += *ba.saved_s;
  }
  // Never more saved than the job spent in allreduce.
  a.savings.capped = a.savings.saved_s > a.split.allreduce_s;
  a.savings.saved_s = std::min(a.savings.saved_s, a.split.allreduce_s);
  if (a.savings.known) a.savings.why_not.clear();
  if (have_profile) a.layout = AdviseLayout(r, profile, a.bins);
  double total_transfer = 0;
  for (const BinAnalysis& b : a.bins) total_transfer += b.transfer_s;
  for (BinAnalysis& b : a.bins) {
    b.transfer_share = total_transfer > 0 ? b.transfer_s / total_transfer : 0;
    b.too_few_calls = !b.price_basis.empty() && b.transfer_share >= kBinMinTimeShare && b.calls < kVerdictMinCalls;
  }
  if (a.split.wall_s > 0) {
    a.savings.share_of_wall = a.savings.saved_s / a.split.wall_s;
    a.savings.job_speedup = (a.split.wall_s + a.savings.saved_s) / a.split.wall_s;
  }

  a.between_nodes = BetweenNodesOf(r, have_profile, a.bins);
  if (a.split.wall_s <= 0) {
    a.prediction_note = "the job's wall time is zero";
  } else if (a.scale < 2) {
    a.prediction_note = "the job ran on one of its " + a.scale_unit + ": no allreduce between them to scale from";
  } else {
    a.prediction_possible = true;
    for (int k : kPredictionFactors) {
      PredictionPoint p;
      p.factor = k;
      p.scale = a.scale * k;
      p.ring_factor = RingFactor(a.scale, k);
      p.node_ring_factor = RingFactor(a.between_nodes.nodes, k);
      p.allreduce_growth = AllreduceGrowth(a.scale, a.between_nodes, k);
      p.time_s = PredictTime(a.split, p.allreduce_growth, k);
      p.speedup = p.time_s > 0 ? a.split.wall_s / p.time_s : k;
      p.efficiency = p.speedup / k;
      if (a.savings.known) {
        const double t = PredictTime(a.split, p.allreduce_growth, k, a.savings.saved_s);
        if (t > 0) p.speedup_system_mpi = a.split.wall_s / t;
      }
      a.prediction.push_back(p);
    }
  }
  a.energy = Energy(r, a.split);
  JobVerdicts(r, &a);
  return a;
}

ReportSet AnalyzeReports(std::vector<JobReport> reports) {
  ReportSet set;
  set.reports = std::move(reports);
  for (const JobReport& r : set.reports) set.jobs.push_back(AnalyzeJob(r));
  set.series = MeasuredScaling(set.reports, set.jobs);
  return set;
}

}  // namespace mlreport
