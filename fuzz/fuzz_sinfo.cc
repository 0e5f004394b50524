// fuzz_sinfo.cc: the `sinfo -h -N -o %N|%c|%G|%f` output parser
// (launcher/slurm_partition.h): every node lands in exactly one group.
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>

#include "launcher/slurm_partition.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::set<std::string> seen;
  for (const multilane::SlurmNodeGroup& g : multilane::ParseSinfoNodeGroups(text)) {
    // "gpu:h100:-4" gave -4 (found by this target; now a unit test).
    if (g.gpus < 0) std::abort();
    if (g.nodes.empty()) std::abort();
    for (const std::string& n : g.nodes)
      if (!seen.insert(n).second) std::abort();  // a node listed twice is kept once
    if (multilane::GpusInGres(g.gres) != g.gpus) std::abort();
  }
  (void)multilane::GpusInGres(text);
  return 0;
}
