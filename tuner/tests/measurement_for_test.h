// measurement_for_test.h: one measurement of a candidate at a size, written
// in one line, for the tuner's unit tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tuner/search.h"

namespace mltuner {

// A measurement of CAND at BYTES with SAMPLES (seconds), VALID or not, on
// MEM; nothing else set.
inline Measurement M(uint64_t bytes, const std::string& cand, std::vector<double> samples, bool valid = true,
                     MemKind mem = MemKind::kHost) {
  Measurement m;
  m.mem = mem;
  m.bytes = bytes;
  m.candidate = cand;
  m.samples = samples;
  m.valid = valid;
  return m;
}

}  // namespace mltuner
