// utc_time.cc: UTC timestamps (utc_time.h).
#include "vocab/utc_time.h"

namespace mla {

std::string UtcTime(std::time_t t, const char* format) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  const size_t n = std::strftime(buf, sizeof buf, format, &tm);
  return std::string(buf, n);
}

std::string UtcNow() { return UtcTime(std::time(nullptr)); }

}  // namespace mla
