// gtest_filter_check.h: the positive patterns of --gtest_filter that match
// no registered test, for the test programs' own main() (issue 27: a filter
// of "DeviceAlgorithms.*" matched none of the parameterised
// "All/DeviceAlgorithms.*" and the run passed with less than it named).
#ifndef MLA_TESTS_GTEST_FILTER_CHECK_H_
#define MLA_TESTS_GTEST_FILTER_CHECK_H_

#include <fnmatch.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace mlatest {

// Call after testing::InitGoogleTest; "" when every pattern matches a test.
inline std::string FilterPatternsMatchingNothing() {
  std::string filter = GTEST_FLAG_GET(filter);
  const size_t dash = filter.find('-');
  if (dash != std::string::npos) filter.resize(dash);
  const testing::UnitTest& unit = *testing::UnitTest::GetInstance();
  std::string none;
  std::istringstream patterns(filter);
  for (std::string p; std::getline(patterns, p, ':');) {
    if (p.empty()) continue;
    bool matched = false;
    for (int i = 0; i < unit.total_test_suite_count() && !matched; ++i) {
      const testing::TestSuite& suite = *unit.GetTestSuite(i);
      for (int j = 0; j < suite.total_test_count() && !matched; ++j) {
        const std::string full = std::string(suite.name()) + "." + suite.GetTestInfo(j)->name();
        matched = fnmatch(p.c_str(), full.c_str(), 0) == 0;
      }
    }
    if (!matched) none += (none.empty() ? "" : " ") + p;
  }
  return none;
}

}  // namespace mlatest

#endif  // MLA_TESTS_GTEST_FILTER_CHECK_H_
