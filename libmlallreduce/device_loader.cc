#include "libmlallreduce/device_loader.h"

#include <dlfcn.h>

#include "vocab/mpi_families.h"

#include <atomic>
#include <mutex>
#include <string>

#include "libmlallreduce/base/cuda_presence.h"
#include "libmlallreduce/base/log.h"
#include "libmlallreduce/runtime.h"

namespace mla::lib {
namespace {

std::atomic<const DeviceModule*> g_module{nullptr};
std::atomic<bool> g_given_up{false};
std::mutex g_mutex;

void WarnFromModule(const char* message) { WarnOnce(message); }

// What a process with CUDA but without the module does (buffer_kinds.h).
constexpr char kWithoutModule[] =
    ": every MPI_Allreduce of this process goes to the system MPI unchanged unless the CUDA driver says both "
    "buffers are host memory";

std::string ModulePath() {
  Dl_info info;
  std::string dir = ".";
  if (dladdr(reinterpret_cast<void*>(&DeviceModuleIfCudaInUse), &info) != 0 && info.dli_fname != nullptr) {
    std::string self = info.dli_fname;
    size_t slash = self.rfind('/');
    if (slash != std::string::npos) dir = self.substr(0, slash);
  }
  // The CUDA module is built for the Open MPI family only (docs/gpu.md).
  return dir + "/" + FamilyCudaModuleFile(MLA_MPI_FAMILY);
}

}  // namespace

const DeviceModule* DeviceModuleIfCudaInUse() {
  if (const DeviceModule* m = g_module.load(std::memory_order_acquire)) return m;
  if (g_given_up.load(std::memory_order_relaxed)) return nullptr;
  if (!CudaDriverLoaded()) return nullptr;
  return LoadDeviceModule(nullptr);
}

const DeviceModule* LoadDeviceModule(std::string* why_not) {
  if (const DeviceModule* m = g_module.load(std::memory_order_acquire)) return m;
  std::lock_guard<std::mutex> lock(g_mutex);
  if (const DeviceModule* m = g_module.load()) return m;
  // The reason is kept for a tool that asks after the first failure.
  static std::string reason;
  auto give_up = [&](const std::string& problem) -> const DeviceModule* {
    if (!g_given_up.exchange(true)) {
      reason = problem;
      if (why_not == nullptr) WarnOnce(problem);
    }
    if (why_not != nullptr) *why_not = reason;
    return nullptr;
  };
  if (g_given_up.load()) return give_up(reason);
  const std::string path = ModulePath();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return give_up("this process uses CUDA but the CUDA module " + path + " cannot be loaded (" + (why ? why : "?") +
                   ")" + kWithoutModule +
                   "; install multilane-cuda (or build multilane with nvcc) to use device buffers");
  }
  using Init = const DeviceModule* (*)(const HostServices*);
  auto init = reinterpret_cast<Init>(dlsym(handle, "mla_device_module_init"));
  static HostServices services;
  services.warn_once = WarnFromModule;
  services.verbose = CurrentConfig().verbose;
  services.sync_on_stream = CurrentConfig().device_sync_stream ? 1 : 0;
  services.flag_max_bytes = CurrentConfig().device_flag_max;
  const DeviceModule* m = init != nullptr ? init(&services) : nullptr;
  if (m == nullptr || m->abi != kDeviceModuleAbi) {
    return give_up(m == nullptr ? std::string("the CUDA module found no usable GPU") + kWithoutModule +
                                      "; check that the process sees a GPU (nvidia-smi, CUDA_VISIBLE_DEVICES) and "
                                      "that the NVIDIA driver supports multilane's CUDA version"
                                : "the CUDA module " + path + " is from another multilane build" + kWithoutModule +
                                      "; reinstall multilane");
  }
  g_module.store(m, std::memory_order_release);
  return m;
}

}  // namespace mla::lib
