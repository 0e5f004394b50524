// fuzz_options.cc: the `--multilane[=ITEM,...]` grammar (vocab/user_options.h).
#include <cstdint>
#include <cstdlib>
#include <string>

#include "vocab/user_options.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string value(reinterpret_cast<const char*>(data), size);  // cut at a NUL, as Slurm gives it
  mla::UserOptions o;
  std::string error;
  if (!mla::ParseUserOptions(value.c_str(), &o, &error)) {
    if (error.empty()) std::abort();
    return 0;
  }
  if (o.ranks_per_gpu < 0) std::abort();
  return 0;
}
