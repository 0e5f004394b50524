// memkind.h: where the benchmark's message buffers live.
//
// The benchmark allocates, fills, poisons and reads back its buffers only
// through a MemKind, so that a new kind of memory (e.g. "cuda": device
// buffers) is one more class in memkind.cc plus one entry in kMemKinds; the
// timing loop and the validation stay as they are.
#ifndef MLABENCH_MEMKIND_H_
#define MLABENCH_MEMKIND_H_

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <string>

#include "benchmarks/options.h"

namespace mlabench {

class MemKind {
 public:
  virtual ~MemKind() = default;

  // The name given to -m ("host", ...).
  virtual const char* name() const = 0;

  // One line for the output header (device, binding, ...).
  virtual std::string describe() const = 0;

  // Allocates bytes of this kind; nullptr on failure.
  virtual void* alloc(size_t bytes) = 0;
  virtual void release(void* p) = 0;

  // True when the CPU may read and write the buffers in place; otherwise the
  // benchmark fills and checks through a host staging buffer with
  // to_device()/to_host().
  virtual bool host_accessible() const = 0;
  virtual void to_device(void* dst, const void* host_src, size_t bytes) = 0;
  virtual void to_host(void* host_dst, const void* src, size_t bytes) = 0;

  // Sets bytes of p to the byte value (the poison written before each call).
  virtual void set_bytes(void* p, int value, size_t bytes) = 0;

  // Waits until the work queued on the buffers has completed; called before
  // the clock is read at the end of a timed batch.
  virtual void synchronize() = 0;

  // The system MPI's allreduce as an application would call it with these
  // buffers: PMPI_Allreduce for host memory; for device memory copied to
  // pinned host memory, PMPI_Allreduce, copied back (a non-CUDA-aware MPI).
  virtual int system_allreduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op,
                               MPI_Comm comm) = 0;

  // The GPU this rank's buffers are on, or -1 for host memory.
  virtual int device() const { return -1; }

  // ncclAllReduce over `comm` (one rank per GPU), made on first use
  // (collective over comm).  Returns MPI_SUCCESS, or an MPI error code when
  // NCCL is not available; *why then says why.
  virtual int nccl_allreduce(const void* send, void* recv, int count, DataType type, RedOp op, MPI_Comm comm,
                             std::string* why) {
    (void)send, (void)recv, (void)count, (void)type, (void)op, (void)comm;
    *why = "NCCL needs device memory (-m cuda)";
    return MPI_ERR_OTHER;
  }
};

// The memory kinds this build knows, for -m and its help text ("host", "cuda").
const char* memkind_list();

// Returns true when name is a kind that this build can run; otherwise
// *why says what to use instead.
bool memkind_known(const std::string& name, std::string* why);

// Creates the kind named by name (memkind_known(name) must hold).  The rank's
// place on its host (local_rank of local_size) lets device kinds pick their
// device: consecutive ranks share a GPU (MULTILANE_RANKS_PER_GPU of them, or
// local_size / GPUs).  Returns nullptr with *why set when it cannot.
std::unique_ptr<MemKind> make_memkind(const std::string& name, int local_rank, int local_size, std::string* why);

#ifdef MLABENCH_HAVE_CUDA
// The device kind (memkind_cuda.cc).
std::unique_ptr<MemKind> make_cuda_memkind(int local_rank, int local_size, std::string* why);
#endif

// A buffer of some kind, released when it goes out of scope.
class Buffer {
 public:
  Buffer() = default;
  Buffer(MemKind* kind, size_t bytes) : kind_(kind), bytes_(bytes) { ptr_ = bytes ? kind->alloc(bytes) : nullptr; }
  ~Buffer() {
    if (ptr_) kind_->release(ptr_);
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* get() const { return ptr_; }
  size_t bytes() const { return bytes_; }
  bool ok() const { return bytes_ == 0 || ptr_ != nullptr; }

 private:
  MemKind* kind_ = nullptr;
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace mlabench

#endif  // MLABENCH_MEMKIND_H_
