// job_dirs.h: the private folders of one job's CUDA MPS daemon, made and
// removed by root in the job prolog and epilog without ever following a name
// that a user controls.
//
// Layout (mps_dir is the admin's plugstack key):
//   mps_dir/            the admin's folder: made 0755 root:root if missing,
//                       otherwise only checked, never changed
//   mps_dir/job-ID/     root:root 0711: users can pass through but never add,
//                       remove or rename an entry, so the names below stay ours
//   mps_dir/job-ID/pipe the job user's, 0700 (CUDA_MPS_PIPE_DIRECTORY)
//   mps_dir/job-ID/log  the job user's, 0700 (CUDA_MPS_LOG_DIRECTORY)
// Every folder is made with mkdirat() below a descriptor of its parent and
// changed only through a descriptor opened with O_NOFOLLOW|O_DIRECTORY
// (fchown/fchmod), so a link planted anywhere is refused, not followed.
#ifndef MULTILANE_SPANK_JOB_DIRS_H_
#define MULTILANE_SPANK_JOB_DIRS_H_

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace multilane_spank {

// The name of a job's folder below mps_dir ("job-ID").
std::string JobDirName(uint32_t job);

// Makes mps_dir/job-ID with pipe/ and log/ for the job's user (layout above).
// Refuses, with the reason in *error, an mps_dir that is not a root-owned
// folder, one that others may write without the sticky bit, and a job-ID that
// already exists and is not a root-owned folder left by an earlier prolog (a
// leftover of ours whose pipe/ and log/ are empty is replaced).  On failure
// nothing this call made is left behind.
bool MakeJobDirs(const std::string& mps_dir, uint32_t job, uid_t uid, gid_t gid, std::string* error);

// Whether mps_dir/job-ID is a folder MakeJobDirs made: a real folder (not a
// link) owned by root.
bool IsOwnJobDir(const std::string& mps_dir, uint32_t job);

// Removes mps_dir/job-ID/{pipe,log} and mps_dir/job-ID, which must be a folder
// MakeJobDirs made; pipe/ and log/ must already be empty (the epilog empties
// them as the job's user).  Returns false with the reason in *error.
bool RemoveJobDirs(const std::string& mps_dir, uint32_t job, std::string* error);

}  // namespace multilane_spank

#endif  // MULTILANE_SPANK_JOB_DIRS_H_
