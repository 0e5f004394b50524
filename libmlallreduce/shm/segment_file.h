// segment_file.h: the POSIX shared-memory file behind a node's segment:
// created private to the user (mode 0600, O_EXCL, never through a link) under
// a name that holds the uid, the creator's pid and random bytes, mapped by
// every rank of the node, and unlinked once they all have it mapped.
#ifndef MLA_SHM_SEGMENT_FILE_H_
#define MLA_SHM_SEGMENT_FILE_H_

#include <sys/types.h>

#include <cstddef>
#include <string>

namespace mla::lib {

// The prefix of every segment's name in /dev/shm (without the leading '/').
constexpr char kSegmentPrefix[] = "mla-";

// A mapped segment; `base` is null when nothing is mapped.
struct SegmentMap {
  void* base = nullptr;
  size_t bytes = 0;
};

// The name "/mla-UID-PID-RANDOM" (RANDOM: 16 hex digits) shm_open takes.
std::string SegmentName(uid_t uid, pid_t pid, unsigned long long random);

// Reads a segment's name (with or without the leading '/') back into its
// uid and creator's pid; false when it is not one of the library's names.
bool ParseSegmentName(const std::string& name, uid_t* uid, pid_t* pid);

// Creates a new segment of `bytes` zero bytes under a fresh name (*name) and
// maps it: shm_open(O_CREAT | O_EXCL | O_NOFOLLOW, 0600), so that an existing
// file or a link of that name makes it fail, and no other user can open it.
// On failure returns false with *error saying why, and leaves no file.
bool CreateSegment(size_t bytes, std::string* name, SegmentMap* out, std::string* error);

// CreateSegment under the name `name` (a name of SegmentName's form): fails,
// leaving it alone, where anything of that name exists, a link included.
bool CreateSegmentNamed(const std::string& name, size_t bytes, SegmentMap* out, std::string* error);

// Maps the segment `name` made by CreateSegment: it must be a regular file
// of this user's, of mode 0600 and of exactly `bytes` bytes.  On failure
// returns false with *error saying why.
bool AttachSegment(const std::string& name, size_t bytes, SegmentMap* out, std::string* error);

// Removes the name from /dev/shm (the mappings stay); no error when it is gone.
void UnlinkSegment(const std::string& name);

// Unmaps *map and clears it; nothing when nothing is mapped.
void UnmapSegment(SegmentMap* map);

}  // namespace mla::lib

#endif  // MLA_SHM_SEGMENT_FILE_H_
