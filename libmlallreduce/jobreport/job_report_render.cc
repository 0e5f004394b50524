// job_report_render.cc: the job report's pieces that need no MPI: size
// bins, the sampling choice, the waiting estimate and the JSON text.
#include <algorithm>
#include <cmath>

#include "libmlallreduce/jobreport/job_report.h"
#include "vocab/json_text.h"
#include "vocab/algo_names.h"

namespace mla::lib {
namespace {

std::string SpreadJson(const Spread& s, int ranks) {
  return "{\"min\": " + JsonNumber(s.min) + ", \"mean\": " + JsonNumber(s.sum / std::max(ranks, 1)) +
         ", \"max\": " + JsonNumber(s.max) + "}";
}

}  // namespace

int SizeBin(uint64_t bytes) { return bytes == 0 ? 0 : 64 - __builtin_clzll(bytes); }

uint64_t SizeBinFrom(int bin) { return bin == 0 ? 0 : 1ull << (bin - 1); }

double SizeBinTo(int bin) { return bin == 0 ? 1.0 : static_cast<double>(SizeBinFrom(bin)) * 2.0; }

bool SampledCall(uint64_t counter, int period) {
  if (period <= 1) return true;
  // splitmix64's finaliser: consecutive counters give unrelated values.
  uint64_t z = counter + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  // z * period / 2^64 is uniform in [0, period).
  return static_cast<uint64_t>((static_cast<unsigned __int128>(z) * static_cast<unsigned>(period)) >> 64) == 0;
}

double EstimatedWait(double time_s, double sampled_wait_s, double sampled_time_s, double fallback_share) {
  const double share = sampled_time_s > 0 ? sampled_wait_s / sampled_time_s : fallback_share;
  return time_s * std::min(std::max(share, 0.0), 1.0);
}

std::string RenderReport(const ReportData& d) {
  std::string s;
  s += "{\n  \"format\": \"multilane-job-report\",\n  \"version\": 1,\n";
  s += "  \"library_version\": " + JsonString(MLA_VERSION_STRING) + ",\n";
  s += "  \"job\": {\"id\": " + JsonString(d.job_id) + ", \"name\": " + JsonString(d.job_name) +
       ", \"key\": " + JsonString(d.job_key) + ", \"started_utc\": " + JsonString(d.started_utc) +
       ",\n    \"ranks\": " + std::to_string(d.ranks) + ", \"nodes\": " + std::to_string(d.nodes) +
       ", \"ranks_per_node\": " + std::to_string(d.ranks_per_node) +
       ", \"ranks_per_gpu\": " + std::to_string(d.ranks_per_gpu) + ", \"gpus\": " + std::to_string(d.gpus) +
       ",\n    \"hosts\": [";
  for (size_t i = 0; i < d.hosts.size(); ++i) s += (i ? ", " : "") + JsonString(d.hosts[i]);
  s += "], \"regular\": " + std::string(d.regular ? "true" : "false") + "},\n";
  s += "  \"settings\": {\"algo\": " + JsonString(d.algo) +
       ", \"profile\": " + (d.has_profile ? JsonString(d.profile_text) : std::string("null")) + "},\n";
  s += "  \"time\": {\n    \"wall_s\": " + SpreadJson(d.wall_s, d.ranks) +
       ",\n    \"allreduce_s\": " + SpreadJson(d.allreduce_s, d.ranks) +
       ",\n    \"wait_s\": " + SpreadJson(d.wait_s, d.ranks) +
       ",\n    \"wait_sampled_calls\": " + std::to_string(d.wait_sampled_calls) +
       ",\n    \"sampling_s\": " + SpreadJson(d.sampling_s, d.ranks) +
       ",\n    \"setup_s\": " + SpreadJson(d.setup_s, d.ranks) + "\n  },\n";
  s += "  \"entries\": {";
  for (int e = 0; e < MLA_ENTRY_COUNT; ++e) {
    s += (e ? ", " : "") + JsonString(mla::EntryName(static_cast<mla_entry>(e))) +
         ": {\"calls\": " + std::to_string(d.entries.calls[e]) +
         ", \"not_served\": " + std::to_string(d.entries.passed_on[e]) + "}";
  }
  s += "},\n  \"unsupported\": {";
  for (int u = 0; u < static_cast<int>(Unsupported::kCount); ++u)
    s += (u ? ", " : "") + JsonString(mla::UnsupportedName(static_cast<Unsupported>(u))) + ": " +
         std::to_string(d.details.unsupported[u]);
  s += "},\n";
  s += "  \"bins\": [";
  for (size_t i = 0; i < d.bins.size(); ++i) {
    const ReportBin& b = d.bins[i];
    const double wait_mean = b.wait_s_sum / std::max(d.ranks, 1);
    const double busy = b.time_s.max - wait_mean;
    const double algbw = busy > 0 ? b.bytes / busy / 1e9 : NAN;
    const int n = b.comm_size > 0 ? b.comm_size : d.ranks;
    const double busbw = algbw * 2.0 * (n - 1) / std::max(n, 1);
    s += i ? ",\n    " : "\n    ";
    s += "{\"memory\": " + JsonString(MemKindName(b.kind)) + ", \"from\": " + JsonNumber(SizeBinFrom(b.bin)) +
         ", \"to\": " + JsonNumber(SizeBinTo(b.bin)) + ", \"calls\": " + JsonNumber(b.calls) +
         ", \"bytes\": " + JsonNumber(b.bytes) + ",\n     \"time_s\": " + SpreadJson(b.time_s, d.ranks) +
         ", \"wait_s\": " + JsonNumber(wait_mean) + ", \"comm_ranks\": " + std::to_string(n) +
         ",\n     \"algbw_gbs\": " + JsonNumber(algbw) + ", \"busbw_gbs\": " + JsonNumber(busbw) + ", \"algos\": {";
    bool first = true;
    for (int a = 0; a < MLA_ALGO_COUNT; ++a) {
      if (b.algos[a] == 0) continue;
      s +=
          (first ? "" : ", ") + JsonString(mla::AlgoName(static_cast<mla_algo>(a))) + ": " + std::to_string(b.algos[a]);
      first = false;
    }
    s += "}";
    if (!b.system_algos.empty()) {
      s += ", \"system_algos\": {";
      for (size_t a = 0; a < b.system_algos.size(); ++a)
        s += (a ? ", " : "") + JsonString(b.system_algos[a].first) + ": " + std::to_string(b.system_algos[a].second);
      s += "}";
    }
    if (b.kind == MemKind::kDevice) {
      s += ", \"transports\": {";
      first = true;
      for (int p = 0; p < MLA_PATH_COUNT; ++p) {
        if (b.paths[p] == 0) continue;
        s += (first ? "" : ", ") + JsonString(mla::DevicePathName(static_cast<mla_device_path>(p))) + ": " +
             std::to_string(b.paths[p]);
        first = false;
      }
      s += "}";
      if (b.nccl_fallbacks > 0) s += ", \"nccl_fallbacks\": " + std::to_string(b.nccl_fallbacks);
    }
    if (b.profile != nullptr) {
      s += ",\n     \"profile\": {\"algo\": " + JsonString(mla::AlgoName(b.profile->choice.algo));
      if (b.profile->time_us >= 0) s += ", \"time_us\": " + JsonNumber(b.profile->time_us);
      if (b.profile->mpi_time_us >= 0) s += ", \"mpi_time_us\": " + JsonNumber(b.profile->mpi_time_us);
      s += "}";
    }
    s += "}";
  }
  s += d.bins.empty() ? "],\n" : "\n  ],\n";
  s += "  \"gpus\": [" + d.gpus_json + "]\n}\n";
  return s;
}

}  // namespace mla::lib
