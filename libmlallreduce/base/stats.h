// stats.h: the library's per-process counters (mla_get_stats).
#ifndef MLA_STATS_H_
#define MLA_STATS_H_

#include <cstdint>
#include <string>

#include "libmlallreduce/base/thread_counts.h"
#include "mlallreduce.h"
#include "vocab/algo_names.h"

namespace mla::lib {

// Counts one allreduce call seen.  Thread-safe, lock-free.
void CountCall();
// Counts a call completed by `algo` with a message of `bytes` bytes.
void CountDone(mla_algo algo, uint64_t bytes);
// True when `entry` is one of the entry points (MLA_ENTRY_COUNT: none).
inline bool IsEntry(mla_entry entry) { return entry >= 0 && entry < MLA_ENTRY_COUNT; }
// Counts one call handed to the system MPI unchanged: CountEntry(entry,
// false) where `entry` is one (MLA_ENTRY_COUNT: a call of the C API),
// CountCall, and CountDone(MLA_ALGO_PASSTHROUGH, bytes) when it `succeeded`,
// in one visit to the thread's counters.
inline void CountSystemCall(mla_entry entry, uint64_t bytes, bool succeeded) {
  ThreadCounts& mine = MyCounts();
  if (IsEntry(entry)) AddOwn(mine.entry_calls[entry], 1);
  AddOwn(mine.calls, 1);
  if (!succeeded) return;
  AddOwn(mine.calls_by_algo[MLA_ALGO_PASSTHROUGH], 1);
  AddOwn(mine.bytes_by_algo[MLA_ALGO_PASSTHROUGH], bytes);
}
// Counts a call that a multilane algorithm was chosen for but went to PMPI,
// for reason `why`.
void CountUnsupported(Unsupported why);
// How many system algorithms (a profile's mpi=NAME) the counters tell apart;
// names beyond them are not counted by name.
constexpr int kSystemAlgorithmSlots = 8;
// The slot of the system algorithm `name`, taken at its first call (a lock
// then, a scan of the few names taken after); -1 when every slot is taken.
int SystemAlgorithmSlot(const std::string& name);
// The name of a taken slot, else "".
const char* SystemAlgorithmName(int slot);
// Counts a passthrough call that the system algorithm of `slot` ran (it
// also counts as passthrough).  Lock-free; a slot of -1 is not counted.
void CountSystemAlgorithm(int slot);
// The counters mla_stats does not hold: unsupported calls by reason, and
// passthrough calls by the system algorithm that ran them (by slot).
struct DetailStats {
  uint64_t unsupported[static_cast<int>(Unsupported::kCount)] = {0};
  uint64_t system_algos[kSystemAlgorithmSlots] = {0};
};
// Counts a call with device buffers.
void CountDeviceCall();
// Counts a device call completed along `path` (mla_device_path); when
// `nccl_fallback`, also one call whose requested NCCL transport fell back to
// MPI staging.
void CountDevicePath(int path, bool nccl_fallback);
// Records the ranks per GPU found from the GPU groups for a device call on
// MPI_COMM_WORLD (what its profile look-ups matched `ppg=` against).
void NoteDeviceRanksPerGpu(int ppg);
// The value last recorded, or 0 when no device call looked it up.
int DeviceRanksPerGpuSeen();
// Counts one call of `entry` that went to the system MPI's own function
// without the dispatch (mla_entry_stats' passed_on).
void CountEntryPassedOn(mla_entry entry);
// Counts one call that came in through `entry`; `passed_on` when it goes to
// the system MPI's own function without the dispatch (mla_entry_stats).
inline void CountEntry(mla_entry entry, bool passed_on) {
  if (!IsEntry(entry)) return;
  AddOwn(MyCounts().entry_calls[entry], 1);
  if (passed_on) CountEntryPassedOn(entry);
}
// Returns the counters as they are now.
mla_stats StatsSnapshot();
// Returns the calls per entry point as they are now.
mla_entry_stats EntryStatsSnapshot();
// Returns the detail counters as they are now.
DetailStats DetailStatsSnapshot();
// Sets every counter to zero (slots keep their names).
void ResetStats();
// "calls=N passthrough=N [mpi:NAME=N ...] lane=N hier=N split=N
// unsupported=N unsupported_one_rank=N unsupported_intercomm=N
// unsupported_op=N unsupported_datatype=N unsupported_layout=N
// unsupported_arguments=N device=N device_ipc=N device_mpi=N device_nccl=N
// device_staged=N nccl_fallback=N bytes=N entry_c=N entry_fortran=N
// entry_f08=N entry_large_count=N entry_nonblocking=N entry_persistent=N
// not_served=N", where mpi:NAME counts the passthrough calls the system
// algorithm NAME ran (only those that ran any) and not_served sums the
// entries' passed_on.
std::string StatsLine(const mla_stats& stats, const mla_entry_stats& entries, const DetailStats& details);

}  // namespace mla::lib

#endif  // MLA_STATS_H_
