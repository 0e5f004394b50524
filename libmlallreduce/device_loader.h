// device_loader.h: finding the CUDA module (libmlallreduce_cuda.so, next to
// libmlallreduce.so) when, and only when, the process uses CUDA.
#ifndef MLA_DEVICE_LOADER_H_
#define MLA_DEVICE_LOADER_H_

#include <string>

#include "libmlallreduce/device/device_module.h"

namespace mla::lib {

// Returns the CUDA module, loading it on the first call made after the
// process loaded the CUDA driver (a process that never loaded libcuda.so.1
// cannot hold device buffers, so nothing is loaded or initialised for it).
// Returns nullptr when CUDA is not in use or the module cannot be loaded (one
// warning then says why).  Thread-safe; cheap once loaded.
const DeviceModule* DeviceModuleIfCudaInUse();

// Loads the CUDA module whether or not the process uses CUDA yet.  With
// `why_not` null, as DeviceModuleIfCudaInUse (one warning when it cannot be
// loaded); else nothing is printed and *why_not says why it cannot be used,
// for tools that allocate device memory through it (tool_device.h) and
// report their own error.  Thread-safe.
const DeviceModule* LoadDeviceModule(std::string* why_not);

}  // namespace mla::lib

#endif  // MLA_DEVICE_LOADER_H_
