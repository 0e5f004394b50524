// task_layout.cc: GPU and CPU blocks of the tasks of a step (task_layout.h).
#include "spank/task_layout.h"

#include "vocab/ranks_per_gpu.h"

namespace multilane_spank {

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> items;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) items.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return items;
}

std::string GpuOfTask(const std::vector<std::string>& step_gpus, int task, int tasks) {
  const int g = mla::GpuOfRank(task, tasks, 0, static_cast<int>(step_gpus.size()));
  return g < 0 ? "" : step_gpus[static_cast<size_t>(g)];
}

std::vector<int> CpusOfTask(const std::vector<int>& cpus, int task, int tasks) {
  if (cpus.empty() || tasks <= 0 || task < 0 || task >= tasks) return {};
  const size_t n = cpus.size();
  const size_t t = static_cast<size_t>(tasks);
  const size_t i = static_cast<size_t>(task);
  if (n < t) return {cpus[i * n / t]};
  return std::vector<int>(cpus.begin() + static_cast<long>(i * n / t),
                          cpus.begin() + static_cast<long>((i + 1) * n / t));
}

std::string CpuListString(const std::vector<int>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[i]);
    if (j > i) out += '-' + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace multilane_spank
