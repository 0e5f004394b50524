// cuda_presence.cc: CudaDriverLoaded (cuda_presence.h).
//
// The per-call check costs no lock.  A walk of the loaded objects (under the
// loader's lock, through dl_iterate_phdr) looks for the driver; when it finds
// none it also notes the last object of the main link map (the list the
// loader appends every newly loaded object to, _r_debug.r_map) and pins that
// object (RTLD_NODELETE) so that it is never unloaded.  Until that object's
// l_next is set again, nothing was loaded since the walk: the driver is still
// not there, with one pointer load.  A program that gets device memory got it
// after the driver's dlopen returned, which set l_next before, and handed the
// pointer to the calling thread in an order the program made, so the load
// sees it.
#include "libmlallreduce/base/cuda_presence.h"

#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <cstring>
#include <string>

namespace mla::lib {
namespace {

std::atomic<unsigned long long> g_checked_adds{~0ull};  // loader's add count at the last walk
cuda_presence_internal::Presence& g = cuda_presence_internal::g_presence;

struct Walk {
  unsigned long long adds = 0;
  bool found = false;
  link_map* tail = nullptr;
  std::string tail_name;
};

// Under the loader's lock: the add count, whether the driver is loaded, and
// the main list's last object.
int Visit(dl_phdr_info* info, size_t, void* data) {
  auto* walk = static_cast<Walk*>(data);
  if (walk->tail == nullptr) {
    walk->adds = info->dlpi_adds;
    for (link_map* m = _r_debug.r_map; m != nullptr; m = m->l_next) walk->tail = m;
    if (walk->tail != nullptr && walk->tail->l_name != nullptr) walk->tail_name = walk->tail->l_name;
  }
  const char* name = info->dlpi_name;
  if (name == nullptr) return 0;
  const char* slash = std::strrchr(name, '/');
  const char* base = slash ? slash + 1 : name;
  if (std::strncmp(base, "libcuda.so", 10) == 0) {
    walk->found = true;
    return 1;
  }
  return 0;
}

// Pins the object `walk` found last, when dlopen by its name gives that very
// object (in glibc a handle is the object's link_map), and watches it.
void WatchTail(const Walk& walk) {
  if (walk.tail == nullptr || walk.tail_name.empty()) return;
  void* handle = dlopen(walk.tail_name.c_str(), RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
  if (handle == nullptr) return;
  if (handle != static_cast<void*>(walk.tail)) {
    dlclose(handle);
    return;
  }
  g.tail.store(walk.tail, std::memory_order_release);  // the reference stays: never unloaded
}

int ReadAdds(dl_phdr_info* info, size_t, void* data) {
  *static_cast<unsigned long long*>(data) = info->dlpi_adds;
  return 1;  // the first object is enough
}

}  // namespace

namespace cuda_presence_internal {

Presence g_presence;

bool CudaDriverLoadedSlow() {
  if (g.loaded.load(std::memory_order_relaxed)) return true;
  unsigned long long adds = 0;
  dl_iterate_phdr(ReadAdds, &adds);
  if (adds == g_checked_adds.load(std::memory_order_relaxed)) return false;
  Walk walk;
  dl_iterate_phdr(Visit, &walk);
  g_checked_adds.store(walk.adds, std::memory_order_relaxed);
  if (walk.found) {
    g.loaded.store(true, std::memory_order_relaxed);
    return true;
  }
  WatchTail(walk);
  return false;
}

}  // namespace cuda_presence_internal

}  // namespace mla::lib
