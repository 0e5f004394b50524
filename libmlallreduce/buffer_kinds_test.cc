// Issue 23 N15: with libcuda loaded but the CUDA module missing, device
// pointers reached the host algorithms (as host buffers) while the warning
// said they went to the system MPI.
#include "buffer_kinds.h"

#include <gtest/gtest.h>

namespace mla {
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
  // A real host pointer too: without the module nothing proves it is one.
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

}  // namespace
}  // namespace mla
