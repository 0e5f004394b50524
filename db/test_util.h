// test_util.h: helpers shared by the db tests (not part of the library).
#ifndef MLDB_TEST_UTIL_H_
#define MLDB_TEST_UTIL_H_

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include <gtest/gtest.h>

#include "db/node_type.h"
#include "db/profile_store.h"

namespace mldb {
namespace testing_util {

// A fresh, empty folder under testing::TempDir(), unique per call: made by
// mkdtemp, so a folder an earlier run left behind under a reused process id
// is never handed out again (CI once failed on exactly that).
inline std::string NewTempDir() {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name =
      ::testing::TempDir() + "mldb_" +
      (info != nullptr ? std::string(info->test_suite_name()) + "." + info->name() : std::string("test")) + "_XXXXXX";
  if (mkdtemp(name.data()) == nullptr) ADD_FAILURE() << "mkdtemp " << name << " failed";
  chmod(name.c_str(), 0755);  // tests that drop to another user read it
  return name;
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// A fixed fingerprint; `variant` changes the CPU model.
inline NodeFingerprint TestFingerprint(int variant = 0) {
  NodeFingerprint f;
  f.cpu_model = "Test CPU " + std::to_string(variant);
  f.sockets = 2;
  f.cores = 64;
  f.numa_nodes = 2;
  f.gpus = {{"NVIDIA H200", 150754820096ULL, "NVLink", 18}, {"NVIDIA H200", 150754820096ULL, "NVLink", 18}};
  f.network_devices = {"ib0", "mlx5_0"};
  f.mpi_version = "Open MPI 4.1.5";
  f.cuda_driver_version = "12.4";
  return f;
}

// A small valid profile; `tag` goes into tuned_by and the text.
inline ProfileRecord TestProfile(const std::string& tag = "t", const std::string& partition = "",
                                 const std::string& library_version = "0.1.0",
                                 const std::string& mpi_version = "Open MPI 4.1.5") {
  ProfileRecord r;
  r.partition = partition;
  r.nodes = 2;
  r.ranks_per_gpu = 4;
  r.library_version = library_version;
  r.mpi_version = mpi_version;
  r.tuned_by = "tester-" + tag;
  r.duration_s = 12.5;
  r.profile_text = "multilane-profile 1 tag=" + tag +
                   "\nhost 0 256K passthrough\nhost 256K inf lane lanes=2 time_us=812 mpi_time_us=1304\n"
                   "device 1M inf split chunk=4M transport=nccl ppg=4\n";
  ProfileEntryRow a;
  a.mem_kind = "host";
  a.min_bytes = 0;
  a.max_bytes = 256 * 1024;
  a.algo = "passthrough";
  ProfileEntryRow b;
  b.mem_kind = "host";
  b.min_bytes = 256 * 1024;
  b.algo = "lane";
  b.lanes = 2;
  b.time_us = 812;
  b.mpi_time_us = 1304;
  ProfileEntryRow c;
  c.mem_kind = "device";
  c.min_bytes = 1 << 20;
  c.algo = "split";
  c.ppg = 4;
  c.chunk_bytes = 4 << 20;
  c.transport = "nccl";
  r.entries = {a, b, c};
  return r;
}

}  // namespace testing_util
}  // namespace mldb

#endif  // MLDB_TEST_UTIL_H_
