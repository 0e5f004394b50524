// fuzz_child_ids.cc: the reader of the kernel's list of a task's children
// (libmlallreduce/startup/one_program.h, ParseChildIds): whatever the text, it keeps
// at most the bound, and only positive ids.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "libmlallreduce/startup/one_program.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const size_t bound = size % 17;
  const auto ids = mla::lib::ParseChildIds(text, bound);
  if (ids.size() > bound) std::abort();
  for (long id : ids)
    if (id <= 0) std::abort();
  return 0;
}
