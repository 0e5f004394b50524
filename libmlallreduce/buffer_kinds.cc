// buffer_kinds.cc: ClassifyBuffers (buffer_kinds.h).
#include "buffer_kinds.h"

namespace mla {

int ClassifyBuffers(bool cuda_in_process, const DeviceModule* module, const void* sendbuf, const void* recvbuf) {
  if (module != nullptr) return module->classify(sendbuf, recvbuf);
  return cuda_in_process ? kBuffersUnknown : kBuffersHost;
}

}  // namespace mla
