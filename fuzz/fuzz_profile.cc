// fuzz_profile.cc: the profile text parser (vocab/profile.h), with
// the round trip Parse -> ToString -> Parse -> ToString as the invariant.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "vocab/profile.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  mla::Profile p;
  std::string error;
  if (!p.Parse(text, &error)) {
    if (error.empty()) std::abort();  // a refusal always says why
    return 0;
  }
  const std::string once = p.ToString();
  mla::Profile q;
  if (!q.Parse(once, &error)) std::abort();  // the canonical form parses
  if (q.entries().size() != p.entries().size() || q.ToString() != once) std::abort();
  for (const mla::ProfileEntry& e : p.entries()) {
    // Every entry is found again by the look-up of its own lower edge.
    if (q.Lookup(e.kind, e.min_bytes, e.ppg) == nullptr) std::abort();
  }
  return 0;
}
