#include "libmlallreduce/cuda/cuda_util.h"

#include "libmlallreduce/device/device_module.h"

namespace mla::lib {
namespace cuda {

// Set once by mla_device_module_init (module.cc).
extern const HostServices* g_services;

void Warn(const std::string& message) {
  if (g_services != nullptr && g_services->warn_once != nullptr) g_services->warn_once(message.c_str());
}

bool Verbose() { return g_services != nullptr && g_services->verbose > 0; }

bool SyncOnStream() { return g_services != nullptr && g_services->sync_on_stream != 0; }

size_t FlagMaxBytes() { return g_services != nullptr ? g_services->flag_max_bytes : 0; }

int CudaFailure(const char* what, cudaError_t error) {
  Warn(std::string(what) + " failed: " + cudaGetErrorString(error));
  cudaGetLastError();  // clear a non-sticky error
  return MPI_ERR_OTHER;
}

}  // namespace cuda
}  // namespace mla::lib
