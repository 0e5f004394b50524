// verbose_level.cc: VerboseLevel (verbose_level.h).
#include "vocab/verbose_level.h"

namespace mla {

int VerboseLevel(std::string_view value) {
  if (value.empty() || value == "0") return 0;
  for (char c : value)
    if (c < '0' || c > '9') return -1;
  const size_t first = value.find_first_not_of('0');
  if (first == std::string_view::npos || value.size() - first > 7) return -1;  // "00", or above 9999999
  int level = 0;
  for (char c : value.substr(first)) level = level * 10 + (c - '0');
  return level;
}

}  // namespace mla
