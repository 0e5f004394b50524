// node_type.cc: collect, print, hash and (de)serialise node fingerprints.
#include "db/node_type.h"

#include <dlfcn.h>
#include <hwloc.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include "vocab/refuse.h"

namespace mldb {

bool GpuInfo::operator==(const GpuInfo& o) const {
  return model == o.model && memory_bytes == o.memory_bytes && link == o.link && nvlinks == o.nvlinks;
}

bool GpuInfo::operator<(const GpuInfo& o) const {
  return std::tie(model, memory_bytes, link, nvlinks) < std::tie(o.model, o.memory_bytes, o.link, o.nvlinks);
}

bool NodeFingerprint::operator==(const NodeFingerprint& o) const {
  return cpu_model == o.cpu_model && sockets == o.sockets && cores == o.cores && numa_nodes == o.numa_nodes &&
         gpus == o.gpus && network_devices == o.network_devices && mpi_version == o.mpi_version &&
         cuda_driver_version == o.cuda_driver_version;
}

namespace {

// Keeps a value on one line of the canonical text.
std::string OneLine(const std::string& s) {
  std::string out = s;
  for (char& c : out) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return out;
}

// A value as the description shows it: on one line, without the padding
// that CPU model strings and MPI version lines carry (runs of spaces and
// tabs made one space, none at either end).  The key's canonical text keeps
// the value as read (OneLine), so keys do not change.
std::string Shown(const std::string& s) {
  std::string out;
  for (char c : OneLine(s)) {
    const bool space = c == ' ' || c == '\t';
    if (space && (out.empty() || out.back() == ' ')) continue;
    out += space ? ' ' : c;
  }
  if (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string HumanBytes(uint64_t bytes) {
  char buf[64];
  const double gib = static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0);
  if (gib >= 1.0) {
    std::snprintf(buf, sizeof buf, "%.0f GiB", gib);
  } else {
    std::snprintf(buf, sizeof buf, "%.0f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  }
  return buf;
}

}  // namespace

std::string NodeFingerprint::Canonical() const {
  std::vector<GpuInfo> sorted_gpus = gpus;
  std::sort(sorted_gpus.begin(), sorted_gpus.end());
  std::vector<std::string> sorted_net = network_devices;
  std::sort(sorted_net.begin(), sorted_net.end());

  std::ostringstream out;
  out << "multilane-node-type 1\n";
  out << "cpu_model=" << OneLine(cpu_model) << "\n";
  out << "sockets=" << sockets << "\n";
  out << "cores=" << cores << "\n";
  out << "numa_nodes=" << numa_nodes << "\n";
  out << "gpus=" << sorted_gpus.size() << "\n";
  for (const GpuInfo& g : sorted_gpus) {
    out << "gpu=" << OneLine(g.model) << "|" << g.memory_bytes << "|" << OneLine(g.link) << "|" << g.nvlinks << "\n";
  }
  out << "network_devices=" << sorted_net.size() << "\n";
  for (const std::string& n : sorted_net) out << "net=" << OneLine(n) << "\n";
  out << "mpi_version=" << OneLine(mpi_version) << "\n";
  out << "cuda_driver_version=" << OneLine(cuda_driver_version) << "\n";
  return out.str();
}

std::string NodeFingerprint::Key() const {
  uint64_t hash = 0xcbf29ce484222325ULL;  // FNV-1a 64
  for (unsigned char c : Canonical()) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, hash);
  return buf;
}

std::string NodeFingerprint::Description() const {
  std::ostringstream out;
  out << sockets << "x " << (cpu_model.empty() ? "unknown CPU" : Shown(cpu_model)) << " (" << cores << " cores, "
      << numa_nodes << " NUMA)";
  if (gpus.empty()) {
    out << ", no GPU";
  } else {
    std::map<GpuInfo, int> groups;
    for (const GpuInfo& g : gpus) ++groups[g];
    for (const auto& [g, n] : groups) {
      out << ", " << n << "x " << Shown(g.model) << " " << HumanBytes(g.memory_bytes) << " " << g.link;
      if (g.link == "NVLink") out << "(" << g.nvlinks << ")";
    }
  }
  if (!network_devices.empty()) {
    out << ", net";
    std::vector<std::string> sorted_net = network_devices;
    std::sort(sorted_net.begin(), sorted_net.end());
    for (const std::string& n : sorted_net) out << " " << Shown(n);
  }
  if (!mpi_version.empty()) out << ", MPI " << Shown(mpi_version);
  if (!cuda_driver_version.empty()) out << ", CUDA " << Shown(cuda_driver_version);
  return out.str();
}

nlohmann::json NodeFingerprint::ToJson() const {
  nlohmann::json gpu_list = nlohmann::json::array();
  for (const GpuInfo& g : gpus) {
    gpu_list.push_back(
        {{"model", g.model}, {"memory_bytes", g.memory_bytes}, {"link", g.link}, {"nvlinks", g.nvlinks}});
  }
  return {{"cpu_model", cpu_model},
          {"sockets", sockets},
          {"cores", cores},
          {"numa_nodes", numa_nodes},
          {"gpus", gpu_list},
          {"network_devices", network_devices},
          {"mpi_version", mpi_version},
          {"cuda_driver_version", cuda_driver_version}};
}

namespace {

bool GetString(const nlohmann::json& obj, const char* name, const std::string& where, std::string* out,
               std::string* error) {
  auto it = obj.find(name);
  if (it == obj.end() || !it->is_string()) return mla::Refuse(error, where + name + ": missing or not a string");
  *out = it->get<std::string>();
  return true;
}

bool GetInt(const nlohmann::json& obj, const char* name, const std::string& where, int* out, std::string* error) {
  auto it = obj.find(name);
  if (it == obj.end() || !it->is_number_integer() || it->get<int64_t>() < 0 || it->get<int64_t>() > 1000000000)
    return mla::Refuse(error, where + name + ": missing or not a non-negative integer");
  *out = static_cast<int>(it->get<int64_t>());
  return true;
}

}  // namespace

bool NodeFingerprint::FromJson(const nlohmann::json& json, NodeFingerprint* out, std::string* error) {
  std::string ignored;
  if (error == nullptr) error = &ignored;
  if (!json.is_object()) return mla::Refuse(error, "fingerprint: not a JSON object");
  const std::string where = "fingerprint.";
  NodeFingerprint f;
  if (!GetString(json, "cpu_model", where, &f.cpu_model, error) || !GetInt(json, "sockets", where, &f.sockets, error) ||
      !GetInt(json, "cores", where, &f.cores, error) || !GetInt(json, "numa_nodes", where, &f.numa_nodes, error) ||
      !GetString(json, "mpi_version", where, &f.mpi_version, error) ||
      !GetString(json, "cuda_driver_version", where, &f.cuda_driver_version, error)) {
    return false;
  }
  auto gpus = json.find("gpus");
  if (gpus == json.end() || !gpus->is_array()) return mla::Refuse(error, where + "gpus: missing or not an array");
  for (size_t i = 0; i < gpus->size(); ++i) {
    const nlohmann::json& g = (*gpus)[i];
    const std::string gwhere = where + "gpus[" + std::to_string(i) + "].";
    if (!g.is_object()) return mla::Refuse(error, where + "gpus[" + std::to_string(i) + "]: not an object");
    GpuInfo info;
    if (!GetString(g, "model", gwhere, &info.model, error) || !GetString(g, "link", gwhere, &info.link, error) ||
        !GetInt(g, "nvlinks", gwhere, &info.nvlinks, error)) {
      return false;
    }
    auto mem = g.find("memory_bytes");
    if (mem == g.end() || !mem->is_number_unsigned())
      return mla::Refuse(error, gwhere + "memory_bytes: missing or not a non-negative integer");
    info.memory_bytes = mem->get<uint64_t>();
    f.gpus.push_back(info);
  }
  auto net = json.find("network_devices");
  if (net == json.end() || !net->is_array())
    return mla::Refuse(error, where + "network_devices: missing or not an array");
  for (size_t i = 0; i < net->size(); ++i) {
    if (!(*net)[i].is_string())
      return mla::Refuse(error, where + "network_devices[" + std::to_string(i) + "]: not a string");
    f.network_devices.push_back((*net)[i].get<std::string>());
  }
  *out = std::move(f);
  return true;
}

namespace {

// --- hwloc ---------------------------------------------------------------

void CollectHwloc(NodeFingerprint* f) {
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return;
  hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  if (hwloc_topology_load(topo) != 0) {
    hwloc_topology_destroy(topo);
    return;
  }
  f->sockets = std::max(0, hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE));
  f->cores = std::max(0, hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE));
  f->numa_nodes = std::max(0, hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE));
  hwloc_obj_t package = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, 0);
  if (package != nullptr) {
    const char* model = hwloc_obj_get_info_by_name(package, "CPUModel");
    if (model != nullptr) f->cpu_model = model;
  }
  for (hwloc_obj_t dev = hwloc_get_next_osdev(topo, nullptr); dev != nullptr; dev = hwloc_get_next_osdev(topo, dev)) {
    const auto type = dev->attr->osdev.type;
    if ((type == HWLOC_OBJ_OSDEV_NETWORK || type == HWLOC_OBJ_OSDEV_OPENFABRICS) && dev->name != nullptr) {
      f->network_devices.push_back(dev->name);
    }
  }
  hwloc_topology_destroy(topo);
}

