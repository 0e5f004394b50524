// algo_names.cc: algorithm, transport, device path and entry point names of
// the C API.
#include <cstring>

#include "mlallreduce_types.h"

namespace {
const char* const kNames[MLA_ALGO_COUNT] = {"passthrough", "lane", "hier", "split"};
}

extern "C" const char* mla_algo_name(mla_algo algo) {
  if (algo < 0 || algo >= MLA_ALGO_COUNT) return "unknown";
  return kNames[algo];
}

extern "C" int mla_algo_from_name(const char* name, mla_algo* algo) {
  if (name == nullptr) return 0;
  for (int i = 0; i < MLA_ALGO_COUNT; ++i) {
    if (std::strcmp(name, kNames[i]) == 0) {
      if (algo != nullptr) *algo = static_cast<mla_algo>(i);
      return 1;
    }
  }
  return 0;
}

namespace {
const char* const kTransports[MLA_TRANSPORT_COUNT] = {"auto", "mpi", "nccl"};
}

extern "C" const char* mla_transport_name(mla_transport transport) {
  if (transport < 0 || transport >= MLA_TRANSPORT_COUNT) return "unknown";
  return kTransports[transport];
}

extern "C" int mla_transport_from_name(const char* name, mla_transport* transport) {
  if (name == nullptr) return 0;
  for (int i = 0; i < MLA_TRANSPORT_COUNT; ++i) {
    if (std::strcmp(name, kTransports[i]) == 0) {
      if (transport != nullptr) *transport = static_cast<mla_transport>(i);
      return 1;
    }
  }
  return 0;
}

namespace {
const char* const kPaths[MLA_PATH_COUNT] = {"ipc", "mpi", "nccl", "staged"};
}

extern "C" const char* mla_device_path_name(mla_device_path path) {
  if (path < 0 || path >= MLA_PATH_COUNT) return "unknown";
  return kPaths[path];
}

namespace {
const char* const kEntries[MLA_ENTRY_COUNT] = {"c", "fortran", "f08", "large_count", "nonblocking", "persistent"};
}

extern "C" const char* mla_entry_name(mla_entry entry) {
  if (entry < 0 || entry >= MLA_ENTRY_COUNT) return "unknown";
  return kEntries[entry];
}
