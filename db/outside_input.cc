// outside_input.cc: bounded reads and excerpts of outside input
// (outside_input.h).
#include "db/outside_input.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace mldb {
namespace {

// What fstat says a file that is not a regular one is, for the message.
const char* KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "something else";
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

std::string Failed(const char* what) {
  return std::string("cannot read: ") + what + ": check the path and its permissions";
}

std::string TooLarge() {
  return "cannot read: larger than " + std::to_string(kMaxInputFileBytes >> 20) +
         " MiB: give the file multilane wrote, not a device or a stream";
}

// Reads `fd` to its end into *text, at most one byte past the bound.
bool ReadBounded(int fd, std::string* text, std::string* error) {
  char buf[65536];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *error = Failed(std::strerror(errno));
      return false;
    }
    if (n == 0) return true;
    text->append(buf, static_cast<size_t>(n));
    if (text->size() > kMaxInputFileBytes) {
      *error = TooLarge();
      return false;
    }
  }
}

}  // namespace

bool ReadInputFile(const std::string& path, std::string* text, std::string* error, bool refuse_links) {
  const int flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | (refuse_links ? O_NOFOLLOW : 0);
  Fd fd(open(path.c_str(), flags));
  if (fd.get() < 0) {
    *error = refuse_links && errno == ELOOP ? "cannot read: it is a symbolic link: multilane does not follow links "
                                              "here; remove it"
                                            : Failed(std::strerror(errno));
    return false;
  }
  struct stat st;
  if (fstat(fd.get(), &st) != 0) {
    *error = Failed(std::strerror(errno));
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    *error = std::string("cannot read: it is ") + KindOf(st.st_mode) + ", not a regular file: give " +
             (S_ISDIR(st.st_mode) ? "the files in it" : "a regular file");
    return false;
  }
  if (static_cast<unsigned long long>(st.st_size) > kMaxInputFileBytes) {
    *error = TooLarge();
    return false;
  }
  std::string content;
  if (!ReadBounded(fd.get(), &content, error)) return false;
  *text = std::move(content);
  return true;
}


}  // namespace mldb
