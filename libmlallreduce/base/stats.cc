#include "libmlallreduce/base/stats.h"
#include "libmlallreduce/base/thread_counts.h"
#include "vocab/algo_names.h"

#include <atomic>
#include <cstring>
#include <mutex>
#include <sstream>

namespace mla::lib {
namespace {
std::atomic<uint64_t> g_unsupported{0};
std::atomic<uint64_t> g_device_calls{0};
std::atomic<uint64_t> g_calls_by_path[MLA_PATH_COUNT];
std::atomic<uint64_t> g_nccl_fallbacks{0};
std::atomic<int> g_device_ppg{0};
std::atomic<uint64_t> g_entry_passed_on[MLA_ENTRY_COUNT];
constexpr int kReasons = static_cast<int>(Unsupported::kCount);
std::atomic<uint64_t> g_unsupported_by[kReasons];
// The system algorithms' names (at most 40 characters, vocab/profile.h),
// taken under the mutex and published by the count (release), read without
// it; and their calls.
char g_system_names[kSystemAlgorithmSlots][48];
std::atomic<int> g_system_taken{0};
std::mutex g_system_mutex;
std::atomic<uint64_t> g_system_calls[kSystemAlgorithmSlots];

// The slot among the first `taken` that holds `name`, or -1.
int FindSystemSlot(const std::string& name, int taken) {
  for (int i = 0; i < taken; ++i)
    if (name == g_system_names[i]) return i;
  return -1;
}
}  // namespace

void NoteDeviceRanksPerGpu(int ppg) { g_device_ppg.store(ppg, std::memory_order_relaxed); }

int DeviceRanksPerGpuSeen() { return g_device_ppg.load(std::memory_order_relaxed); }

void CountCall() { AddOwn(MyCounts().calls, 1); }

void CountDone(mla_algo algo, uint64_t bytes) {
  if (algo < 0 || algo >= MLA_ALGO_COUNT) return;
  ThreadCounts& mine = MyCounts();
  AddOwn(mine.calls_by_algo[algo], 1);
  AddOwn(mine.bytes_by_algo[algo], bytes);
}

void CountDeviceCall() { g_device_calls.fetch_add(1, std::memory_order_relaxed); }

void CountDevicePath(int path, bool nccl_fallback) {
  if (path >= 0 && path < MLA_PATH_COUNT) g_calls_by_path[path].fetch_add(1, std::memory_order_relaxed);
  if (nccl_fallback) g_nccl_fallbacks.fetch_add(1, std::memory_order_relaxed);
}

void CountEntryPassedOn(mla_entry entry) { g_entry_passed_on[entry].fetch_add(1, std::memory_order_relaxed); }

mla_entry_stats EntryStatsSnapshot() {
  mla_entry_stats s{};
  for (int i = 0; i < MLA_ENTRY_COUNT; ++i) {
    s.calls[i] = SumOverThreads([i](ThreadCounts & t) -> auto& { return t.entry_calls[i]; });
    s.passed_on[i] = g_entry_passed_on[i].load(std::memory_order_relaxed);
  }
  return s;
}

void CountUnsupported(Unsupported why) {
  g_unsupported.fetch_add(1, std::memory_order_relaxed);
  const int i = static_cast<int>(why);
  if (i >= 0 && i < kReasons) g_unsupported_by[i].fetch_add(1, std::memory_order_relaxed);
}

int SystemAlgorithmSlot(const std::string& name) {
  int slot = FindSystemSlot(name, g_system_taken.load(std::memory_order_acquire));
  if (slot >= 0) return slot;
  std::lock_guard<std::mutex> lock(g_system_mutex);
  const int taken = g_system_taken.load(std::memory_order_relaxed);
  slot = FindSystemSlot(name, taken);
  if (slot >= 0 || taken == kSystemAlgorithmSlots || name.size() >= sizeof(g_system_names[0])) return slot;
  std::memcpy(g_system_names[taken], name.c_str(), name.size() + 1);
  g_system_taken.store(taken + 1, std::memory_order_release);
  return taken;
}

const char* SystemAlgorithmName(int slot) {
  return slot >= 0 && slot < g_system_taken.load(std::memory_order_acquire) ? g_system_names[slot] : "";
}

void CountSystemAlgorithm(int slot) {
  if (slot >= 0 && slot < kSystemAlgorithmSlots) g_system_calls[slot].fetch_add(1, std::memory_order_relaxed);
}

DetailStats DetailStatsSnapshot() {
  DetailStats d;
  for (int i = 0; i < kReasons; ++i) d.unsupported[i] = g_unsupported_by[i].load(std::memory_order_relaxed);
  for (int i = 0; i < kSystemAlgorithmSlots; ++i) d.system_algos[i] = g_system_calls[i].load(std::memory_order_relaxed);
  return d;
}

mla_stats StatsSnapshot() {
  mla_stats s{};
  s.calls = SumOverThreads([](ThreadCounts & t) -> auto& { return t.calls; });
  s.unsupported = g_unsupported.load(std::memory_order_relaxed);
  s.device_calls = g_device_calls.load(std::memory_order_relaxed);
  for (int i = 0; i < MLA_ALGO_COUNT; ++i) {
    s.calls_by_algo[i] = SumOverThreads([i](ThreadCounts & t) -> auto& { return t.calls_by_algo[i]; });
    s.bytes_by_algo[i] = SumOverThreads([i](ThreadCounts & t) -> auto& { return t.bytes_by_algo[i]; });
  }
  for (int i = 0; i < MLA_PATH_COUNT; ++i) s.calls_by_path[i] = g_calls_by_path[i].load(std::memory_order_relaxed);
  s.nccl_fallbacks = g_nccl_fallbacks.load(std::memory_order_relaxed);
  return s;
}

void ResetStats() {
  ZeroThreadCounts();
  g_unsupported.store(0);
  for (auto& n : g_unsupported_by) n.store(0);
  for (auto& n : g_system_calls) n.store(0);
  g_device_calls.store(0);
  for (int i = 0; i < MLA_PATH_COUNT; ++i) g_calls_by_path[i].store(0);
  g_nccl_fallbacks.store(0);
  for (int i = 0; i < MLA_ENTRY_COUNT; ++i) {
    g_entry_passed_on[i].store(0);
  }
}

std::string StatsLine(const mla_stats& s, const mla_entry_stats& entries, const DetailStats& details) {
  std::ostringstream out;
  uint64_t bytes = 0;
  out << "calls=" << s.calls;
  for (int i = 0; i < MLA_ALGO_COUNT; ++i) {
    out << ' ' << mla::AlgoName(static_cast<mla_algo>(i)) << '=' << s.calls_by_algo[i];
    bytes += s.bytes_by_algo[i];
    for (int slot = 0; i == MLA_ALGO_PASSTHROUGH && slot < kSystemAlgorithmSlots; ++slot)
      if (details.system_algos[slot] > 0)
        out << " mpi:" << SystemAlgorithmName(slot) << '=' << details.system_algos[slot];
  }
  out << " unsupported=" << s.unsupported;
  for (int i = 0; i < kReasons; ++i)
    out << " unsupported_" << mla::UnsupportedName(static_cast<Unsupported>(i)) << '=' << details.unsupported[i];
  out << " device=" << s.device_calls;
  for (int i = 0; i < MLA_PATH_COUNT; ++i)
    out << " device_" << mla::DevicePathName(static_cast<mla_device_path>(i)) << '=' << s.calls_by_path[i];
  out << " nccl_fallback=" << s.nccl_fallbacks << " bytes=" << bytes;
  uint64_t not_served = 0;
  for (int i = 0; i < MLA_ENTRY_COUNT; ++i) {
    out << " entry_" << mla::EntryName(static_cast<mla_entry>(i)) << '=' << entries.calls[i];
    not_served += entries.passed_on[i];
  }
  out << " not_served=" << not_served;
  return out.str();
}

}  // namespace mla::lib
