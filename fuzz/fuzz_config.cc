// fuzz_config.cc: every MULTILANE_* variable through the config loader
// (libmlallreduce/startup/config.h), with a fuzzed environment: the input is split at
// NUL bytes into the values of the variables, in the order below (an empty
// piece leaves that variable unset).  MULTILANE_PROFILE_FILE is not fuzzed
// (it names a file; config_test.cc covers its rules).
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>

#include "libmlallreduce/startup/config.h"
#include "vocab/terminal_text.h"

namespace {
const char* const kVariables[] = {"MULTILANE_ALGO", "MULTILANE_LANES", "MULTILANE_CHUNK", "MULTILANE_TRANSPORT",
                                  "MULTILANE_RANKS_PER_NODE", "MULTILANE_RANKS_PER_GPU", "MULTILANE_STATS",
                                  "MULTILANE_VERBOSE", "MULTILANE_REPORT", "MULTILANE_REPORT_SAMPLE",
                                  "MULTILANE_REPORT_INTERVAL", "MULTILANE_PROFILE", "MULTILANE_HISTORY",
                                  "MULTILANE_JOB_KEY", "MULTILANE_DEVICE_SYNC", "MULTILANE_DEVICE_FLAG_MAX",
                                  // Last, so that the seeds written before it keep their meaning.
                                  "MULTILANE_OFF", "MULTILANE_NODE_STEP"};
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::map<std::string, std::string> env;
  size_t start = 0, index = 0;
  for (size_t i = 0; i <= size && index < sizeof kVariables / sizeof kVariables[0]; ++i) {
    if (i == size || data[i] == 0) {
      if (i > start) env[kVariables[index]] = std::string(reinterpret_cast<const char*>(data) + start, i - start);
      ++index;
      start = i + 1;
    }
  }
  const mla::lib::Config c = mla::lib::LoadConfig([&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
  // Off exactly when a problem was named; every value read is in range.
  if (c.enabled != c.problems.empty()) std::abort();
  if (c.ranks_per_node < 0 || c.ranks_per_gpu < 0 || c.report_sample < 1 || c.verbose < 0 || c.verbose > 2)
    std::abort();
  if (!(c.report_interval_s == 0 || (c.report_interval_s >= 0.01 && c.report_interval_s <= 3600))) std::abort();
  if (c.has_forced && c.forced.lanes < 0) std::abort();
  // The launcher's reason is repeated as an excerpt: bounded, set exactly
  // when the variable is.
  if (c.launcher_off.size() > mla::kRelayedReasonBytes + 32 ||
      c.launcher_off.empty() != (env.find("MULTILANE_OFF") == env.end()))
    std::abort();
  // The device settings: the stream rule only when asked for by name; the
  // flag path's limit within its bound whenever multilane is on, and the
  // default when unset.
  auto it = env.find("MULTILANE_DEVICE_SYNC");
  if (c.device_sync_stream && (it == env.end() || it->second != "stream")) std::abort();
  if (c.enabled && c.device_flag_max > mla::lib::kMaxDeviceFlagMax) std::abort();
  it = env.find("MULTILANE_DEVICE_FLAG_MAX");
  if (it == env.end() && c.device_flag_max != mla::lib::kDefaultDeviceFlagMax) std::abort();
  (void)c.Summary();
  return 0;
}
