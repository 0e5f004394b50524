// memkind.h: where the benchmark's message buffers live.
//
// The benchmark allocates, fills, poisons and reads back its buffers only
// through a MemKind, so that a new kind of memory (e.g. "cuda": device
// buffers, memkind_cuda.cc) is one more class that overrides what differs
// from host memory, plus its name in memkind.cc; the timing loop and the
// validation stay as they are.
#ifndef MLABENCH_MEMKIND_H_
#define MLABENCH_MEMKIND_H_

#include <mpi.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "benchmarks/options.h"

namespace mlabench {

// A kind of memory; this class itself is host memory ("host": page-aligned,
// as an application's host buffers would be).
class MemKind {
 public:
  virtual ~MemKind() = default;

  // One line for the output header (device, binding, ...).
  virtual std::string describe() const { return "host (page-aligned malloc)"; }

  // Allocates bytes of this kind; nullptr on failure.
  virtual void* alloc(size_t bytes);
  virtual void release(void* p) { free(p); }

  // True when the CPU may read and write the buffers in place; otherwise the
  // benchmark fills and checks through a host staging buffer with copy().
  virtual bool host_accessible() const { return true; }
  // Copies bytes from src to dst, each in host memory or memory of this kind.
  virtual void copy(void* dst, const void* src, size_t bytes) { memmove(dst, src, bytes); }

  // Sets bytes of p to the byte value (the poison written before each call).
  virtual void set_bytes(void* p, int value, size_t bytes) { memset(p, value, bytes); }

  // Waits until the work queued on the buffers has completed; called before
  // the clock is read at the end of a timed batch.
  virtual void synchronize() {}

  // The system MPI's allreduce as an application would call it with these
  // buffers: PMPI_Allreduce for host memory; for device memory copied to
  // pinned host memory, PMPI_Allreduce, copied back (a non-CUDA-aware MPI).
  virtual int system_allreduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
    return PMPI_Allreduce(send, recv, count, type, op, comm);
  }

  // The GPU this rank's buffers are on, or -1 for host memory.
  virtual int device() const { return -1; }

  // ncclAllReduce over `comm` (one rank per GPU), made on first use
  // (collective over comm).  Returns MPI_SUCCESS, or an MPI error code when
  // NCCL is not available; *why then says why.
  virtual int nccl_allreduce(const void*, void*, int, DataType, RedOp, MPI_Comm, std::string* why) {
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

}  // namespace mlabench

#endif  // MLABENCH_MEMKIND_H_
