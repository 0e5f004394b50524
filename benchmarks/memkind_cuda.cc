// memkind_cuda.cc: the "cuda" memory kind: buffers from cudaMalloc on this
// rank's GPU, the system MPI staged by hand, and NCCL with one rank per GPU.
#include <cuda_runtime_api.h>
#ifdef MLABENCH_HAVE_NCCL
#include <nccl.h>
#endif

#include <cstdlib>
#include <string>

#include "benchmarks/memkind.h"
#include "vocab/ranks_per_gpu.h"

namespace mlabench {
namespace {

// Device memory of one GPU: what differs from host memory (the base class).
class CudaMemKind final : public MemKind {
 public:
  explicit CudaMemKind(int device) : device_(device) {}
  ~CudaMemKind() override {
    if (pinned_send_) cudaFreeHost(pinned_send_);
    if (pinned_recv_) cudaFreeHost(pinned_recv_);
#ifdef MLABENCH_HAVE_NCCL
    if (nccl_) ncclCommDestroy(nccl_);
#endif
  }

  std::string describe() const override {
    cudaDeviceProp prop;
    std::string model = cudaGetDeviceProperties(&prop, device_) == cudaSuccess ? prop.name : "?";
    return "cuda (cudaMalloc on GPU " + std::to_string(device_) + ", " + model + ", on rank 0)";
  }
  int device() const override { return device_; }

  void* alloc(size_t bytes) override {
    void* p = nullptr;
    return cudaMalloc(&p, bytes) == cudaSuccess ? p : nullptr;
  }
  void release(void* p) override { cudaFree(p); }
  bool host_accessible() const override { return false; }
  void copy(void* dst, const void* src, size_t bytes) override { cudaMemcpy(dst, src, bytes, cudaMemcpyDefault); }
  void set_bytes(void* p, int value, size_t bytes) override { cudaMemset(p, value, bytes); }
  void synchronize() override { cudaDeviceSynchronize(); }

  // What a user writes by hand around a non-CUDA-aware MPI.
  int system_allreduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) override {
    int size = 0;
    MPI_Type_size(type, &size);
    const size_t bytes = static_cast<size_t>(count) * size;
    if (bytes > pinned_bytes_) {
      if (pinned_send_) cudaFreeHost(pinned_send_);
      if (pinned_recv_) cudaFreeHost(pinned_recv_);
      pinned_send_ = pinned_recv_ = nullptr;
      pinned_bytes_ = 0;
      if (cudaMallocHost(&pinned_send_, bytes) != cudaSuccess || cudaMallocHost(&pinned_recv_, bytes) != cudaSuccess)
        return MPI_ERR_NO_MEM;
      pinned_bytes_ = bytes;
    }
    if (cudaMemcpy(pinned_send_, send, bytes, cudaMemcpyDeviceToHost) != cudaSuccess) return MPI_ERR_OTHER;
    int rc = PMPI_Allreduce(pinned_send_, pinned_recv_, count, type, op, comm);
    if (rc != MPI_SUCCESS) return rc;
    return cudaMemcpy(recv, pinned_recv_, bytes, cudaMemcpyHostToDevice) == cudaSuccess ? MPI_SUCCESS : MPI_ERR_OTHER;
  }

  int nccl_allreduce(const void* send, void* recv, int count, DataType type, RedOp op, MPI_Comm comm,
                     std::string* why) override {
#ifdef MLABENCH_HAVE_NCCL
    if (nccl_ == nullptr) {
      int rank = 0, size = 0;
      MPI_Comm_rank(comm, &rank);
      MPI_Comm_size(comm, &size);
      ncclUniqueId id;
      if (rank == 0) ncclGetUniqueId(&id);
      PMPI_Bcast(&id, sizeof id, MPI_BYTE, 0, comm);
      ncclResult_t rc = ncclCommInitRank(&nccl_, size, id, rank);
      if (rc != ncclSuccess) {
        *why = std::string("ncclCommInitRank: ") + ncclGetErrorString(rc);
        nccl_ = nullptr;
        return MPI_ERR_OTHER;
      }
    }
    const ncclDataType_t types[] = {ncclFloat32, ncclFloat64, ncclInt32, ncclInt64};  // in DataType's order
    const ncclRedOp_t ops[] = {ncclSum, ncclProd, ncclMin, ncclMax};                  // in RedOp's order
    const ncclResult_t rc =
        ncclAllReduce(send, recv, count, types[static_cast<int>(type)], ops[static_cast<int>(op)], nccl_, nullptr);
    if (rc != ncclSuccess) {
      *why = std::string("ncclAllReduce: ") + ncclGetErrorString(rc);
      return MPI_ERR_OTHER;
    }
    return MPI_SUCCESS;
#else
    (void)send, (void)recv, (void)count, (void)type, (void)op, (void)comm;
    *why = "this build of mlallreduce_bench has no NCCL (nccl.h not found)";
    return MPI_ERR_OTHER;
#endif
  }

 private:
  int device_;
  void* pinned_send_ = nullptr;
  void* pinned_recv_ = nullptr;
  size_t pinned_bytes_ = 0;
#ifdef MLABENCH_HAVE_NCCL
  ncclComm_t nccl_ = nullptr;
#endif
};

}  // namespace

std::unique_ptr<MemKind> make_cuda_memkind(int local_rank, int local_size, std::string* why) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    *why = "no CUDA device is visible on this host; use -m host";
    return nullptr;
  }
  // MULTILANE_RANKS_PER_GPU, as the library reads it (unset: the host's ranks
  // spread evenly, as the Slurm plugin places tasks).
  const char* variable = std::getenv("MULTILANE_RANKS_PER_GPU");
  int per_gpu = 0;
  if (!mla::ParseRanksPerGpuVariable(variable ? variable : "", &per_gpu, why)) return nullptr;
  const int device = mla::GpuOfRank(local_rank, local_size, per_gpu, count);
  if (cudaSetDevice(device) != cudaSuccess) {
    *why = "cudaSetDevice(" + std::to_string(device) + ") failed";
    return nullptr;
  }
  cudaFree(nullptr);  // create the context now, outside the timed loops
  return std::make_unique<CudaMemKind>(device);
}

}  // namespace mlabench