std::string CpuModelFromProcCpuinfo() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string v = line.substr(colon + 1);
      v.erase(0, v.find_first_not_of(" \t"));
      if (!v.empty()) return v;
    }
  }
  return "";
}

// --- NVML, loaded at run time ----------------------------------------------

using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
struct nvmlMemory_t {
  unsigned long long total, free, used;
};
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr unsigned kNvmlMaxLinks = 18;  // NVML_NVLINK_MAX_LINKS (Hopper)

void CollectNvml(NodeFingerprint* f) {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) return;
  auto init = reinterpret_cast<nvmlReturn_t (*)()>(dlsym(lib, "nvmlInit_v2"));
  auto shutdown = reinterpret_cast<nvmlReturn_t (*)()>(dlsym(lib, "nvmlShutdown"));
  auto get_count = reinterpret_cast<nvmlReturn_t (*)(unsigned*)>(dlsym(lib, "nvmlDeviceGetCount_v2"));
  auto get_handle =
      reinterpret_cast<nvmlReturn_t (*)(unsigned, nvmlDevice_t*)>(dlsym(lib, "nvmlDeviceGetHandleByIndex_v2"));
  auto get_name = reinterpret_cast<nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned)>(dlsym(lib, "nvmlDeviceGetName"));
  auto get_memory =
      reinterpret_cast<nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_t*)>(dlsym(lib, "nvmlDeviceGetMemoryInfo"));
  auto get_nvlink_state =
      reinterpret_cast<nvmlReturn_t (*)(nvmlDevice_t, unsigned, int*)>(dlsym(lib, "nvmlDeviceGetNvLinkState"));
  auto get_cuda_version = reinterpret_cast<nvmlReturn_t (*)(int*)>(dlsym(lib, "nvmlSystemGetCudaDriverVersion"));
  if (init == nullptr || get_count == nullptr || get_handle == nullptr || init() != kNvmlSuccess) {
    dlclose(lib);
    return;
  }
  int cuda = 0;
  if (get_cuda_version != nullptr && get_cuda_version(&cuda) == kNvmlSuccess && cuda > 0) {
    f->cuda_driver_version = std::to_string(cuda / 1000) + "." + std::to_string((cuda % 1000) / 10);
  }
  unsigned count = 0;
  if (get_count(&count) != kNvmlSuccess) count = 0;
  for (unsigned i = 0; i < count; ++i) {
    nvmlDevice_t dev = nullptr;
    if (get_handle(i, &dev) != kNvmlSuccess) continue;
    GpuInfo g;
    char name[256] = {0};
    if (get_name != nullptr && get_name(dev, name, sizeof name - 1) == kNvmlSuccess) g.model = name;
    if (g.model.empty()) g.model = "unknown GPU";
    nvmlMemory_t mem{};
    if (get_memory != nullptr && get_memory(dev, &mem) == kNvmlSuccess) g.memory_bytes = mem.total;
    if (get_nvlink_state == nullptr) {
      g.link = "unknown";
    } else {
      for (unsigned link = 0; link < kNvmlMaxLinks; ++link) {
        int active = 0;
        if (get_nvlink_state(dev, link, &active) == kNvmlSuccess && active != 0) ++g.nvlinks;
      }
      g.link = g.nvlinks > 0 ? "NVLink" : "PCIe";
    }
    f->gpus.push_back(g);
  }
  if (shutdown != nullptr) shutdown();
  dlclose(lib);
}

}  // namespace

NodeFingerprint CollectNodeFingerprint(const std::string& mpi_version) {
  NodeFingerprint f;
  f.mpi_version = mpi_version;
  CollectHwloc(&f);
  std::sort(f.network_devices.begin(), f.network_devices.end());
  f.network_devices.erase(std::unique(f.network_devices.begin(), f.network_devices.end()), f.network_devices.end());
  if (f.cpu_model.empty()) f.cpu_model = CpuModelFromProcCpuinfo();
  if (f.cpu_model.empty()) f.cpu_model = "unknown CPU";
  if (f.sockets < 1) f.sockets = 1;
  if (f.numa_nodes < 1) f.numa_nodes = 1;
  if (f.cores < 1) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    f.cores = n > 0 ? static_cast<int>(n) : 1;
  }
  CollectNvml(&f);
  return f;
}

}  // namespace mldb
