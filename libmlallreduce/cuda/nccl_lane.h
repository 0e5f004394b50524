// nccl_lane.h: NCCL as the transport of one lane: a NCCL communicator over an
// MPI communicator whose ranks use distinct GPUs (NCCL refuses two ranks of
// one communicator on one GPU).  NCCL is loaded with dlopen on first use, so
// nodes without it still run the library.
#ifndef MLA_CUDA_NCCL_LANE_H_
#define MLA_CUDA_NCCL_LANE_H_

#include <cuda_runtime_api.h>
#include <mpi.h>

#include "libmlallreduce/cuda/reduce_kernels.h"

namespace mla::lib {
namespace cuda {

class NcclLane {
 public:
  NcclLane() = default;
  ~NcclLane();
  NcclLane(const NcclLane&) = delete;
  NcclLane& operator=(const NcclLane&) = delete;

  // Whether NCCL can carry (type, op) at all.
  static bool Covers(DType type, DOp op);

  // Makes the NCCL communicator on first use: collective over `comm`, every
  // rank gets the same answer.  Returns false when NCCL is missing on some
  // rank or two ranks share a GPU; the caller then uses MPI staging.
  bool Ready(MPI_Comm comm, const unsigned char uuid[16]);

  // dst[0..n) = allreduce of src[0..n) (src may equal dst), queued on
  // `stream` (not waited for).  Returns an MPI error code.
  int Allreduce(const void* src, void* dst, size_t n, DType type, DOp op, cudaStream_t stream);

 private:
  int state_ = 0;         // 0 not tried, 1 ready, -1 unusable
  void* comm_ = nullptr;  // ncclComm_t
};

}  // namespace cuda
}  // namespace mla::lib

#endif  // MLA_CUDA_NCCL_LANE_H_
