// fuzz_layout_choice.cc: the next layout from a job's history
// (report/layout_choice.h), whose runs' size histograms come from the user's
// database and inbox (outside input) and whose prices come from a profile
// text.  Input: a profile text, a NUL, then histograms, one per line, each
// run's wall, computation and allreduce taken from the input's bytes.  Never
// throws, and always chooses a value it had a reason for: the
// recommendation, a measured value or a tuned one.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "layout_choice.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const size_t nul = text.find('\0');
  if (nul == std::string::npos) return 0;
  mla::Profile profile;
  std::string error;
  if (!profile.Parse(text.substr(0, nul), &error)) profile = mla::Profile();
  std::vector<multilane::RunSummary> runs;
  size_t pos = nul + 1;
  while (pos < text.size() && runs.size() < 64) {
    const size_t end = std::min(text.find('\n', pos), text.size());
    multilane::RunSummary r;
    const unsigned char a = static_cast<unsigned char>(text[pos]);
    r.ranks_per_gpu = a % 9;  // 0: a run without a layout
    r.compute_s = (a >> 4) * 0.5;
    r.allreduce_s = (a & 15) * 0.25;
    r.wall_s = r.compute_s + r.allreduce_s;
    r.started_utc = std::to_string(runs.size());
    r.node_type = (a & 128) ? "other" : "";
    r.histogram_json = text.substr(pos + 1 < end ? pos + 1 : end, end - std::min(pos + 1, end));
    runs.push_back(r);
    pos = end + 1;
  }
  const std::vector<int> tuned = {1, 2, 4};
  const multilane::LayoutChoice c = multilane::ChooseRanksPerGpu(runs, profile, tuned, 2);
  const bool measured = std::any_of(runs.begin(), runs.end(),
                                    [&](const multilane::RunSummary& r) { return r.ranks_per_gpu == c.ranks_per_gpu; });
  const bool is_tuned = std::find(tuned.begin(), tuned.end(), c.ranks_per_gpu) != tuned.end();
  if (c.why.empty() || c.ranks_per_gpu < 1 || !(c.ranks_per_gpu == 2 || measured || is_tuned)) std::abort();
  if (c.basis != "profile" && c.basis != "measured" && c.basis != "predicted") std::abort();
  return 0;
}
