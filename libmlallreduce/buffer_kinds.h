// buffer_kinds.h: what the library may assume about a call's buffers, from
// whether the process has CUDA and whether the CUDA module is loaded.
#ifndef MLA_BUFFER_KINDS_H_
#define MLA_BUFFER_KINDS_H_

#include "device_module.h"

namespace mla {

// Returns the kinds of a call's buffers (BufferKinds) as far as this process
// can tell: kBuffersHost when it has no CUDA (no device memory can exist),
// module->classify when the CUDA module is loaded, and kBuffersUnknown when
// CUDA is in the process but the module is not (it could not load): then no
// pointer is provably host memory, and the call must go to the system MPI
// unchanged, never to the host algorithms.
int ClassifyBuffers(bool cuda_in_process, const DeviceModule* module, const void* sendbuf, const void* recvbuf);

}  // namespace mla

#endif  // MLA_BUFFER_KINDS_H_
