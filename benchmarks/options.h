// options.h: command-line options of mlallreduce_bench, read with CLI11;
// sizes in the grammar of every part (vocab/byte_size.h).
//
// Every rank parses the same argv; only rank 0 prints the error or the help
// text (the caller decides who prints).
#ifndef MLABENCH_OPTIONS_H_
#define MLABENCH_OPTIONS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "mlallreduce.h"

namespace mlabench {

enum class DataType { kFloat, kDouble, kInt32, kInt64 };
enum class RedOp { kSum, kProd, kMin, kMax };

// One entry of -a.
struct AlgoSpec {
  enum class Kind {
    kMpi,        // the system MPI: PMPI_Allreduce (device buffers: staged by hand)
    kAuto,       // mla_allreduce: what the profile/environment decides
    kLibrary,    // mla_allreduce_with(choice)
    kMpiPerGpu,  // "mpi-1pg": the system MPI with one rank per GPU (device buffers)
    kNccl,       // "nccl": ncclAllReduce with one rank per GPU (device buffers);
                 // "nccl-sync": the same, waiting for each call (blocking, as MPI_Allreduce)
    kMpiAlgo,    // "mpi:NAME": the system MPI with its algorithm NAME forced
                 // (sysalgo/system_allreduce.h), staged as kMpi for device buffers
    kMpiBest,    // "mpi-best": per size, the fastest of mpi and every mpi:NAME
  };
  Kind kind = Kind::kMpi;
  mla_algo algo = MLA_ALGO_PASSTHROUGH;          // for kLibrary
  mla_transport transport = MLA_TRANSPORT_AUTO;  // for kLibrary: "lane:nccl"
  bool blocking = false;                         // for kNccl: wait for every call
  std::string name;                              // as printed in the algo column
  std::string system_algo;                       // for kMpiAlgo: the system's name ("ring")
};

struct Options {
  uint64_t min_bytes = 4096;
  uint64_t max_bytes = 64ull << 20;
  uint64_t factor = 2;
  DataType type = DataType::kFloat;
  RedOp op = RedOp::kSum;
  std::vector<AlgoSpec> algos;  // filled with the default list when -a is absent
  bool algos_default = true;    // no -a: rows the MPI cannot give are dropped with a note
  int lanes = 0;                // mla_choice.lanes; 0 = all
  uint64_t chunk_bytes = 0;     // mla_choice.chunk_bytes; 0 = whole message
  int warmup = -1;              // -1: scaled to the size
  int iters = -1;               // -1: scaled to the size
  bool check = true;
  std::string json_path;  // empty: no JSON
  std::string memory = "host";
  double batch_seconds = 0;  // -T: shorten timed batches to about this long; 0 = off
  bool overhead = false;     // --overhead: also the library's own cost per call (overhead.h)
};

enum class ParseStatus { kRun, kHelp, kError };

// Parses argv into *opt.  On kError, *error holds one message that names the
// option and says how to fix it.
ParseStatus parse_options(int argc, char** argv, Options* opt, std::string* error);

// The text printed for -h.
std::string usage_text(const char* argv0);

// Names used in the output and accepted by -t / -o, the size of an element,
// and the MPI's handles of each (one table, options.cc).
const char* type_name(DataType t);
const char* op_name(RedOp op);
size_t type_size(DataType t);
MPI_Datatype mpi_datatype(DataType t);
MPI_Op mpi_op(RedOp op);

// Iterations and warm-up iterations for one message size: -n / -w when given,
// else scaled to the size (more for small messages, fewer for large ones).
int iters_for(const Options& opt, uint64_t bytes);
int warmup_for(const Options& opt, int iters);

}  // namespace mlabench

#endif  // MLABENCH_OPTIONS_H_
