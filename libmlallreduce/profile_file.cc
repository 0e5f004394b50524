// profile_file.cc: the bounded read of MULTILANE_PROFILE_FILE (profile_file.h).
#include "profile_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace mla {
namespace {

// What fstat says the file is, for the message.
const char* KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a plain file";
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

bool ReadProfileFile(const std::string& path, std::string* text, std::string* why) {
  const std::string fix = ": check the path and its permissions";
  Fd fd(open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0) {
    *why = std::string("cannot be read (") + std::strerror(errno) + ")" + fix;
    return false;
  }
  struct stat st;
  if (fstat(fd.get(), &st) != 0) {
    *why = std::string("cannot be read (") + std::strerror(errno) + ")" + fix;
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    *why = std::string("is not a regular file (") + KindOf(st.st_mode) + "): name a profile file written by "
           "multilane show or tune";
    return false;
  }
  const std::string limit = "1 MiB";
  if (static_cast<unsigned long long>(st.st_size) > kMaxProfileFileBytes) {
    *why = "is larger than " + limit + " (" + std::to_string(st.st_size) +
           " bytes; tuned profiles are a few KiB): name the profile file itself";
    return false;
  }
  // The file may grow while it is read: read at most one byte past the cap.
  std::string content;
  char buf[16384];
  for (;;) {
    const ssize_t n = read(fd.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      *why = std::string("cannot be read (") + std::strerror(errno) + ")" + fix;
      return false;
    }
    if (n == 0) break;
    content.append(buf, static_cast<size_t>(n));
    if (content.size() > kMaxProfileFileBytes) {
      *why = "is larger than " + limit + " (it grew while it was read): name the profile file itself";
      return false;
    }
  }
  if (content.empty()) {
    *why = "is empty: write a profile there or unset the variable";
    return false;
  }
  *text = std::move(content);
  return true;
}

}  // namespace mla
