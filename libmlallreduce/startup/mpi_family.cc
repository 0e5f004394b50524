// mpi_family.cc: which MPI family a process runs on (mpi_family.h).
#include "libmlallreduce/startup/mpi_family.h"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <cstring>
#include <vector>

namespace mla::lib {
namespace {

using GetVersionFn = int (*)(char*, int*);

// MPICH's MPI_MAX_LIBRARY_VERSION_STRING is 8192, Open MPI's 256.
constexpr int kVersionBuffer = 16384;

struct Search {
  GetVersionFn fn = nullptr;
};

int FindInObject(struct dl_phdr_info* info, size_t, void* data) {
  auto* search = static_cast<Search*>(data);
  if (info->dlpi_name == nullptr || info->dlpi_name[0] == '\0') return 0;
  void* handle = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr) return 0;
  void* sym = dlsym(handle, "PMPI_Get_library_version");
  dlclose(handle);
  if (sym == nullptr) return 0;
  search->fn = reinterpret_cast<GetVersionFn>(sym);
  return 1;
}

}  // namespace

std::string LoadedMpiVersion(std::string* path) {
  path->clear();
  auto fn = reinterpret_cast<GetVersionFn>(dlsym(RTLD_DEFAULT, "PMPI_Get_library_version"));
  if (fn == nullptr) {
    Search search;
    dl_iterate_phdr(FindInObject, &search);
    fn = search.fn;
  }
  if (fn == nullptr) return "";
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(fn), &info) != 0 && info.dli_fname != nullptr) {
    *path = info.dli_fname;
    // Promote the MPI to the global scope (a no-op when it is there already).
    if (void* h = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL)) dlclose(h);
  }
  std::vector<char> text(kVersionBuffer, '\0');
  int len = 0;
  if (fn(text.data(), &len) != 0) return "";
  text.back() = '\0';
  return std::string(text.data());
}

bool FindMpiAbiHandles(MpiFamily family, void* mpi, MpiAbiHandles* h) {
  switch (family) {
    case MpiFamily::kMpich:  // mpi.h of the MPICH ABI (MPICH 3.1 and later)
      h->comm_world = 0x44000000;
      h->unsigned_long_long = 0x4c000819;
      h->op_max = 0x58000001;
      h->in_place = reinterpret_cast<const void*>(static_cast<std::intptr_t>(-1));
      return true;
    case MpiFamily::kOpenMpi: {  // Open MPI's mpi.h: addresses of predefined objects
      // The global scope first: a program that names MPI_COMM_WORLD holds the
      // object itself (a copy relocation), and libmpi uses that copy; libmpi's
      // own symbol then names an object nothing initialises.
      auto find = [mpi](const char* name) {
        void* p = dlsym(RTLD_DEFAULT, name);
        if (p == nullptr && mpi != nullptr) p = dlsym(mpi, name);
        return reinterpret_cast<std::uintptr_t>(p);
      };
      h->comm_world = find("ompi_mpi_comm_world");
      h->unsigned_long_long = find("ompi_mpi_unsigned_long_long");
      h->op_max = find("ompi_mpi_op_max");
      h->in_place = reinterpret_cast<const void*>(1);
      return h->comm_world != 0 && h->unsigned_long_long != 0 && h->op_max != 0;
    }
    case MpiFamily::kNeither:
      break;
  }
  return false;
}

bool LaunchedAsRankZero() {
  for (const char* var : {"PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID"}) {
    const char* value = std::getenv(var);
    if (value != nullptr && value[0] != '\0') return std::strcmp(value, "0") == 0;
  }
  return true;
}

}  // namespace mla::lib
