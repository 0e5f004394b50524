// cuda_presence.h: whether this process has loaded the CUDA driver, cheaply
// enough to ask on every MPI_Allreduce.
#ifndef MLA_CUDA_PRESENCE_H_
#define MLA_CUDA_PRESENCE_H_

namespace mla::lib {

// Returns true once the CUDA driver library (libcuda.so*) is among the
// process's loaded objects.  Costs about 10 ns while nothing new was loaded
// since the last call (the loader's count of added objects is compared), and
// a walk over the loaded objects only when that count changed.  A
// `dlopen(..., RTLD_NOLOAD)` per call would cost about 10 us.  Thread-safe.
bool CudaDriverLoaded();

}  // namespace mla::lib

#endif  // MLA_CUDA_PRESENCE_H_
