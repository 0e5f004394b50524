// stats.h: the library's per-process counters (mla_get_stats).
#ifndef MLA_STATS_H_
#define MLA_STATS_H_

#include <cstdint>
#include <string>

#include "mlallreduce.h"

namespace mla {

// Counts one allreduce call seen.  Thread-safe, lock-free.
void CountCall();
// Counts a call completed by `algo` with a message of `bytes` bytes.
void CountDone(mla_algo algo, uint64_t bytes);
// Counts a call that a multilane algorithm was chosen for but went to PMPI.
void CountUnsupported();
// Counts a call with device buffers.
void CountDeviceCall();
// Returns the counters as they are now.
mla_stats StatsSnapshot();
// Sets every counter to zero.
void ResetStats();
// "calls=N passthrough=N lane=N hier=N split=N unsupported=N device=N bytes=N".
std::string StatsLine(const mla_stats& stats);

}  // namespace mla

#endif  // MLA_STATS_H_
