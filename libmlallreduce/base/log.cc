#include "libmlallreduce/base/log.h"

#include <atomic>
#include <mutex>
#include <set>

#include "vocab/terminal_text.h"

namespace mla::lib {
namespace {
std::atomic<int> g_world_rank{0};
std::mutex g_mutex;
std::set<std::string>& Seen() {
  static auto* seen = new std::set<std::string>();  // never destroyed: used at exit
  return *seen;
}
}  // namespace

void SetWorldRank(int rank) { g_world_rank.store(rank); }
int WorldRank() { return g_world_rank.load(); }

namespace {
// Messages quote variables and files: their control bytes never reach the terminal raw.
void PrintWarning(const std::string& message) { PrintLine("warning: " + message); }
}  // namespace

void WarnOnce(const std::string& message) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!Seen().insert(message).second) return;
  if (WorldRank() != 0) return;
  PrintWarning(message);
}

void WarnHere(const std::string& message) {
  std::lock_guard<std::mutex> lock(g_mutex);
  Seen().insert(message);
  PrintWarning(message);
}

void Info(const std::string& message) {
  if (WorldRank() != 0) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  PrintLine(message);
}

}  // namespace mla::lib
