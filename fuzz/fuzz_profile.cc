// fuzz_profile.cc: the profile text parser (vocab/profile.h), with
// the round trip Parse -> ToString -> Parse -> ToString as the invariant, and
// the pricing of its points (vocab/price.h): a price is a finite, non-negative
// time at every size, and a probed size prices as measured.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "vocab/price.h"
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
    const double sizes[] = {1.0, static_cast<double>(e.min_bytes) + 0.5, static_cast<double>(e.min_bytes) * 3,
                            static_cast<double>(e.max_bytes)};
    for (double bytes : sizes) {
      mla::Price price;
      if (!mla::PricePoints(e.points, bytes, &price)) {
        if (!e.points.empty() && bytes > 0) std::abort();  // points price every positive size
        continue;
      }
      if (!std::isfinite(price.time_us) || price.time_us < 0 || !std::isfinite(price.mpi_time_us) ||
          price.mpi_time_us < 0)
        std::abort();
      // The same along the system MPI's curve of the entry's layout.
      const mla::Price along = mla::PriceEntry(e, bytes, mla::SystemCurve(p.entries(), e.kind, e.ppg));
      if (!std::isfinite(along.time_us) || along.time_us < 0 || !std::isfinite(along.mpi_time_us) ||
          along.mpi_time_us < 0 || along.basis != price.basis)
        std::abort();
    }
    for (const mla::ProfilePoint& pt : e.points) {
      mla::Price price;
      if (pt.bytes > 0 && (!mla::PricePoints(e.points, static_cast<double>(pt.bytes), &price) ||
                           price.basis != mla::PriceBasis::kMeasured || price.time_us != pt.time_us))
        std::abort();
    }
  }
  return 0;
}
