#include "atomic_file.h"

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

std::string WriteFileAtomically(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string path = dir + "/" + name;
  std::string pattern = dir + "/." + name + ".XXXXXX";
  std::vector<char> tmp(pattern.begin(), pattern.end());
  tmp.push_back('\0');
  const int fd = mkstemp(tmp.data());  // O_CREAT|O_EXCL, mode 0600
  if (fd < 0) return std::strerror(errno);
  std::string why;
  if (fchmod(fd, 0666 & ~CurrentUmask()) != 0 || !WriteAll(fd, text)) why = std::strerror(errno);
  if (close(fd) != 0 && why.empty()) why = std::strerror(errno);
  if (why.empty() && std::rename(tmp.data(), path.c_str()) != 0) why = std::strerror(errno);
  if (!why.empty()) unlink(tmp.data());
  return why;
}

}  // namespace mla
