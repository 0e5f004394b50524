// memkind.cc: the memory kinds of the benchmark: "host" here, "cuda" in
// memkind_cuda.cc when the build has CUDA.
#include "benchmarks/memkind.h"

#include <cstdlib>
#include <cstring>

namespace mlabench {
namespace {

// Page-aligned host memory, as an application's host buffers would be.
class HostMemKind final : public MemKind {
 public:
  const char* name() const override { return "host"; }
  std::string describe() const override { return "host (page-aligned malloc)"; }

  void* alloc(size_t bytes) override {
#ifdef MLA_SIMULATION
    // Under SMPI (simulation/), malloc is SMPI's: with
    // smpi/auto-shared-malloc-thresh it shares large buffers between the
    // simulated ranks so that thousands of them fit in memory.
    return malloc(bytes);
#else
    void* p = nullptr;
    if (posix_memalign(&p, 4096, bytes) != 0) return nullptr;
    return p;
#endif
  }
  void release(void* p) override { free(p); }

  bool host_accessible() const override { return true; }
  void to_device(void* dst, const void* host_src, size_t bytes) override {
    if (dst != host_src) memcpy(dst, host_src, bytes);
  }
  void to_host(void* host_dst, const void* src, size_t bytes) override {
    if (host_dst != src) memcpy(host_dst, src, bytes);
  }
  void set_bytes(void* p, int value, size_t bytes) override { memset(p, value, bytes); }
  void synchronize() override {}
  int system_allreduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) override {
    return PMPI_Allreduce(send, recv, count, type, op, comm);
  }
};

struct MemKindEntry {
  const char* name;
  bool available;       // built into this binary
  const char* missing;  // what to say when not available
};

const MemKindEntry kMemKinds[] = {
    {"host", true, ""},
#ifdef MLABENCH_HAVE_CUDA
    {"cuda", true, ""},
#else
    {"cuda", false, "memory kind 'cuda' needs a build with CUDA (nvcc found by CMake); use -m host or rebuild"},
#endif
};

}  // namespace

const char* memkind_list() {
#ifdef MLABENCH_HAVE_CUDA
  return "host, cuda";
#else
  return "host";
#endif
}

bool memkind_known(const std::string& name, std::string* why) {
  for (const MemKindEntry& e : kMemKinds) {
    if (name == e.name) {
      if (!e.available) *why = e.missing;
      return e.available;
    }
  }
  *why = "unknown memory kind '" + name + "'; use one of: " + memkind_list();
  return false;
}

std::unique_ptr<MemKind> make_memkind(const std::string& name, int local_rank, int local_size, std::string* why) {
  if (name == "host") return std::make_unique<HostMemKind>();
#ifdef MLABENCH_HAVE_CUDA
  if (name == "cuda") return make_cuda_memkind(local_rank, local_size, why);
#else
  (void)local_rank, (void)local_size;
#endif
  *why = "unknown memory kind '" + name + "'";
  return nullptr;
}

}  // namespace mlabench
