// fuzz_elf_needed.cc: the DT_NEEDED reader of program files
// (vocab/elf_needed.h), which `multilane resolve` runs on a job's program.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "vocab/elf_needed.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view image(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> needed;
  std::string why;
  if (mla::ElfNeededFromImage(image, &needed, &why)) {
    for (const std::string& n : needed)
      if (n.size() > size) std::abort();  // every name comes from the image
  } else if (why.empty()) {
    std::abort();  // a refusal always says why
  }
  return 0;
}
