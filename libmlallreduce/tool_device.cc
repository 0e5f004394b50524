// tool_device.cc: device memory for multilane's tools (tool_device.h).
#include "libmlallreduce/tool_device.h"

#include <string>

#include "libmlallreduce/device_loader.h"
#include "mlallreduce.h"

#define MLA_TOOL_EXPORT __attribute__((visibility("default")))

namespace {
thread_local std::string ignored;  // the reason, for mla_tool_gpu_count to tell
}  // namespace

extern "C" {

MLA_TOOL_EXPORT int mla_tool_gpu_count(const char** why) {
  static thread_local std::string reason;
  const mla::lib::DeviceModule* m = mla::lib::LoadDeviceModule(&reason);
  int count = 0;
  if (m == nullptr) {
    if (why != nullptr) *why = reason.c_str();
    return 0;
  }
  if (m->gpu_count(&count) != 0 || count <= 0) {
    if (why != nullptr) *why = "CUDA sees no GPU in this process (check CUDA_VISIBLE_DEVICES and the driver)";
    return 0;
  }
  return count;
}

MLA_TOOL_EXPORT void* mla_tool_device_alloc(int device, size_t bytes) {
  const mla::lib::DeviceModule* m = mla::lib::LoadDeviceModule(&ignored);
  void* ptr = nullptr;
  if (m == nullptr || m->buffer_alloc(device, bytes, &ptr) != 0) return nullptr;
  return ptr;
}

MLA_TOOL_EXPORT void mla_tool_device_free(void* ptr) {
  if (ptr == nullptr) return;  // nothing to free: do not load the module for it
  const mla::lib::DeviceModule* m = mla::lib::LoadDeviceModule(&ignored);
  if (m != nullptr) m->buffer_free(ptr);
}

MLA_TOOL_EXPORT int mla_tool_memcpy(void* dst, const void* src, size_t bytes) {
  const mla::lib::DeviceModule* m = mla::lib::LoadDeviceModule(&ignored);
  return m != nullptr && m->buffer_copy(dst, src, bytes) == 0 ? 0 : -1;
}

}  // extern "C"
