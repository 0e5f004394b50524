// stale_segments.h: segments left in /dev/shm by a job that died inside the
// set-up window (between creating a segment and every rank attaching it).
#ifndef MLA_SHM_STALE_SEGMENTS_H_
#define MLA_SHM_STALE_SEGMENTS_H_

namespace mla::lib {

// Removes every segment name of this user's (segment_file.h) in /dev/shm
// whose creator process is gone (kill(pid, 0) says ESRCH); segments of live
// processes and of other users stay.  Returns how many it removed.  Local,
// cheap (one directory read); called at library start-up.
int RemoveStaleSegments();

}  // namespace mla::lib

#endif  // MLA_SHM_STALE_SEGMENTS_H_
