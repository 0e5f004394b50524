// ranks_per_gpu.cc: the ranks-per-GPU rule (ranks_per_gpu.h).
#include "vocab/ranks_per_gpu.h"

#include <set>

#include "vocab/terminal_text.h"
#include "vocab/refuse.h"

namespace mla {

bool ParseRanksPerGpu(const std::string& text, int* value) {
  if (text.empty() || text.size() > 2 || text.find_first_not_of("0123456789") != std::string::npos) return false;
  const int v = std::stoi(text);
  if (v < 1 || v > kMaxRanksPerGpu) return false;
  *value = v;
  return true;
}

std::string RanksPerGpuRule() { return "a number from 1 to " + std::to_string(kMaxRanksPerGpu); }

bool ParseRanksPerGpuVariable(const std::string& text, int* value, std::string* error) {
  if (text.empty()) {
    *value = 0;
    return true;
  }
  if (ParseRanksPerGpu(text, value)) return true;
  return mla::Refuse(
      error, "MULTILANE_RANKS_PER_GPU=" + Quoted(text) + " must be " + RanksPerGpuRule() + " (ranks sharing one GPU)");
}

int RanksPerGpuOrOne(int ranks_per_gpu) { return ranks_per_gpu > 0 ? ranks_per_gpu : 1; }

int GpuGroupOfRank(int local_rank, int ranks_per_gpu) { return local_rank / RanksPerGpuOrOne(ranks_per_gpu); }

int GpuOfRank(int local_rank, int local_size, int ranks_per_gpu, int gpu_count) {
  if (gpu_count < 1 || local_rank < 0 || local_rank >= local_size) return -1;
  if (ranks_per_gpu > 0) return GpuGroupOfRank(local_rank, ranks_per_gpu) % gpu_count;
  return static_cast<int>(static_cast<long long>(local_rank) * gpu_count / local_size);
}

bool ParseRanksPerGpuList(const std::string& text, const std::string& what, std::vector<int>* values,
                          std::string* error) {
  std::set<int> seen;
  size_t start = 0;
  while (start < text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    const std::string item = text.substr(start, comma - start);
    int v = 0;
    if (!ParseRanksPerGpu(item, &v))
      return mla::Refuse(error, what + " '" + Excerpt(text) + "': '" + Excerpt(item) + "' is not " + RanksPerGpuRule() +
                                    "; give one value or a list such as 1,2,4,8");
    seen.insert(v);
    start = comma + 1;
  }
  if (seen.empty() || text.back() == ',')
    return mla::Refuse(error, what + " is empty; give one value or a list such as 1,2,4,8");
  values->assign(seen.begin(), seen.end());
  return true;
}

bool InRanksPerGpuList(const std::string& list, int value) {
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    if (list.substr(start, comma - start) == std::to_string(value)) return true;
    start = comma + 1;
  }
  return false;
}

}  // namespace mla
