// fuzz_probe_json.cc: the probe's plan and result JSON (tuner/plan.h).  The
// first byte picks the reader: even = plan, odd = result.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tuner/plan.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const nlohmann::json j = nlohmann::json::parse(data + 1, data + size, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;
  std::string error;
  if (data[0] % 2 == 0) {
    mltuner::Plan plan;
    if (!mltuner::ParsePlan(j, &plan, &error)) {
      if (error.empty()) std::abort();
      return 0;
    }
    if (plan.sizes.empty() || plan.min_iters > plan.max_iters) std::abort();
    for (uint64_t s : plan.sizes) {
      const int it = plan.IterationsFor(s);
      if (it < plan.min_iters || it > plan.max_iters) std::abort();
    }
  } else {
    std::vector<mltuner::Measurement> m;
    if (!mltuner::ReadMeasurements(j, &m, &error) && error.empty()) std::abort();
    (void)mltuner::MeasurementsFromResult(j);
  }
  return 0;
}
