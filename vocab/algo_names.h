// algo_names.h: the names of the C API's enumerations (algorithms,
// transports, device paths, entry points) and of the reasons a call goes to
// the system MPI unserved, spelled here once.  The library
// exports them as mla_algo_name and so on (mlallreduce_types.h); the tools
// call these.
#ifndef MULTILANE_VOCAB_ALGO_NAMES_H_
#define MULTILANE_VOCAB_ALGO_NAMES_H_

#include "mlallreduce_types.h"

namespace mla {

// Returns "passthrough", "lane", "hier", "split", or "unknown".
const char* AlgoName(mla_algo algo);

// Parses an algorithm name; returns true and sets *algo (when not null) on
// success, else false.
bool AlgoFromName(const char* name, mla_algo* algo);

// Returns "auto", "mpi", "nccl", "shm", or "unknown".
const char* TransportName(mla_transport transport);

// Every transport name, for messages: "auto, mpi, nccl or shm".
const char* TransportNames();

// Parses a transport name; returns true and sets *transport (when not null)
// on success, else false.
bool TransportFromName(const char* name, mla_transport* transport);

// Returns "ipc", "mpi", "nccl", "staged", or "unknown".
const char* DevicePathName(mla_device_path path);

// Returns "c", "fortran", "f08", "large_count", "nonblocking", "persistent",
// or "unknown".
const char* EntryName(mla_entry entry);

// Why a call that a multilane algorithm was chosen for went to the system
// MPI instead (the library's `unsupported` counters, by reason).
enum class Unsupported { kOneRank, kIntercomm, kOp, kDatatype, kLayout, kArguments, kCount };

// Returns "one_rank", "intercomm", "op" (not commutative), "datatype" (not
// contiguous, or unreadable), "layout" (nodes or GPU groups the algorithm
// cannot run on), "arguments" (a null handle), or "unknown".
const char* UnsupportedName(Unsupported why);

}  // namespace mla

#endif  // MULTILANE_VOCAB_ALGO_NAMES_H_
