#include "libmlallreduce/cuda/ipc_cache.h"

#include <cuda.h>
#include <unistd.h>

#include <cstring>
#include <list>
#include <map>
#include <mutex>
#include <utility>

namespace mla::lib {
namespace cuda {
namespace {

constexpr size_t kMaxOpen = 1024;  // peer allocations kept open

struct Exported {
  uint64_t buffer_id;
  cudaIpcMemHandle_t handle;
};

struct Imported {
  void* base;
  std::list<std::pair<int32_t, uint64_t>>::iterator lru;
};

std::mutex g_mutex;
std::map<uintptr_t, Exported> g_exported;                     // by allocation base
std::map<std::pair<int32_t, uint64_t>, Imported> g_imported;  // by (pid, buffer id)
std::list<std::pair<int32_t, uint64_t>> g_lru;                // most recent first
IpcCacheStats g_stats;

}  // namespace

bool ExportBuffer(const void* ptr, ExportedBuffer* out) {
  std::memset(out, 0, sizeof(*out));
  out->pid = static_cast<int32_t>(getpid());
  CUdeviceptr base = 0;
  size_t size = 0;
  unsigned long long buffer_id = 0;
  if (cuMemGetAddressRange(&base, &size, reinterpret_cast<CUdeviceptr>(ptr)) != CUDA_SUCCESS ||
      cuPointerGetAttribute(&buffer_id, CU_POINTER_ATTRIBUTE_BUFFER_ID, reinterpret_cast<CUdeviceptr>(ptr)) !=
          CUDA_SUCCESS) {
    return false;
  }
  out->offset = reinterpret_cast<uintptr_t>(ptr) - static_cast<uintptr_t>(base);
  out->buffer_id = buffer_id;
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = g_exported.find(static_cast<uintptr_t>(base));
  if (it == g_exported.end() || it->second.buffer_id != buffer_id) {
    Exported e{buffer_id, {}};
    if (cudaIpcGetMemHandle(&e.handle, reinterpret_cast<void*>(base)) != cudaSuccess) {
      cudaGetLastError();  // clear the sticky-free error state of the runtime
      return false;
    }
    it = g_exported.insert_or_assign(static_cast<uintptr_t>(base), e).first;
  }
  out->handle = it->second.handle;
  out->valid = 1;
  return true;
}

void* ImportBuffer(const ExportedBuffer& peer, cudaError_t* error) {
  *error = cudaSuccess;
  if (!peer.valid) {
    *error = cudaErrorInvalidValue;
    return nullptr;
  }
  const auto key = std::make_pair(peer.pid, peer.buffer_id);
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = g_imported.find(key);
  if (it != g_imported.end()) {
    g_lru.splice(g_lru.begin(), g_lru, it->second.lru);
    ++g_stats.hits;
    return static_cast<char*>(it->second.base) + peer.offset;
  }
  while (g_imported.size() >= kMaxOpen && !g_lru.empty()) {
    auto victim = g_imported.find(g_lru.back());
    cudaIpcCloseMemHandle(victim->second.base);
    g_imported.erase(victim);
    g_lru.pop_back();
    ++g_stats.closed;
  }
  void* base = nullptr;
  cudaError_t rc = cudaIpcOpenMemHandle(&base, peer.handle, cudaIpcMemLazyEnablePeerAccess);
  if (rc != cudaSuccess) {
    cudaGetLastError();
    *error = rc;
    return nullptr;
  }
  g_lru.push_front(key);
  g_imported[key] = Imported{base, g_lru.begin()};
  ++g_stats.opened;
  return static_cast<char*>(base) + peer.offset;
}

IpcCacheStats GetIpcCacheStats() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_stats;
}

}  // namespace cuda
}  // namespace mla::lib
