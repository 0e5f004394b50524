// fuzz_segment_name.cc: a name found in /dev/shm through ParseSegmentName
// (libmlallreduce/shm/segment_file.h), as the start-up's removal of stale
// segments reads every name there (any user can make one).  A name it takes
// must carry a positive pid, and the name SegmentName makes of the uid and
// pid it read must read back the same.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "libmlallreduce/shm/segment_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string name(reinterpret_cast<const char*>(data), size);
  uid_t uid = 0;
  pid_t pid = 0;
  if (!mla::lib::ParseSegmentName(name, &uid, &pid)) return 0;
  if (pid <= 0) std::abort();
  uid_t uid2 = 0;
  pid_t pid2 = 0;
  if (!mla::lib::ParseSegmentName(mla::lib::SegmentName(uid, pid, 0x0123456789abcdefULL), &uid2, &pid2) ||
      uid2 != uid || pid2 != pid)
    std::abort();
  return 0;
}
