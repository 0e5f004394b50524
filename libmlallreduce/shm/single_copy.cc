#include "libmlallreduce/shm/single_copy.h"

#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace mla::lib {
namespace {

// The word a peer reads at set-up: this process's pid mixed with a constant,
// so that a read of the wrong process or address cannot match.
constexpr uint64_t kProbeMix = 0x6d6c612d636d6121ull;
uint64_t g_probe = 0;

}  // namespace

bool ReadPeer(pid_t pid, uint64_t address, void* to, size_t bytes) {
  char* out = static_cast<char*>(to);
  while (bytes > 0) {
    iovec local{out, bytes};
    iovec remote{reinterpret_cast<void*>(address), bytes};
    const ssize_t got = process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (got <= 0) {
      if (got == 0) errno = EIO;
      return false;
    }
    out += got;
    address += static_cast<uint64_t>(got);
    bytes -= static_cast<size_t>(got);
  }
  return true;
}

void PublishProbe(const NodeArea& area, int rank) {
  g_probe = kProbeMix ^ static_cast<uint64_t>(getpid());
  area.flags(rank).pid.store(getpid(), std::memory_order_relaxed);
  area.flags(rank).source.store(reinterpret_cast<uint64_t>(&g_probe), std::memory_order_relaxed);
}

bool ProbeSingleCopy(const NodeArea& area, int rank, std::string* why) {
  for (int p = 0; p < area.ranks(); ++p) {
    if (p == rank) continue;
    const int64_t pid = area.flags(p).pid.load(std::memory_order_relaxed);
    uint64_t word = 0;
    if (!ReadPeer(static_cast<pid_t>(pid), area.flags(p).source.load(std::memory_order_relaxed), &word, sizeof word)) {
      *why = std::string("process_vm_readv of a peer refused: ") + std::strerror(errno);
      return false;
    }
    if (word != (kProbeMix ^ static_cast<uint64_t>(pid))) {
      *why = "process_vm_readv of a peer read the wrong bytes";
      return false;
    }
  }
  return true;
}

}  // namespace mla::lib
