// cuda_presence.h: whether this process has loaded the CUDA driver, cheaply
// enough to ask on every MPI_Allreduce.
#ifndef MLA_CUDA_PRESENCE_H_
#define MLA_CUDA_PRESENCE_H_

#include <link.h>

#include <atomic>

namespace mla::lib {

namespace cuda_presence_internal {
// What the per-call check reads, in one cache line.
struct alignas(64) Presence {
  std::atomic<bool> loaded{false};
  std::atomic<link_map*> tail{nullptr};  // pinned last object of the main list at a walk without the driver
};
extern Presence g_presence;
// The check past its one-load answer: a walk over the loaded objects.
bool CudaDriverLoadedSlow();
}  // namespace cuda_presence_internal

// Returns true once the CUDA driver library (libcuda.so*) is among the
// process's loaded objects.  While nothing was loaded since the last call it
// costs one pointer load, without a lock (cuda_presence.cc says how): the
// last object of the loader's main list at the walk is pinned (never
// unloaded, RTLD_NODELETE) and watched.  Otherwise one walk over the loaded
// objects.  Objects loaded into another link namespace (dlmopen) are seen
// only at a walk.  A `dlopen(..., RTLD_NOLOAD)` per call would cost about
// 10 us, a dl_iterate_phdr per call a lock.  Thread-safe.
inline bool CudaDriverLoaded() {
  cuda_presence_internal::Presence& p = cuda_presence_internal::g_presence;
  if (p.loaded.load(std::memory_order_relaxed)) return true;
  link_map* tail = p.tail.load(std::memory_order_acquire);
  if (tail != nullptr && __atomic_load_n(&tail->l_next, __ATOMIC_ACQUIRE) == nullptr) return false;
  return cuda_presence_internal::CudaDriverLoadedSlow();
}

}  // namespace mla::lib

#endif  // MLA_CUDA_PRESENCE_H_
