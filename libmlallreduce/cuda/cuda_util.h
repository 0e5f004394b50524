// cuda_util.h: small helpers shared by the CUDA module's files.
#ifndef MLA_CUDA_CUDA_UTIL_H_
#define MLA_CUDA_CUDA_UTIL_H_

#include <cuda_runtime_api.h>
#include <mpi.h>

#include <cstddef>
#include <string>

namespace mla::lib {
namespace cuda {

// Prints "multilane: warning: ..." once per distinct message from world rank 0
// (through the library that loaded the module).
void Warn(const std::string& message);

// Whether MULTILANE_VERBOSE was set.
bool Verbose();

// MULTILANE_DEVICE_SYNC=stream was set (docs/gpu.md, "Stream rule").
bool SyncOnStream();

// MULTILANE_DEVICE_FLAG_MAX: the largest message of the flag path; 0 = off.
size_t FlagMaxBytes();

// Turns a CUDA error into an MPI error code after one warning naming `what`.
int CudaFailure(const char* what, cudaError_t error);

#define MLA_CUDA_TRY(what, expr)                                             \
  do {                                                                       \
    cudaError_t mla_cuda_rc_ = (expr);                                       \
    if (mla_cuda_rc_ != cudaSuccess) return CudaFailure(what, mla_cuda_rc_); \
  } while (0)

#define MLA_MPI_TRY(expr)                               \
  do {                                                  \
    int mla_mpi_rc_ = (expr);                           \
    if (mla_mpi_rc_ != MPI_SUCCESS) return mla_mpi_rc_; \
  } while (0)

}  // namespace cuda
}  // namespace mla::lib

#endif  // MLA_CUDA_CUDA_UTIL_H_
