#include "stats.h"

#include <atomic>
#include <sstream>

namespace mla {
namespace {
std::atomic<uint64_t> g_calls{0};
std::atomic<uint64_t> g_unsupported{0};
std::atomic<uint64_t> g_device_calls{0};
std::atomic<uint64_t> g_calls_by_algo[MLA_ALGO_COUNT];
std::atomic<uint64_t> g_bytes_by_algo[MLA_ALGO_COUNT];
}  // namespace

void CountCall() { g_calls.fetch_add(1, std::memory_order_relaxed); }

void CountDone(mla_algo algo, uint64_t bytes) {
  if (algo < 0 || algo >= MLA_ALGO_COUNT) return;
  g_calls_by_algo[algo].fetch_add(1, std::memory_order_relaxed);
  g_bytes_by_algo[algo].fetch_add(bytes, std::memory_order_relaxed);
}

void CountDeviceCall() { g_device_calls.fetch_add(1, std::memory_order_relaxed); }

void CountUnsupported() { g_unsupported.fetch_add(1, std::memory_order_relaxed); }

mla_stats StatsSnapshot() {
  mla_stats s{};
  s.calls = g_calls.load(std::memory_order_relaxed);
  s.unsupported = g_unsupported.load(std::memory_order_relaxed);
  s.device_calls = g_device_calls.load(std::memory_order_relaxed);
  for (int i = 0; i < MLA_ALGO_COUNT; ++i) {
    s.calls_by_algo[i] = g_calls_by_algo[i].load(std::memory_order_relaxed);
    s.bytes_by_algo[i] = g_bytes_by_algo[i].load(std::memory_order_relaxed);
  }
  return s;
}

void ResetStats() {
  g_calls.store(0);
  g_unsupported.store(0);
  g_device_calls.store(0);
  for (int i = 0; i < MLA_ALGO_COUNT; ++i) {
    g_calls_by_algo[i].store(0);
    g_bytes_by_algo[i].store(0);
  }
}

std::string StatsLine(const mla_stats& s) {
  std::ostringstream out;
  uint64_t bytes = 0;
  out << "calls=" << s.calls;
  for (int i = 0; i < MLA_ALGO_COUNT; ++i) {
    out << ' ' << mla_algo_name(static_cast<mla_algo>(i)) << '=' << s.calls_by_algo[i];
    bytes += s.bytes_by_algo[i];
  }
  out << " unsupported=" << s.unsupported << " device=" << s.device_calls << " bytes=" << bytes;
  return out.str();
}

}  // namespace mla
