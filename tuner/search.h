// search.h: from probe timings to a profile.  Pure logic, no MPI.
//
// Input: per (memory kind, message size, candidate) the repetition samples in
// microseconds, each the max over ranks of one iteration's time (or of a
// repetition's mean/median), the system MPI ("passthrough") included.
// Output: per size the winner, bins over [0, inf) with neighbours of the same
// winner merged, the profile text (docs/profile-format.md) and a decision
// table.  Also the successive-halving rule the probe uses between rounds.
#ifndef MLTUNER_SEARCH_H_
#define MLTUNER_SEARCH_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tuner/candidates.h"
#include "vocab/profile.h"

namespace mltuner {

// Median of the samples (mean of the middle two for an even count); NaN when empty.
double Median(std::vector<double> samples);

// Relative spread of samples: interquartile range / median (quartiles by
// linear interpolation; with 3 samples this is half the range); 0 for fewer
// than 2 samples.
double RelativeSpread(std::vector<double> samples);

// Relative standard error of the median of samples, estimated from their
// spread: 0.929 x RelativeSpread / sqrt(n) (normal approximation); 0 for fewer
// than 2 samples.
double MedianRelativeError(const std::vector<double>& samples);

struct Measurement {
  MemKind mem = MemKind::kHost;
  uint64_t bytes = 0;
  std::string candidate;        // profile words: "passthrough", "lane lanes=2"
  std::vector<double> samples;  // microseconds, one per repetition
  bool valid = true;            // false: gave a wrong result, never chosen
};

struct SearchOptions {
  // A candidate must beat the system MPI's median by more than the noise to
  // be chosen: noise = max(noise_floor, 2 x the relative standard error of the
  // difference of the two medians, i.e. 2 x hypot(MedianRelativeError(winner),
  // MedianRelativeError(system MPI))).  More samples give a smaller noise;
  // the floor covers what the samples cannot show (drift between runs).
  double noise_floor = 0.03;
  // The probe measures every candidate and the system MPI within each
  // repetition, in repetition order, so sample i of a candidate and sample i
  // of the system MPI saw the same moment of the machine.  When true, the
  // candidate also wins if the median of those per-repetition ratios beats 1
  // by more than max(noise_floor, twice its standard error): drift of the
  // machine between repetitions then cancels out.
  bool paired = true;
};

// The decision at one measured size.
struct Decision {
  MemKind mem = MemKind::kHost;
  uint64_t bytes = 0;
  std::string winner;      // "passthrough" when the system MPI is kept
  double time_us = 0;      // the winner's median
  double mpi_time_us = 0;  // the system MPI's median
  double gain = 1;         // mpi_time_us / time_us
  double noise = 0;        // the relative noise the winner had to beat
  std::string fastest;     // the lowest median of all (may differ from winner)
  double fastest_time_us = 0;
  bool kept_within_noise = false;  // fastest != passthrough but not by more than the noise
  // Set by ApplyRepeat (repeat.h): the gain a second launch of the same
  // layout measured (0: not measured there), and the first launch's winner
  // that the second launch did not confirm ("": none undone).
  double repeat_gain = 0;
  std::string undone;
};

// One profile entry: [from, to) bytes, to == UINT64_MAX for inf.
struct Bin {
  MemKind mem = MemKind::kHost;
  uint64_t from = 0;
  uint64_t to = UINT64_MAX;
  std::string winner;
  // The figures of the largest measured size in the bin, and that size.
  double time_us = 0;
  double mpi_time_us = 0;
  uint64_t measured_bytes = 0;
  // Every measured size in the bin, smallest first: the winner's and the
  // system MPI's medians and the decision's noise (the profile's pts=).
  std::vector<mla::ProfilePoint> points;
  int ppg = 0;  // > 0: the entry holds for jobs with this many ranks per GPU only
};

struct SearchResult {
  std::vector<Decision> decisions;    // by memory kind, then size
  std::vector<Bin> bins;              // by memory kind, then from
  std::vector<std::string> problems;  // sizes without a system MPI measurement, ...
};

// Decides every (memory kind, size) that has a valid passthrough measurement
// with samples; sizes without one are skipped and named in problems.
SearchResult Decide(const std::vector<Measurement>& measurements, const SearchOptions& options = {});

// Bins from decisions: per memory kind, boundaries at the geometric mean
// (rounded to an integer) of neighbouring measured sizes, the first bin from 0
// and the last to inf; neighbours with the same winner merged.
std::vector<Bin> MakeBins(const std::vector<Decision>& decisions);

// The profile entry RenderProfile writes for `bin`, as a job reads it, but
// without its choice (left passthrough: the winner's words are the candidate
// space's): its kind, range, ppg, times, at= size and points.  What pricing
// (mla::PriceEntry) needs of a bin that is not stored yet.
mla::ProfileEntry PricingEntry(const Bin& bin);

// The profile text: header "multilane-profile 1" with the metadata as
// key=value words (keys and values must not hold spaces, '#' or ';'), then one
// entry per bin with its ppg (when > 0), time_us, mpi_time_us and the size
// they were measured at (at=), and its points (pts=, docs/profile-format.md).
std::string RenderProfile(const std::vector<Bin>& bins, const std::map<std::string, std::string>& metadata);

// The decision table as aligned text columns: memory, size, winner, time_us,
// mpi_time_us, gain.
std::string FormatDecisionTable(const std::vector<Decision>& decisions);

// Successive halving: which candidates get the next round.
struct HalvingOptions {
  double margin = 0.10;      // drop those whose median exceeds the best's by more than this
  size_t keep_at_least = 2;  // the best this many always survive
  bool halve = true;         // besides, keep at most half (rounded up) of the contenders
  // The margin grows with the noise: it is at least noise_scale times the
  // relative spread of the best candidate's samples, and a round whose best
  // is noisier than `margin` halves nothing, so that a noisy round cannot
  // drop the eventual winner.
  double noise_scale = 2.0;
};

// samples: candidate words -> samples so far (candidates without samples are
// kept).  Returns the survivors in the order of the input map; the system MPI
// ("passthrough") always survives.
std::vector<std::string> Survivors(const std::map<std::string, std::vector<double>>& samples,
                                   const HalvingOptions& options = {});

}  // namespace mltuner

#endif  // MLTUNER_SEARCH_H_
