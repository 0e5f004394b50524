// buffer_kinds.cc: ClassifyBuffers (buffer_kinds.h).
#include "libmlallreduce/device/buffer_kinds.h"

#include <mpi.h>

#include <atomic>
#include <cstdint>

#include "libmlallreduce/base/loaded_symbol.h"

namespace mla::lib {
namespace {

// The CUDA driver API's own values (cuda.h), so that no CUDA header is needed.
constexpr int kCuSuccess = 0;
constexpr int kCuErrorStubLibrary = 34;      // the toolkit's stub libcuda, no driver
constexpr int kCuAttributeMemoryType = 2;    // CU_POINTER_ATTRIBUTE_MEMORY_TYPE
constexpr int kCuAttributeIsManaged = 8;     // CU_POINTER_ATTRIBUTE_IS_MANAGED
constexpr unsigned kCuMemoryTypeDevice = 2;  // CU_MEMORYTYPE_DEVICE
constexpr unsigned kCuMemoryTypeArray = 3;   // CU_MEMORYTYPE_ARRAY

using PointerGetAttributes = int (*)(unsigned count, int* attributes, void** data, unsigned long long ptr);

// cuPointerGetAttributes of the driver in the process, null while there is
// none.  Not cuPointerGetAttribute: on host memory it fails slowly (about
// 940 ns on the H100 host, against 107 for this one, which answers with
// zeroes).
PointerGetAttributes DriverQuery() {
  static std::atomic<PointerGetAttributes> cached{nullptr};
  if (PointerGetAttributes fn = cached.load(std::memory_order_acquire)) return fn;
  auto fn = reinterpret_cast<PointerGetAttributes>(LoadedSymbol("libcuda.so.1", "cuPointerGetAttributes"));
  if (fn == nullptr) return nullptr;
  cached.store(fn, std::memory_order_release);
  return fn;
}

// 1: device memory, 0: memory the host can read (the CUDA module's rule:
// unregistered, pinned or managed memory, or any pointer the driver does not
// know), -1: the driver cannot tell (no driver, or the toolkit's stub).
int DriverPointerKind(PointerGetAttributes query, const void* p) {
  const auto address = static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(p));
  unsigned type = 0, managed = 0;
  int attributes[2] = {kCuAttributeMemoryType, kCuAttributeIsManaged};
  void* values[2] = {&type, &managed};
  const int rc = query(2, attributes, values, address);
  if (rc == kCuErrorStubLibrary) return -1;
  if (rc != kCuSuccess) return 0;
  if (type != kCuMemoryTypeDevice && type != kCuMemoryTypeArray) return 0;
  return managed != 0 ? 0 : 1;
}

}  // namespace

int ClassifyBuffers(bool cuda_in_process, const DeviceModule* module, const void* sendbuf, const void* recvbuf) {
  if (module != nullptr) return module->classify(sendbuf, recvbuf);
  if (!cuda_in_process) return kBuffersHost;
  // The driver answers for the buffer itself, the same on every rank whatever
  // else a rank has loaded (NVML brings libcuda into one rank per host).
  PointerGetAttributes query = DriverQuery();
  if (query == nullptr) return kBuffersUnknown;
  const int recv = DriverPointerKind(query, recvbuf);
  const int send = sendbuf == MPI_IN_PLACE ? recv : DriverPointerKind(query, sendbuf);
  return recv == 0 && send == 0 ? kBuffersHost : kBuffersUnknown;
}

}  // namespace mla::lib
