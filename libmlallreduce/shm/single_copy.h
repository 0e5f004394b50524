// single_copy.h: reading a peer's memory directly (Linux cross-memory attach,
// process_vm_readv), where the kernel allows it: the owner of a block reads
// it from each peer's send buffer instead of each peer copying its part into
// the segment (docs/algorithms.md says what that saves).
#ifndef MLA_SHM_SINGLE_COPY_H_
#define MLA_SHM_SINGLE_COPY_H_

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "libmlallreduce/shm/node_area.h"

namespace mla::lib {

// Copies `bytes` at `address` in process `pid` to `to`; false (errno set) when
// the kernel refuses or reads less.
bool ReadPeer(pid_t pid, uint64_t address, void* to, size_t bytes);

// Set-up, before every rank of the node runs ProbeSingleCopy: writes this
// process's pid and the address of its probe word into its flags.
void PublishProbe(const NodeArea& area, int rank);

// Reads every peer's probe word through ReadPeer (a real read of another
// process, after every peer published it); true when all came back right,
// else false with *why saying what the kernel answered.
bool ProbeSingleCopy(const NodeArea& area, int rank, std::string* why);

}  // namespace mla::lib

#endif  // MLA_SHM_SINGLE_COPY_H_
