// repeat.h: a second launch of a layout checks the first one's decisions.
//
// One launch measures a machine in one state: where its ranks landed, what
// its caches and memory held.  A job is another launch, and differs from the
// tune by more than the tune's repetitions inside one launch can show.  So a
// tune that has the time for it launches the probe a second time on the same
// layout, measuring each size's winner and the system MPI again, and this
// turns the two launches into one decision per size.  Pure logic, no MPI.
#ifndef MLTUNER_REPEAT_H_
#define MLTUNER_REPEAT_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tuner/plan.h"
#include "tuner/search.h"

namespace mltuner {

// The candidates the repeat launch measures besides the system MPI (which
// every probe measures): each distinct winner of `decisions` that is not
// "passthrough", in the order of first appearance.
std::vector<std::string> RepeatCandidates(const std::vector<Decision>& decisions);

// One size of the repeat launch.
struct RepeatSize {
  uint64_t bytes = 0;
  std::vector<std::pair<MemKind, std::string>> winners;  // each memory kind's winner at the size
  double predicted_s = 0;  // its validation and first round, from the first launch's medians
};

// What the repeat launch measures: the sizes, and at each the system MPI and
// the winner only (Plan::size_candidates).
struct RepeatScope {
  std::vector<RepeatSize> sizes;     // ascending
  std::vector<RepeatSize> left_out;  // would overrun `measuring_s`, the most expensive first
  double predicted_s = 0;            // of `sizes`, together
};

// The probe measures a size's validation and first round whatever its
// budget says (probe_sizes.cc), so a repeat of every size could overrun the
// tune's --budget where one call takes long (the system MPI's default at
// 64M, oversubscribed, took 0.3 s a call).  The first launch measured every
// call the repeat would make: per size, a reference call, then for the
// system MPI and the winner one validation call and `plan`'s
// reps_per_round x (warmup + IterationsFor) calls at their `first` medians.
// Sizes are left out, the most expensive first, until the rest fit
// `measuring_s`; a left-out size keeps its first decision (ApplyRepeat).
RepeatScope ScopeRepeat(const std::vector<Decision>& decisions, const std::vector<Measurement>& first, const Plan& plan,
                        double measuring_s);

// The repeat launch's plan, from the first launch's plan `first`, its
// decisions and measurements: RepeatCandidates beside the system MPI, at
// most 2 rounds, `measuring_s` seconds of measurements, at each size of
// ScopeRepeat (*scope says which were left out) only that size's winner
// (Plan::size_candidates).  False when no size fits or a winner is not a
// candidate of the plan's space: the layout launches once.
bool PlanRepeatLaunch(const Plan& first, const SearchResult& decided, const std::vector<Measurement>& measurements,
                      double measuring_s, Plan* repeat, RepeatScope* scope);

// "4M, 64M (5.1 s predicted)": the sizes a scope left out; "" when none.
std::string DescribeLeftOut(const RepeatScope& scope);

// What ApplyRepeat did, for the tune's summary line.
struct RepeatSummary {
  int confirmed = 0;   // winners the repeat measured faster than the system MPI again
  int undone = 0;      // winners it measured no faster: the size keeps the system MPI
  int kept = 0;        // sizes that kept the system MPI in the first launch, measured again
  int unmeasured = 0;  // sizes the repeat could not measure (its budget, a failed check)
  double widest = 0;   // the largest noise a size got from the difference between the launches
  double band = 0;     // the widest launch band of a memory kind (ApplyRepeat)
};

// Applies the repeat launch's `repeat` measurements to `decided` (the first
// launch's Decide result), size by size, where the repeat measured the
// system MPI and the winner with valid samples:
// - a winner whose repeat median does not beat the system MPI's repeat
//   median by more than `noise_floor` (SearchOptions::noise_floor) is undone:
//   the size keeps the system MPI (Decision::undone names it);
// - the times become the mean of the two launches' medians;
// - the noise becomes the largest of the first launch's noise, the relative
//   differences between the launches at the size (of the winner's median,
//   of the system MPI's, and of their ratio), and the launch band below.
// The launch band: the system MPI's relative differences d between the two
// launches, pooled over the measured sizes of a memory kind, estimate how
// much one launch varies, sigma = rms(d) / sqrt(2); a job (a third launch)
// differs from the mean of two by sigma x sqrt(3/2), so two of those are
// sqrt(3) x rms(d).  One size's difference alone says little (two launches
// may agree at a size by chance); the band is what every size gets.
// Decision::repeat_gain is set where the repeat measured the size.  Sizes the
// repeat did not measure keep their first decision, their noise widened to
// their memory kind's band.  The bins are made again.
RepeatSummary ApplyRepeat(const std::vector<Measurement>& repeat, double noise_floor, SearchResult* decided);

// "repeat launch: 5 of 6 winners confirmed, 1 undone (4K), ..."; one line.
std::string DescribeRepeat(const RepeatSummary& summary, const SearchResult& decided);

}  // namespace mltuner

#endif  // MLTUNER_REPEAT_H_
