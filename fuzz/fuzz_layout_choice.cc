// fuzz_layout_choice.cc: the next layout from a job's history
// (report/layout_choice.h), whose runs' size histograms come from the user's
// database and inbox (outside input) and whose prices come from a profile
// text.  Input: a profile text, a NUL, then histograms, one per line, each
// run's wall, computation and allreduce taken from the input's bytes.  Never
// throws, and always chooses a value it had a reason for: the
// recommendation, a tuned value measured in a run it may use (never a
// foreign one, nor one whose histogram is unreadable), or a tuned value not
// measured in such a run.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "report/layout_choice.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const size_t nul = text.find('\0');
  if (nul == std::string::npos) return 0;
  mla::Profile profile;
  std::string error;
  if (!profile.Parse(text.substr(0, nul), &error)) profile = mla::Profile();
  std::vector<mla::JobRun> runs;
  size_t pos = nul + 1;
  while (pos < text.size() && runs.size() < 64) {
    const size_t end = std::min(text.find('\n', pos), text.size());
    mla::JobRun r;
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
  const mlreport::LayoutChoice c = mlreport::ChooseRanksPerGpu(runs, profile, tuned, 2);
  // A run the choice may use: at a tuned value, of the profile's node type.
  const auto type = profile.metadata().find("node_type");
  const std::string profile_type = type == profile.metadata().end() ? "" : type->second;
  auto usable_at = [&](int ppg) {
    return std::any_of(runs.begin(), runs.end(), [&](const mla::JobRun& r) {
      std::vector<mla::BinCalls> calls;
      const bool foreign = !profile_type.empty() && !r.node_type.empty() && r.node_type != profile_type;
      return r.ranks_per_gpu == ppg && !foreign && r.wall_s > 0 && mlreport::RunCalls(r, &calls);
    });
  };
  const bool is_tuned = std::find(tuned.begin(), tuned.end(), c.ranks_per_gpu) != tuned.end();
  if (c.why.empty()) std::abort();
  if (c.basis == "profile" && c.ranks_per_gpu != 2) std::abort();
  if (c.basis == "measured" && !(is_tuned && usable_at(c.ranks_per_gpu))) std::abort();
  if (c.basis == "predicted" && !(is_tuned && !usable_at(c.ranks_per_gpu))) std::abort();
  if (c.basis != "profile" && c.basis != "measured" && c.basis != "predicted") std::abort();
  return 0;
}
