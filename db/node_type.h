// node_type.h: the fingerprint of a node type, the hardware and software that
// a profile was tuned on.  Nodes with equal fingerprints share one profile;
// Key() names the node type in the profile store.
#ifndef MLDB_NODE_TYPE_H_
#define MLDB_NODE_TYPE_H_

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace mldb {

// One GPU as NVML reports it.
struct GpuInfo {
  std::string model;          // e.g. "NVIDIA H200"
  uint64_t memory_bytes = 0;  // total device memory
  std::string link;           // "NVLink", "PCIe" or "unknown"
  int nvlinks = 0;            // active NVLink links of this GPU

  bool operator==(const GpuInfo& other) const;
  bool operator<(const GpuInfo& other) const;
};

struct NodeFingerprint {
  std::string cpu_model;  // hwloc "CPUModel" of the first package
  int sockets = 0;        // packages
  int cores = 0;          // physical cores, all packages
  int numa_nodes = 0;
  std::vector<GpuInfo> gpus;                 // in NVML index order
  std::vector<std::string> network_devices;  // sorted hwloc network/openfabrics OS devices
  std::string mpi_version;                   // as given to CollectNodeFingerprint
  std::string cuda_driver_version;           // e.g. "12.4"; "" without NVML

  // A stable text of every field, one "name=value" per line; GPUs and network
  // devices sorted, so equal hardware gives equal text whatever the order.
  std::string Canonical() const;

  // 16 lowercase hex digits: the 64-bit FNV-1a hash of Canonical().  Equal on
  // identical nodes, on every platform and release; different when any field
  // differs (up to hash collisions).
  std::string Key() const;

  // One readable line, e.g. "2x Intel Xeon ... (112 cores, 2 NUMA), 8x NVIDIA
  // H200 141 GiB NVLink(18), net mlx5_0 mlx5_1, MPI Open MPI 4.1.5, CUDA 12.4";
  // the fields' runs of spaces and tabs are one space, none at their ends.
  std::string Description() const;

  // Every field as a JSON object (the inverse of FromJson).
  nlohmann::json ToJson() const;

  // Reads a fingerprint written by ToJson.  On success returns true and sets
  // *out; on failure returns false, leaves *out unchanged and sets *error to a
  // message naming the field.  Never throws.
  static bool FromJson(const nlohmann::json& json, NodeFingerprint* out, std::string* error);

  bool operator==(const NodeFingerprint& other) const;
  bool operator!=(const NodeFingerprint& other) const { return !(*this == other); }
};

// Reads this machine: CPU model, packages, cores and NUMA nodes and network
// devices through hwloc; GPUs and the CUDA driver version through NVML
// (libnvidia-ml.so.1, loaded at run time).  Without NVML there are no GPUs;
// never fails: where hwloc knows nothing it falls back to /proc/cpuinfo and
// sysconf, and at worst to cpu_model "unknown CPU" and 1 socket/core/NUMA node.
NodeFingerprint CollectNodeFingerprint(const std::string& mpi_version);

}  // namespace mldb

#endif  // MLDB_NODE_TYPE_H_
