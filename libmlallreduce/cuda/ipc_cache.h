// ipc_cache.h: CUDA IPC handles for device buffers shared between the
// processes of a node.  Opening a handle costs tens of microseconds or more,
// so both ends are cached: exported handles by allocation, opened peer
// allocations by (process, allocation id).  An allocation freed and another
// made at the same address gets a new id, so a stale mapping is never reused.
#ifndef MLA_CUDA_IPC_CACHE_H_
#define MLA_CUDA_IPC_CACHE_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace mla::lib {
namespace cuda {

// What a process tells its peers about one of its buffers: enough to map it.
struct ExportedBuffer {
  cudaIpcMemHandle_t handle;
  uint64_t buffer_id;  // unique per allocation within the exporting process
  uint64_t offset;     // of the buffer from the allocation's base
  int32_t pid;
  int32_t valid;  // 0 when the buffer cannot be shared (e.g. pool memory)
};

// Fills *out for `ptr` (device memory of the current device).  Thread-safe.
// Returns false (out->valid = 0) when the allocation cannot be exported.
bool ExportBuffer(const void* ptr, ExportedBuffer* out);

// Returns a pointer to a peer's buffer, opening its allocation on first use,
// or nullptr with *error set when it cannot be opened.  Thread-safe.
void* ImportBuffer(const ExportedBuffer& peer, cudaError_t* error);

// Counters for tests: handles opened, lookups served from the cache.
struct IpcCacheStats {
  uint64_t opened = 0;
  uint64_t hits = 0;
  uint64_t closed = 0;
};
IpcCacheStats GetIpcCacheStats();

}  // namespace cuda
}  // namespace mla::lib

#endif  // MLA_CUDA_IPC_CACHE_H_
