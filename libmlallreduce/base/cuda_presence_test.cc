#include "libmlallreduce/base/cuda_presence.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

namespace mla::lib {
namespace {

TEST(CudaDriverLoaded, FalseUntilTheDriverIsLoadedThenTrue) {
  EXPECT_FALSE(CudaDriverLoaded());
  EXPECT_FALSE(CudaDriverLoaded()) << "asking twice changes nothing";
  // Loading an unrelated library must not make it true.
  void* other = dlopen("libm.so.6", RTLD_NOW);
  EXPECT_FALSE(CudaDriverLoaded());
  // The CUDA toolkit's driver stub stands in for the driver on hosts without a GPU.
  const char* kStub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (access(kStub, R_OK) != 0) GTEST_SKIP() << kStub << " not found (no CUDA toolkit here)";
  void* driver = dlopen(kStub, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(driver, nullptr) << dlerror();
  EXPECT_TRUE(CudaDriverLoaded());
  if (other) dlclose(other);
}

}  // namespace
}  // namespace mla::lib
