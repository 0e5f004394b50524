#include "libmlallreduce/base/cuda_presence.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

namespace mla::lib {
namespace {

// One test: the answer, once true, stays true for the process.
TEST(CudaDriverLoaded, FalseUntilTheDriverIsLoadedThenTrue) {
  EXPECT_FALSE(CudaDriverLoaded());
  EXPECT_FALSE(CudaDriverLoaded()) << "asking twice changes nothing";
  // Loading an unrelated library must not make it true.
  void* other = dlopen("libm.so.6", RTLD_NOW);
  EXPECT_FALSE(CudaDriverLoaded());
  // A library new to the process becomes the last loaded object: the one the
  // check watches, pinned so that closing it leaves it loaded.
  const char* kNew = "libbz2.so.1.0";
  const bool fresh = dlopen(kNew, RTLD_NOW | RTLD_NOLOAD) == nullptr;
  void* added = fresh ? dlopen(kNew, RTLD_NOW) : nullptr;
  if (added != nullptr) {
    EXPECT_FALSE(CudaDriverLoaded());
    dlclose(added);
    void* still = dlopen(kNew, RTLD_NOW | RTLD_NOLOAD);
    EXPECT_NE(still, nullptr) << "the watched object was unloaded";
    if (still) dlclose(still);
    EXPECT_FALSE(CudaDriverLoaded()) << "nothing loaded since: the answer without a walk";
  }
  // The CUDA toolkit's driver stub stands in for the driver on hosts without a
  // GPU; loaded after the watched object, the next call must see it.
  const char* kStub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (access(kStub, R_OK) != 0) GTEST_SKIP() << kStub << " not found (no CUDA toolkit here)";
  void* driver = dlopen(kStub, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(driver, nullptr) << dlerror();
  EXPECT_TRUE(CudaDriverLoaded());
  if (other) dlclose(other);
}

}  // namespace
}  // namespace mla::lib
