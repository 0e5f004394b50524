// slurm_partition.cc: node types of a partition from sinfo (slurm_partition.h).
#include "launcher/slurm_partition.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace multilane {

std::vector<std::string> SinfoNodeArguments(const std::string& partition) {
  return {"sinfo", "-h", "-N", "-p", partition, "-o", "%N|%c|%G|%f"};
}

namespace {
constexpr int kMaxGpus = 1 << 20;
}  // namespace

int GpusInGres(const std::string& gres) {
  int total = 0;
  std::stringstream items(gres);
  std::string item;
  while (std::getline(items, item, ',')) {
    if (item.rfind("gpu:", 0) != 0) continue;
    item = item.substr(0, item.find('('));
    const std::string count = item.substr(item.rfind(':') + 1);
    // Digits only (no sign, no atoi overflow); an item that is not a count
    // adds nothing, and no node claims more than kMaxGpus.
    if (count.empty() || count.size() > 7 || count.find_first_not_of("0123456789") != std::string::npos) continue;
    total = std::min(kMaxGpus, total + std::stoi(count));
  }
  return total;
}

std::vector<SlurmNodeGroup> ParseSinfoNodeGroups(const std::string& sinfo_output) {
  std::vector<SlurmNodeGroup> groups;
  std::vector<std::string> seen;
  std::stringstream lines(sinfo_output);
  std::string line;
  while (std::getline(lines, line)) {
    std::vector<std::string> f;
    std::stringstream fields(line);
    std::string field;
    while (std::getline(fields, field, '|')) f.push_back(field);
    if (f.size() != 4 || f[0].empty()) continue;
    if (std::find(seen.begin(), seen.end(), f[0]) != seen.end()) continue;
    seen.push_back(f[0]);
    auto it = std::find_if(groups.begin(), groups.end(), [&](const SlurmNodeGroup& g) {
      return g.cpus == f[1] && g.gres == f[2] && g.features == f[3];
    });
    if (it == groups.end()) {
      groups.push_back({f[1], f[2], f[3], {}, GpusInGres(f[2])});
      it = groups.end() - 1;
    }
    it->nodes.push_back(f[0]);
  }
  return groups;
}

}  // namespace multilane
