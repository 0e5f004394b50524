// mps_leftover.h: the private MPS folders of `multilane run`
// (/tmp/multilane-mps.XXXXXX, run_mps.h) carry a record of who uses them, so
// that what a run could not clean up itself (it was killed with SIGKILL,
// or crashed) is found by the next `run` or `doctor` of the same user: the
// daemon is told to quit and the folder is removed once the run and its job
// have both ended.  A caught signal never leaves one (process.h,
// InterruptGuard).
#ifndef MULTILANE_LAUNCHER_MPS_LEFTOVER_H_
#define MULTILANE_LAUNCHER_MPS_LEFTOVER_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace multilane {

// Where `run` makes its folders, and how their names begin.
inline constexpr char kRunMpsParent[] = "/tmp";
inline constexpr char kRunMpsPrefix[] = "multilane-mps.";

// The record's file in the folder.
inline constexpr char kMpsOwnerFile[] = "owner";

// Who uses a folder: the `run` process and, once it started, the job (each a
// pid and its start time, ProcessStat::start, so that a reused pid is not
// taken for it).
struct MpsOwnerRecord {
  pid_t run_pid = 0;
  uint64_t run_start = 0;
  pid_t job_pid = 0;  // 0 until the job started
  uint64_t job_start = 0;
};

// The record's text: "multilane-mps-owner 1\nrun PID START\n" and, once the
// job started, "job PID START\n".
std::string FormatMpsOwnerRecord(const MpsOwnerRecord& record);

// Pure: parses FormatMpsOwnerRecord's text; false for anything else (a
// record with no run line, a pid <= 0, numbers that do not fit, other lines).
bool ParseMpsOwnerRecord(std::string_view text, MpsOwnerRecord* out);

// This process as the run of a record (no job yet).
MpsOwnerRecord ThisRunRecord();

// Writes `record` into `folder` (a temporary file renamed over the record,
// so a reader sees the old one or the new one).  "" or why it could not.
std::string WriteMpsOwnerRecord(const std::string& folder, const MpsOwnerRecord& record);

// Looks in `parent` for this user's folders named kRunMpsPrefix* (real
// folders, not links, owned by getuid(), and none of them writable by
// others; anything else is skipped unread), reads each one's record, and
// where the run and its job have both ended, tells the daemon there to quit
// (`program` with CUDA_MPS_PIPE_DIRECTORY/CUDA_MPS_LOG_DIRECTORY pointed at
// the folder's pipe/ and log/) and removes the folder.  A folder still in
// use is left alone and not named; so is a folder without a readable record
// unless `name_unrecorded` (`doctor`: a run killed between making the folder
// and writing the record, before any daemon started, or a run of an older
// multilane).  Returns one line per leftover found: what was done, or why
// it stays and what to do (outside text as Excerpt).
std::vector<std::string> StopLeftoverMps(const std::string& program, bool name_unrecorded,
                                         const std::string& parent = kRunMpsParent);

}  // namespace multilane

#endif  // MULTILANE_LAUNCHER_MPS_LEFTOVER_H_
