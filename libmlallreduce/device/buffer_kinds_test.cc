// Issue 23 N15: with libcuda loaded but the CUDA module missing, device
// pointers reached the host algorithms (as host buffers) while the warning
// said they went to the system MPI.
#include "libmlallreduce/device/buffer_kinds.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdint>

namespace mla::lib {
namespace {

int ClassifyAsDevice(const void*, const void*) { return kBuffersDevice; }

// A loaded module with only `classify`: what ClassifyBuffers asks of it.
DeviceModule FakeModule() {
  DeviceModule m{};
  m.abi = kDeviceModuleAbi;
  m.classify = ClassifyAsDevice;
  return m;
}

TEST(ClassifyBuffers, NoCudaInTheProcessMeansHostMemory) {
  int buf[2] = {0, 0};
  EXPECT_EQ(ClassifyBuffers(false, nullptr, &buf[0], &buf[1]), kBuffersHost);
}

TEST(ClassifyBuffers, CudaWithoutItsModuleIsUnknownNeverHost) {
  int buf[2] = {0, 0};
  // No driver to ask in this process (ctest runs each test alone): without
  // the module and the driver nothing proves a pointer is host memory.
  EXPECT_EQ(ClassifyBuffers(true, nullptr, &buf[0], &buf[1]), kBuffersUnknown);
  EXPECT_EQ(ClassifyBuffers(true, nullptr, MPI_IN_PLACE, &buf[1]), kBuffersUnknown);
}

TEST(ClassifyBuffers, TheLoadedModuleDecides) {
  const DeviceModule m = FakeModule();
  int buf[2] = {0, 0};
  EXPECT_EQ(ClassifyBuffers(true, &m, &buf[0], &buf[1]), kBuffersDevice);
  // A tool may load the module before the driver shows up: it still decides.
  EXPECT_EQ(ClassifyBuffers(false, &m, &buf[0], &buf[1]), kBuffersDevice);
}

// The GPU host's hang: with a job report, NVML loaded libcuda into rank 0
// only; rank 0 then sent every call to the system MPI while the other ranks
// ran the profile's lane, and the job hung.  Without the module the driver
// now says where each buffer lives (a fake driver here: CUDA not initialised
// for every pointer but one, which it calls device memory).
TEST(ClassifyBuffers, WithoutTheModuleTheDriverSaysWhereBuffersLive) {
  ASSERT_NE(dlopen(MLA_FAKE_CUDA_PATH, RTLD_NOW | RTLD_GLOBAL), nullptr) << dlerror();
  int buf[2] = {0, 0};
  EXPECT_EQ(ClassifyBuffers(true, nullptr, &buf[0], &buf[1]), kBuffersHost);
  EXPECT_EQ(ClassifyBuffers(true, nullptr, MPI_IN_PLACE, &buf[1]), kBuffersHost);
  auto* device = reinterpret_cast<void*>(static_cast<std::uintptr_t>(0xd000000000ull));
  EXPECT_EQ(ClassifyBuffers(true, nullptr, &buf[0], device), kBuffersUnknown);
  EXPECT_EQ(ClassifyBuffers(true, nullptr, device, &buf[1]), kBuffersUnknown);
  EXPECT_EQ(ClassifyBuffers(true, nullptr, MPI_IN_PLACE, device), kBuffersUnknown);
}

}  // namespace
}  // namespace mla::lib
