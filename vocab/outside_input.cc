// outside_input.cc: bounded reads and excerpts of outside input
// (outside_input.h).
#include "vocab/outside_input.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "vocab/refuse.h"

namespace mla {

const char* FileKind(mode_t mode) {
  if (S_ISLNK(mode)) return "a link";
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a plain file";
}

namespace {

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

FileRead Ended(FileRead::Outcome outcome, int error_number = 0) {
  FileRead r;
  r.outcome = outcome;
  r.error_number = error_number;
  return r;
}

}  // namespace

FileRead ReadFdBounded(int fd, size_t max_bytes, std::string* text) {
  char buf[65536];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Ended(FileRead::Outcome::kReadFailed, errno);
    if (n == 0) return Ended(FileRead::Outcome::kRead);
    text->append(buf, static_cast<size_t>(n));
    if (text->size() > max_bytes) return Ended(FileRead::Outcome::kTooLarge);
  }
}

namespace {

std::string Failed(const char* what) {
  return std::string("cannot read: ") + what + ": check the path and its permissions";
}

}  // namespace

FileRead ReadFileBounded(const std::string& path, size_t max_bytes, bool refuse_links, std::string* text) {
  const int flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | (refuse_links ? O_NOFOLLOW : 0);
  Fd fd(open(path.c_str(), flags));
  if (fd.get() < 0) {
    const int e = errno;
    return Ended(refuse_links && e == ELOOP ? FileRead::Outcome::kIsLink : FileRead::Outcome::kCannotOpen, e);
  }
  struct stat st;
  if (fstat(fd.get(), &st) != 0) return Ended(FileRead::Outcome::kCannotOpen, errno);
  if (!S_ISREG(st.st_mode)) {
    FileRead r = Ended(FileRead::Outcome::kNotRegular);
    r.kind = FileKind(st.st_mode);
    r.is_folder = S_ISDIR(st.st_mode);
    return r;
  }
  if (static_cast<unsigned long long>(st.st_size) > max_bytes) {
    FileRead r = Ended(FileRead::Outcome::kTooLarge);
    r.size = static_cast<uint64_t>(st.st_size);
    return r;
  }
  std::string content;
  const FileRead r = ReadFdBounded(fd.get(), max_bytes, &content);
  if (r.outcome == FileRead::Outcome::kRead) *text = std::move(content);
  return r;
}

bool ReadInputFile(const std::string& path, std::string* text, std::string* error, bool refuse_links) {
  const FileRead r = ReadFileBounded(path, kMaxInputFileBytes, refuse_links, text);
  switch (r.outcome) {
    case FileRead::Outcome::kRead:
      return true;
    case FileRead::Outcome::kIsLink:
      return mla::Refuse(error, "cannot read: it is a symbolic link: multilane does not follow links here; remove it");
    case FileRead::Outcome::kNotRegular:
      return mla::Refuse(error, std::string("cannot read: it is ") + r.kind + ", not a regular file: give " +
                                    (r.is_folder ? "the files in it" : "a regular file"));
    case FileRead::Outcome::kTooLarge:
      return mla::Refuse(error, "cannot read: larger than " + std::to_string(kMaxInputFileBytes >> 20) +
                                    " MiB: give the file multilane wrote, not a device or a stream");
    case FileRead::Outcome::kCannotOpen:
    case FileRead::Outcome::kReadFailed:
      break;
  }
  return mla::Refuse(error, Failed(std::strerror(r.error_number)));
}

}  // namespace mla
