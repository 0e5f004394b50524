// layout_choice.h: the next run's ranks per GPU from the job's own history
// (issue 29, item 2; docs/history.md "The next layout"): measured wall times
// where the job ran a value, otherwise a prediction from its size histogram
// priced with the profile's entries of each value, calibrated by the job's
// own measured allreduce time.  Pure: the caller reads the history and the
// profile.
#ifndef MULTILANE_REPORT_LAYOUT_CHOICE_H_
#define MULTILANE_REPORT_LAYOUT_CHOICE_H_

#include <string>
#include <vector>

#include "report/report_history.h"
#include "vocab/price.h"
#include "vocab/profile.h"

namespace mlreport {

// An untried value is tried only when it is predicted to beat the best
// measured wall time by more than this fraction (the prediction's own
// uncertainty: the computation is assumed unchanged across ranks per GPU).
inline constexpr double kTryUntriedMargin = 0.10;

// Appends the run's calls from its size histogram ([[memory, from, calls,
// bytes, time_s], ...]), host and device alike (both change with the ranks
// per GPU), to *out.  False when the histogram is not such a list: a damaged
// history entry, which ChooseRanksPerGpu does not use.
bool RunCalls(const mla::JobRun& run, std::vector<mla::BinCalls>* out);

struct LayoutChoice {
  int ranks_per_gpu = 1;
  std::string basis;  // "profile" (no history), "measured" (the best measured value), "predicted" (an untried one)
  std::string why;    // one line, for the job's output
  double predicted_wall_s = 0;     // basis predicted: the prediction; measured: the median measured
  std::vector<std::string> notes;  // one line when earlier runs were ignored (foreign or damaged)
  double compute_exponent = 0;     // the computation's growth ppg^a fitted to the measured values (0: one value)
};

// Chooses the ranks per GPU with the least wall time for the job whose
// earlier runs are `runs` (its key's, any order): the value with the least
// median measured wall time, or an untried value of `tuned` (the profile's
// ranks_per_gpu_tuned) whose prediction beats that by more than
// kTryUntriedMargin; the profile's `recommended` value when no run is usable.
// A run of another node type than the profile's, at a value not in `tuned`
// (whatever a forced or damaged run says, the choice stays among the
// profile's layouts), or without a wall time or a readable histogram, is
// ignored and counted in `notes`.  The
// prediction prices the run's histogram (host and device calls) with the
// profile's ppg=N entries of each value (vocab/price.h) and scales the
// allreduce time of the run nearest the best value's median (its times
// scaled to that median) by their ratio; it keeps the waiting as measured
// and scales the computation by (N / best)^a, a fitted to the median
// computation at each measured value (0 while only one was measured: the
// uncertainty the margin stands for).  A value without ppg=N entries is not
// predicted.
LayoutChoice ChooseRanksPerGpu(const std::vector<mla::JobRun>& runs, const mla::Profile& profile,
                               const std::vector<int>& tuned, int recommended);

}  // namespace mlreport

#endif  // MULTILANE_REPORT_LAYOUT_CHOICE_H_
