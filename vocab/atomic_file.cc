#include "vocab/atomic_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace mla {
namespace {

// The process's umask (read by setting it and setting it back: there is no
// other portable way; this runs once per job, at MPI_Finalize).
mode_t CurrentUmask() {
  const mode_t mask = umask(022);
  umask(mask);
  return mask;
}

bool WriteAll(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

std::string ReplaceFileAtomically(const std::string& path, const FillFile& fill) {
  const size_t slash = path.rfind('/');
  const std::string pattern =
      (slash == std::string::npos ? "." + path : path.substr(0, slash + 1) + "." + path.substr(slash + 1)) + ".XXXXXX";
  std::vector<char> tmp(pattern.begin(), pattern.end());
  tmp.push_back('\0');
  const int fd = mkstemp(tmp.data());  // O_CREAT|O_EXCL, mode 0600
  if (fd < 0) return std::strerror(errno);
  std::string why = fill(fd, tmp.data());
  if (close(fd) != 0 && why.empty()) why = std::strerror(errno);
  if (why.empty() && std::rename(tmp.data(), path.c_str()) != 0) why = std::strerror(errno);
  if (!why.empty()) unlink(tmp.data());
  return why;
}

std::string WriteFileAtomically(const std::string& dir, const std::string& name, const std::string& text) {
  return ReplaceFileAtomically(dir + "/" + name, [&](int fd, const std::string&) -> std::string {
    if (fchmod(fd, 0666 & ~CurrentUmask()) != 0 || !WriteAll(fd, text)) return std::strerror(errno);
    return "";
  });
}

}  // namespace mla
