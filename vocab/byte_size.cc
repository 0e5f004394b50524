#include "vocab/byte_size.h"

#include <cctype>

namespace mla {

bool ParseByteSize(std::string_view text, uint64_t* out) {
  size_t i = 0;
  uint64_t v = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    uint64_t d = static_cast<uint64_t>(text[i] - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
    ++i;
  }
  if (i == 0) return false;
  std::string suffix;
  for (; i < text.size(); ++i) suffix += static_cast<char>(std::tolower(static_cast<unsigned char>(text[i])));
  int shift;
  if (suffix.empty() || suffix == "b")
    shift = 0;
  else if (suffix == "k" || suffix == "kib")
    shift = 10;
  else if (suffix == "m" || suffix == "mib")
    shift = 20;
  else if (suffix == "g" || suffix == "gib")
    shift = 30;
  else if (suffix == "t" || suffix == "tib")
    shift = 40;
  else
    return false;
  if (shift > 0 && v > (UINT64_MAX >> shift)) return false;
  *out = v << shift;
  return true;
}

std::string FormatByteSize(uint64_t bytes) {
  static const char* kSuffix[] = {"", "K", "M", "G", "T"};
  int i = 0;
  while (i < 4 && bytes != 0 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++i;
  }
  return std::to_string(bytes) + kSuffix[i];
}

}  // namespace mla
