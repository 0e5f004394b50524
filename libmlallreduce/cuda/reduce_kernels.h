// reduce_kernels.h: element-wise reduction kernels for the predefined MPI
// types and ops, reading several buffers (local or peer GPUs') and writing the
// result to several buffers.
#ifndef MLA_CUDA_REDUCE_KERNELS_H_
#define MLA_CUDA_REDUCE_KERNELS_H_

#include <cuda_runtime_api.h>
#include <mpi.h>

#include <cstddef>

namespace mla::lib {
namespace cuda {

enum class DType { kI8, kU8, kI16, kU16, kI32, kU32, kI64, kU64, kF32, kF64 };
enum class DOp { kSum, kProd, kMin, kMax, kLand, kLor, kLxor, kBand, kBor, kBxor };

// Most buffers one kernel reads or writes (ranks of a node or GPU group).
constexpr int kMaxBuffers = 64;

struct BufferSet {
  const void* src[kMaxBuffers];
  void* dst[kMaxBuffers];
  int nsrc = 0;
  int ndst = 0;
};

// Maps a predefined MPI datatype and op to a device reduction.  Returns false
// for anything the kernels do not cover (pair types, complex, long double,
// derived types, user ops, invalid combinations); such calls are staged
// through host memory instead.  Integer min and max compare signed or
// unsigned as the system MPI does for that type (MPI_Reduce_local decides,
// once per type), so that device results equal the system MPI's bits.
bool MapReduction(MPI_Datatype datatype, MPI_Op op, DType* type, DOp* dop);

// Size in bytes of one element of `type`.
size_t DTypeSize(DType type);

// dst[d][i] = src[0][i] op src[1][i] op ... op src[nsrc-1][i] for every d and
// i < n, reducing in the order of src (so every rank computing the same
// element gets the same bits).  Enqueued on `stream`.  dst may alias src[k]
// element for element.
cudaError_t LaunchReduce(DType type, DOp op, const BufferSet& buffers, size_t n, cudaStream_t stream);

}  // namespace cuda
}  // namespace mla::lib

#endif  // MLA_CUDA_REDUCE_KERNELS_H_
