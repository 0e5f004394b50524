// cuda_presence.h: whether this process has loaded the CUDA driver, cheaply
// enough to ask on every MPI_Allreduce.
#ifndef MLA_CUDA_PRESENCE_H_
#define MLA_CUDA_PRESENCE_H_

namespace mla::lib {

// Returns true once the CUDA driver library (libcuda.so*) is among the
// process's loaded objects.  While nothing was loaded since the last call it
// costs one pointer load, without a lock (cuda_presence.cc says how): the
// last object of the loader's main list at the walk is pinned (never
// unloaded, RTLD_NODELETE) and watched.  Otherwise one walk over the loaded
// objects.  Objects loaded into another link namespace (dlmopen) are seen
// only at a walk.  A `dlopen(..., RTLD_NOLOAD)` per call would cost about
// 10 us, a dl_iterate_phdr per call a lock.  Thread-safe.
bool CudaDriverLoaded();

}  // namespace mla::lib

#endif  // MLA_CUDA_PRESENCE_H_
