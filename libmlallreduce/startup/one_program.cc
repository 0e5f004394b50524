// one_program.cc: every rank runs this program (one_program.h).
#include "libmlallreduce/startup/one_program.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>

#include "vocab/outside_input.h"

namespace mla::lib {
namespace {

// A children list is a few bytes per child: 1 MiB holds far more ranks than
// a node runs.
constexpr size_t kMaxChildrenBytes = size_t{1} << 20;
constexpr size_t kMaxChildren = 65536;

bool SameFile(const struct stat& a, const struct stat& b) { return a.st_dev == b.st_dev && a.st_ino == b.st_ino; }

// The children of process `pid`, over all its threads (a launcher may fork
// from any of them); false when its task folder cannot be read.
bool ChildrenOf(pid_t pid, std::vector<long>* children) {
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  DIR* dir = opendir(tasks.c_str());
  if (dir == nullptr) return false;
  bool ok = true;
  while (const struct dirent* e = readdir(dir)) {
    if (!std::isdigit(static_cast<unsigned char>(e->d_name[0]))) continue;
    std::string text;
    if (mla::ReadFileBounded(tasks + "/" + e->d_name + "/children", kMaxChildrenBytes, false, &text).outcome !=
        mla::FileRead::Outcome::kRead) {
      ok = false;
      break;
    }
    for (long id : ParseChildIds(text, kMaxChildren)) children->push_back(id);
  }
  closedir(dir);
  return ok;
}

}  // namespace

std::vector<long> ParseChildIds(const std::string& text, size_t max_ids) {
  std::vector<long> ids;
  size_t i = 0;
  while (i < text.size() && ids.size() < max_ids) {
    size_t end = i;
    while (end < text.size() && text[end] != ' ' && text[end] != '\n') ++end;
    const std::string word = text.substr(i, end - i);
    i = end + 1;
    if (word.empty() || word.size() > 9) continue;  // pid_max is at most 2^22
    bool digits = true;
    for (char c : word) digits = digits && std::isdigit(static_cast<unsigned char>(c));
    const long id = digits ? std::strtol(word.c_str(), nullptr, 10) : 0;
    if (id > 0) ids.push_back(id);
  }
  return ids;
}

bool EveryRankRunsThisProgram(int world_size) {
  struct stat self;
  if (world_size <= 0 || stat("/proc/self/exe", &self) != 0) return false;
  std::vector<long> children;
  if (!ChildrenOf(getppid(), &children)) return false;
  const long me = static_cast<long>(getpid());
  int same = 0;
  bool found_me = false;
  for (long id : children) {
    struct stat other;
    const std::string exe = "/proc/" + std::to_string(id) + "/exe";
    if (stat(exe.c_str(), &other) != 0 || !SameFile(self, other)) continue;
    ++same;
    found_me = found_me || id == me;
  }
  return found_me && same == world_size;
}

}  // namespace mla::lib
