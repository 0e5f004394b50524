// device_loader.h: finding the CUDA module (libmlallreduce_cuda.so, next to
// libmlallreduce.so) when, and only when, the process uses CUDA.
#ifndef MLA_DEVICE_LOADER_H_
#define MLA_DEVICE_LOADER_H_

#include "device_module.h"

namespace mla {

// Returns the CUDA module, loading it on the first call made after the
// process loaded the CUDA driver (a process that never loaded libcuda.so.1
// cannot hold device buffers, so nothing is loaded or initialised for it).
// Returns nullptr when CUDA is not in use or the module cannot be loaded (one
// warning then says why).  Thread-safe; cheap once loaded.
const DeviceModule* DeviceModuleIfCudaInUse();

}  // namespace mla

#endif  // MLA_DEVICE_LOADER_H_
