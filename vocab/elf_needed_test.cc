// elf_needed_test.cc: DT_NEEDED of real programs and of broken files.
#include "vocab/elf_needed.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace mla {
namespace {

bool Has(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

TEST(ElfNeeded, ThisTestNeedsTheCLibrary) {
  std::vector<std::string> needed;
  std::string why;
  ASSERT_TRUE(ElfNeeded("/proc/self/exe", &needed, &why)) << why;
  EXPECT_TRUE(Has(needed, "libc.so.6"));
}

TEST(ElfNeeded, MpiProgramsNameTheirMpi) {
  std::vector<std::string> needed;
  std::string why;
  // Debian's own programs of each family (ompi_info: Open MPI; mpichversion: MPICH).
  ASSERT_TRUE(ElfNeeded("/usr/bin/ompi_info", &needed, &why)) << why;
  EXPECT_TRUE(Has(needed, "libmpi.so.40")) << needed.size();
  ASSERT_TRUE(ElfNeeded("/usr/bin/mpichversion", &needed, &why)) << why;
  EXPECT_TRUE(Has(needed, "libmpich.so.12")) << needed.size();
}

TEST(ElfNeeded, RefusesWhatIsNotElf) {
  std::vector<std::string> needed;
  std::string why;
  EXPECT_FALSE(ElfNeededFromImage("#!/bin/sh\necho hi\n", &needed, &why));
  EXPECT_EQ(why, "not an ELF file");
  EXPECT_FALSE(ElfNeeded("/nonexistent/program", &needed, &why));
  EXPECT_FALSE(ElfNeeded("/", &needed, &why));
}

TEST(ElfNeeded, TruncatedImagesFailCleanly) {
  std::ifstream in("/proc/self/exe", std::ios::binary);
  std::stringstream all;
  all << in.rdbuf();
  const std::string image = all.str();
  std::vector<std::string> needed;
  std::string why;
  for (size_t cut : {size_t{4}, size_t{64}, size_t{200}, size_t{1000}, image.size() / 2}) {
    ElfNeededFromImage(std::string_view(image).substr(0, cut), &needed, &why);  // must not crash
  }
  ASSERT_TRUE(ElfNeededFromImage(image, &needed, &why)) << why;
  EXPECT_TRUE(Has(needed, "libc.so.6"));
}

}  // namespace
}  // namespace mla
