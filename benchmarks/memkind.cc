// memkind.cc: the memory kinds of the benchmark: "host" here, "cuda" in
// memkind_cuda.cc when the build has CUDA.
#include "benchmarks/memkind.h"

#include "vocab/refuse.h"

namespace mlabench {

void* MemKind::alloc(size_t bytes) {
#ifdef MLA_SIMULATION
  // Under SMPI (simulation/), malloc is SMPI's: with
  // smpi/auto-shared-malloc-thresh it shares large buffers between the
  // simulated ranks so that thousands of them fit in memory.
  return malloc(bytes);
#else
  void* p = nullptr;
  return posix_memalign(&p, 4096, bytes) == 0 ? p : nullptr;
#endif
}

const char* memkind_list() {
#ifdef MLABENCH_HAVE_CUDA
  return "host, cuda";
#else
  return "host";
#endif
}

bool memkind_known(const std::string& name, std::string* why) {
  if (name == "host") return true;
#ifdef MLABENCH_HAVE_CUDA
  if (name == "cuda") return true;
#else
  if (name == "cuda")
    return mla::Refuse(why, "memory kind 'cuda' needs a build with CUDA (nvcc found by CMake); use -m host or rebuild");
#endif
  return mla::Refuse(why, "unknown memory kind '" + name + "'; use one of: " + memkind_list());
}

std::unique_ptr<MemKind> make_memkind(const std::string& name, int local_rank, int local_size, std::string* why) {
#ifdef MLABENCH_HAVE_CUDA
  if (name == "cuda") return make_cuda_memkind(local_rank, local_size, why);
#else
  (void)name, (void)local_rank, (void)local_size, (void)why;
#endif
  return std::make_unique<MemKind>();
}

}  // namespace mlabench
