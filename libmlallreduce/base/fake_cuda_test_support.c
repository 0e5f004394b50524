/* fake_cuda_test_support.c: a stand-in libcuda.so.1 for the unit test of ClassifyBuffers
 * without the CUDA module (buffer_kinds_test.cc): what a process has when
 * something other than the application loaded the driver (NVML in the job
 * report's sampler does, on one rank per host).  cuPointerGetAttributes says
 * CUDA is not initialised for every pointer, as the real driver does in a
 * process that never called cuInit, except for FAKE_CUDA_DEVICE_POINTER,
 * which it calls device memory.  Never installed. */
#include <stdint.h>

#define FAKE_CUDA_DEVICE_POINTER 0xd000000000ull

enum { kSuccess = 0, kNotInitialized = 3 };
enum { kAttributeMemoryType = 2, kAttributeIsManaged = 8 };
enum { kMemoryTypeDevice = 2 };

int cuPointerGetAttributes(unsigned count, int* attributes, void** data, unsigned long long ptr) {
  if (ptr != FAKE_CUDA_DEVICE_POINTER) return kNotInitialized;
  for (unsigned i = 0; i < count; ++i) {
    if (attributes[i] == kAttributeMemoryType)
      *(unsigned int*)data[i] = kMemoryTypeDevice;
    else if (attributes[i] == kAttributeIsManaged)
      *(unsigned int*)data[i] = 0;
  }
  return kSuccess;
}
