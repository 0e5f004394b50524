// algo_names.cc: algorithm, transport, device path and entry point names of
// the C API, and the reasons a call goes unserved.
#include "vocab/algo_names.h"

#include <cstring>

namespace mla {
namespace {

const char* const kNames[MLA_ALGO_COUNT] = {"passthrough", "lane", "hier", "split"};
const char* const kTransports[MLA_TRANSPORT_COUNT] = {"auto", "mpi", "nccl", "shm"};
const char* const kPaths[MLA_PATH_COUNT] = {"ipc", "mpi", "nccl", "staged"};
const char* const kEntries[MLA_ENTRY_COUNT] = {"c", "fortran", "f08", "large_count", "nonblocking", "persistent"};
const char* const kUnsupported[static_cast<int>(Unsupported::kCount)] = {"one_rank", "intercomm", "op",
                                                                         "datatype", "layout",    "arguments"};

// The name of `value` in `names` (`count` of them), or "unknown".
const char* NameOf(int value, const char* const* names, int count) {
  return value < 0 || value >= count ? "unknown" : names[value];
}

// The index of `name` in `names`, or -1.
int IndexOf(const char* name, const char* const* names, int count) {
  if (name == nullptr) return -1;
  for (int i = 0; i < count; ++i)
    if (std::strcmp(name, names[i]) == 0) return i;
  return -1;
}

}  // namespace

const char* AlgoName(mla_algo algo) { return NameOf(algo, kNames, MLA_ALGO_COUNT); }

bool AlgoFromName(const char* name, mla_algo* algo) {
  const int i = IndexOf(name, kNames, MLA_ALGO_COUNT);
  if (i >= 0 && algo != nullptr) *algo = static_cast<mla_algo>(i);
  return i >= 0;
}

const char* TransportName(mla_transport transport) { return NameOf(transport, kTransports, MLA_TRANSPORT_COUNT); }

const char* TransportNames() { return "auto, mpi, nccl or shm"; }

bool TransportFromName(const char* name, mla_transport* transport) {
  const int i = IndexOf(name, kTransports, MLA_TRANSPORT_COUNT);
  if (i >= 0 && transport != nullptr) *transport = static_cast<mla_transport>(i);
  return i >= 0;
}

const char* DevicePathName(mla_device_path path) { return NameOf(path, kPaths, MLA_PATH_COUNT); }

const char* EntryName(mla_entry entry) { return NameOf(entry, kEntries, MLA_ENTRY_COUNT); }

const char* UnsupportedName(Unsupported why) {
  return NameOf(static_cast<int>(why), kUnsupported, static_cast<int>(Unsupported::kCount));
}

}  // namespace mla
