// fresh_test_folder.h: for unit tests only (it includes GoogleTest): an empty
// folder of the test's own under GoogleTest's temporary folder.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace mla {

// Makes TempDir()/NAME_PID empty (removing what an earlier run left there)
// and returns its path.  NAME says which test file and case it belongs to.
inline std::string FreshTestFolder(const std::string& name) {
  const std::string d = ::testing::TempDir() + name + "_" + std::to_string(getpid());
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

}  // namespace mla
