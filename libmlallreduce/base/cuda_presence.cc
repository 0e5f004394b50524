#include "libmlallreduce/base/cuda_presence.h"

#include <link.h>

#include <atomic>
#include <cstring>

namespace mla::lib {
namespace {

std::atomic<unsigned long long> g_checked_adds{~0ull};  // loader's add count at the last walk
std::atomic<bool> g_loaded{false};

int ReadAdds(dl_phdr_info* info, size_t, void* data) {
  *static_cast<unsigned long long*>(data) = info->dlpi_adds;
  return 1;  // the first object is enough
}

int FindDriver(dl_phdr_info* info, size_t, void* data) {
  const char* name = info->dlpi_name;
  if (name == nullptr) return 0;
  const char* slash = std::strrchr(name, '/');
  const char* base = slash ? slash + 1 : name;
  if (std::strncmp(base, "libcuda.so", 10) == 0) {
    *static_cast<bool*>(data) = true;
    return 1;
  }
  return 0;
}

}  // namespace

bool CudaDriverLoaded() {
  if (g_loaded.load(std::memory_order_relaxed)) return true;
  unsigned long long adds = 0;
  dl_iterate_phdr(ReadAdds, &adds);
  if (adds == g_checked_adds.load(std::memory_order_relaxed)) return false;
  bool found = false;
  dl_iterate_phdr(FindDriver, &found);
  g_checked_adds.store(adds, std::memory_order_relaxed);
  if (found) g_loaded.store(true, std::memory_order_relaxed);
  return found;
}

}  // namespace mla::lib
