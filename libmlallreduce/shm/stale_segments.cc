#include "libmlallreduce/shm/stale_segments.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "libmlallreduce/shm/segment_file.h"

namespace mla::lib {

int RemoveStaleSegments() {
  DIR* dir = opendir("/dev/shm");
  if (dir == nullptr) return 0;
  const uid_t me = geteuid();
  int removed = 0;
  while (const dirent* entry = readdir(dir)) {
    uid_t uid = 0;
    pid_t pid = 0;
    if (!ParseSegmentName(entry->d_name, &uid, &pid) || uid != me) continue;
    // The file itself must be ours too (the name alone proves nothing).
    struct stat st {};
    if (fstatat(dirfd(dir), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || st.st_uid != me) continue;
    if (kill(pid, 0) == 0 || errno != ESRCH) continue;  // its creator lives (or is not ours to ask)
    UnlinkSegment(std::string("/") + entry->d_name);
    ++removed;
  }
  closedir(dir);
  return removed;
}

}  // namespace mla::lib
