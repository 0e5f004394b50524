// buffer_kinds.h: what the library may assume about a call's buffers, from
// whether the process has CUDA and whether the CUDA module is loaded.
#ifndef MLA_BUFFER_KINDS_H_
#define MLA_BUFFER_KINDS_H_

#include "libmlallreduce/device/device_module.h"

namespace mla::lib {

// Returns the kinds of a call's buffers (BufferKinds) as far as this process
// can tell: kBuffersHost when it has no CUDA (no device memory can exist),
// module->classify when the CUDA module is loaded.  When CUDA is in the
// process but the module is not (it could not load), the driver's own
// cuPointerGetAttribute decides: kBuffersHost when both buffers are memory
// the host can read (the module's rule), else kBuffersUnknown, which sends
// the call to the system MPI unchanged; kBuffersUnknown also when the driver
// cannot answer (the toolkit's stub).  The answer depends on the buffers, not
// on what else a rank has loaded, so ranks whose buffers are alike decide alike.
int ClassifyBuffers(bool cuda_in_process, const DeviceModule* module, const void* sendbuf, const void* recvbuf);

}  // namespace mla::lib

#endif  // MLA_BUFFER_KINDS_H_
