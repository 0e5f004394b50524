// ranks_per_gpu.h: the one rule for a ranks-per-GPU value (how many MPI ranks
// share one GPU), used by the library (MULTILANE_RANKS_PER_GPU), the
// launcher (run/tune --ranks-per-gpu), the Slurm plugin and its cli_filter
// (--multilane=ranks-per-gpu:N, through `multilane resolve --options`), the
// probe and the benchmark; and the one placement of a node's ranks on its
// GPUs, which the plugin, the probe, the benchmark and the library's GPU
// groups follow.
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

// MULTILANE_RANKS_PER_GPU as `text` holds it: "" (unset) sets *value to 0,
// else ParseRanksPerGpu.  On anything else returns false (*value unchanged)
// and sets *error to one line naming the variable and what it must be:
// "MULTILANE_RANKS_PER_GPU='100' must be a number from 1 to 64 (ranks
// sharing one GPU)".
bool ParseRanksPerGpuVariable(const std::string& text, int* value, std::string* error);

// A ranks-per-GPU setting where 0 means "not given": 1 rank per GPU then,
// else `ranks_per_gpu` itself.
int RanksPerGpuOrOne(int ranks_per_gpu);

// The GPU group of the rank with index `local_rank` on its node: consecutive
// ranks share a GPU, RanksPerGpuOrOne(ranks_per_gpu) of them, so local ranks
// 0..ppg-1 form group 0, the next ppg group 1, and so on.
int GpuGroupOfRank(int local_rank, int ranks_per_gpu);

// The GPU (0 to gpu_count - 1) of the rank with index `local_rank` among the
// `local_size` ranks of its node.  With `ranks_per_gpu` given (> 0): its GPU
// group (GpuGroupOfRank), wrapping round the GPUs where there are more groups
// than GPUs (virtual nodes of one host each take every GPU).  With 0: the
// node's ranks spread evenly in consecutive blocks, rank i on GPU
// floor(i * gpu_count / local_size) (every GPU used, loads differing by at
// most one rank).  -1 when gpu_count < 1 or local_rank is not in
// [0, local_size).
int GpuOfRank(int local_rank, int local_size, int ranks_per_gpu, int gpu_count);

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
