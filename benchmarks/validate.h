// validate.h: send data whose allreduce result is known exactly, and the
// checks of results against it.
//
// Element i of rank r holds a small integer value v(r, c(i)) where c(i) is one
// of 128 classes given by a multiplicative hash of i (so that misplaced blocks
// show up: the data is not periodic in i).  Because every value and every
// partial result is a small integer, the result is exact in every type and
// in any order of reduction, so it can be compared with ==:
//   sum, min, max: v = ((7r + c) mod 128) - 64          (|sum| <= 64 n)
//   prod:          v = 2 when r == c, else -1 when 7r + c = 0 mod 128, else 1
//                  (at most one factor 2 per element: |prod| <= 2)
// The expected result of class c is the reduction of v(r, c) over all ranks,
// computed once (128 x n operations).
#ifndef MLABENCH_VALIDATE_H_
#define MLABENCH_VALIDATE_H_

#include <mpi.h>

#include <cstddef>
#include <cstdint>

#include "benchmarks/options.h"

namespace mlabench {

// Byte written over result buffers before each checked run, so that a call
// that leaves its output untouched cannot pass on an earlier call's result.
// As float, double, int32 or int64 it is far outside the range of results.
constexpr int kPoisonByte = 0x5a;

class Reference {
 public:
  static constexpr int kClasses = 128;

  Reference(DataType type, RedOp op, int nranks, int rank);

  // Writes this rank's send data for elements [0, count) to host memory.
  void fill(void* host, size_t count) const;

  // Counts the elements of a result in host memory that differ from the
  // exact expected value or, when rank0 is not null, whose bytes differ from
  // rank0's result (rank0 is rank 0's result, same layout).
  uint64_t count_wrong(const void* host, const void* rank0, size_t count) const;

  // Counts the elements of this rank's send buffer that differ from what
  // fill() wrote (an allreduce must not write its send buffer).
  uint64_t count_send_changed(const void* host, size_t count) const;

 private:
  DataType type_;
  int64_t mine_[kClasses];      // this rank's value per class
  int64_t expected_[kClasses];  // the exact result per class
};

// A 64-bit hash of a buffer's bytes, to compare results across ranks cheaply.
uint64_t hash_bytes(const void* p, size_t bytes);

// Whether v is the same on every rank of comm (collective, through PMPI).
bool same_on_all_ranks(uint64_t v, MPI_Comm comm);

}  // namespace mlabench

#endif  // MLABENCH_VALIDATE_H_
