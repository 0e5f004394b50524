// ranks_per_gpu.h: the one rule for a ranks-per-GPU value (how many MPI ranks
// share one GPU), used by the library (MULTILANE_RANKS_PER_GPU), the
// launcher (run/tune --ranks-per-gpu), the Slurm plugin and its cli_filter
// (--multilane=ranks-per-gpu:N, through `multilane resolve --options`).
#ifndef MLVOCAB_RANKS_PER_GPU_H_
#define MLVOCAB_RANKS_PER_GPU_H_

#include <string>
#include <vector>

namespace mla {

// The most ranks that may share one GPU: MPS serves at most 48 clients per
// device on Volta and later (64 with newer drivers), and no tune measured more.
inline constexpr int kMaxRanksPerGpu = 64;

// Parses one value: decimal digits only (no sign, space or 0x), from 1 to
// kMaxRanksPerGpu.  Returns true and sets *value, else false (*value unchanged).
bool ParseRanksPerGpu(const std::string& text, int* value);

// "a number from 1 to 64": what ParseRanksPerGpu takes, for messages.
std::string RanksPerGpuRule();

// Parses a comma-separated list of values ("1,2,4,8") into *values, sorted
// and without repeats.  On a bad item, an empty list or a trailing comma
// returns false and sets *error to one line naming the bad item that ends
// with the fix; `what` names the setting in it ("--ranks-per-gpu").
bool ParseRanksPerGpuList(const std::string& text, const std::string& what, std::vector<int>* values,
                          std::string* error);

// Whether `value` is one of the comma-separated values of `list` (a profile
// header's ranks_per_gpu_tuned, as the tune wrote it).
bool InRanksPerGpuList(const std::string& list, int value);

}  // namespace mla

#endif  // MLVOCAB_RANKS_PER_GPU_H_
