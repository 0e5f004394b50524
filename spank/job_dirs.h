// job_dirs.h: the private folders of one job's CUDA MPS daemon, made and
// removed by root in the job prolog and epilog, and checked by the step,
// without ever following a name that a user controls.
//
// Layout (mps_dir is the admin's plugstack key):
//   mps_dir/            the admin's folder: made 0755 root:root if missing,
//                       otherwise only checked, never changed
//   mps_dir/job-ID/     root:root 0711: users can pass through but never add,
//                       remove or rename an entry, so the names below stay ours
//   mps_dir/job-ID/pipe the job user's, 0700 (CUDA_MPS_PIPE_DIRECTORY)
//   mps_dir/job-ID/log  the job user's, 0700 (CUDA_MPS_LOG_DIRECTORY)
// mps_dir is reached from "/" one folder at a time with O_NOFOLLOW: no
// component may be a symbolic link (the admin names the real folder), and
// every folder on the way must be root's and changeable by no other user
// (sticky folders such as /tmp excepted, where others cannot replace root's
// entries).  Every folder is made with mkdirat() below a descriptor of its
// parent and changed only through a descriptor opened with
// O_NOFOLLOW|O_DIRECTORY (fchown/fchmod), so a planted link is refused, not
// followed.  The names job-* in mps_dir are multilane's: the prolog moves
// aside and removes what someone else put there.
#ifndef MULTILANE_SPANK_JOB_DIRS_H_
#define MULTILANE_SPANK_JOB_DIRS_H_

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace multilane_spank {

// The name of a job's folder below mps_dir ("job-ID").
std::string JobDirName(uint32_t job);

// Makes mps_dir/job-ID with pipe/ and log/ for the job's user (layout above).
// Refuses, with the reason and the fix in *error, an mps_dir that is or goes
// through a link, one that is not root's, one that others may write without
// the sticky bit, and a root-owned job-ID left by an earlier prolog whose
// pipe/ or log/ still hold files (it may serve a daemon of another node that
// shares mps_dir).  An empty leftover of ours is replaced.  Anything else at
// job-ID (a link, a file, another user's folder) is not ours: it is renamed
// aside and removed as RemoveTree does, and *note says so in one line (and
// what could not be removed).  On failure nothing this call made is left.
bool MakeJobDirs(const std::string& mps_dir, uint32_t job, uid_t uid, gid_t gid, std::string* error, std::string* note);

// Whether mps_dir/job-ID is a folder MakeJobDirs made for `uid` (the
// epilog's test): a real folder (not a link) owned by root whose pipe/ and
// log/ are real folders owned by uid (their modes the user may have
// changed), in an mps_dir that passes MakeJobDirs' checks.
bool IsOwnJobDir(const std::string& mps_dir, uint32_t job, uid_t uid);

// For the step (as the job's user): whether mps_dir/job-ID/{pipe,log} are
// exactly what MakeJobDirs made for `uid` - job-ID root's 0711, pipe/ and
// log/ uid's 0700, none a link - checked with O_NOFOLLOW opens and fstat.
// False with *why empty when there is no job-ID (no daemon for this job), or
// no mps_dir the prolog could use (it logged why); false with the reason and
// the fix in *why when something else is at job-ID.
bool JobDirsReady(const std::string& mps_dir, uint32_t job, uid_t uid, std::string* why);

// Removes mps_dir/job-ID completely (the epilog, as root): job-ID must be a
// folder MakeJobDirs made for uid (IsOwnJobDir); everything below it is
// removed as RemoveTree does with `uid` as the owner.  Returns false with one line in *error naming
// what is left and why.
bool RemoveJobDirs(const std::string& mps_dir, uint32_t job, uid_t uid, std::string* error);

// Empties and removes the folder `name` below the descriptor `dir` without
// following a link: entries are unlinked with unlinkat() below descriptors
// opened O_NOFOLLOW|O_DIRECTORY; a folder is entered only when it is owned by
// `owner` and on the same file system (so root does only what `owner` could
// do in its own folders); folders deeper than a fixed limit are moved up and
// emptied from there (no descriptor chain grows with the depth).  `name`
// itself may be root's.  Returns false with one line in *left naming what is
// left.
bool RemoveTree(int dir, const std::string& name, uid_t owner, std::string* left);

}  // namespace multilane_spank

#endif  // MULTILANE_SPANK_JOB_DIRS_H_
