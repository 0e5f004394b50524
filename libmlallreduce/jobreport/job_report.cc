#include "libmlallreduce/jobreport/job_report.h"

#include "vocab/utc_time.h"

#include <unistd.h>
#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>
#include <set>

#include "vocab/atomic_file.h"
#include "libmlallreduce/startup/comm_scope.h"
#include "libmlallreduce/base/cuda_presence.h"
#include "libmlallreduce/jobreport/gpu_sampler.h"
#include "vocab/json_text.h"
#include "vocab/job_key.h"
#include "libmlallreduce/base/log.h"
#include "libmlallreduce/base/stats.h"
#include "vocab/ranks_per_gpu.h"
#include "vocab/terminal_text.h"
#include "vocab/algo_names.h"

namespace mla::lib {

namespace report_internal {
std::atomic<bool> g_on{false};
}  // namespace report_internal

namespace {

using report_internal::g_on;

// Counters of one (memory kind, size bin).
struct BinCounters {
  std::atomic<uint64_t> calls{0};
  std::atomic<uint64_t> bytes{0};
  std::atomic<uint64_t> time{0};   // ticks, as every time below
  std::atomic<uint64_t> setup{0};  // this rank's one-time setup inside these calls (part of time)
  std::atomic<uint64_t> sampled{0};
  std::atomic<uint64_t> sampled_wait{0};
  std::atomic<uint64_t> sampled_time{0};
  std::atomic<uint64_t> algos[MLA_ALGO_COUNT];
  std::atomic<uint64_t> paths[MLA_PATH_COUNT];
  std::atomic<uint64_t> nccl_fallbacks{0};
  std::atomic<uint64_t> system_algos[kSystemAlgorithmSlots];  // of the passthrough calls, by system algorithm
  std::atomic<int> comm_size{0};
};

// The call counter cached on a communicator as an attribute.  MPI gives every
// rank of a communicator its calls in the same order, so the counters agree.
struct CommCounter {
  std::atomic<uint64_t> calls{0};
  int size = 0;
  bool sampleable = false;
  // The barrier's own time when every rank arrives together: the least time
  // of a second barrier run right after the first on the first kCalibrations
  // sampled calls.  Subtracted from every sampled barrier, so that a balanced
  // job does not show the barrier's latency as waiting.
  std::atomic<int> calibrations{0};
  std::atomic<uint64_t> barrier{UINT64_MAX};
};

constexpr int kCalibrations = 4;

constexpr int kKinds = 2;
BinCounters g_bins[kKinds][kSizeBins];
std::atomic<uint64_t> g_sampled_calls{0};
std::atomic<uint64_t> g_sampling{0};      // ticks the sampling barriers added beyond waiting
thread_local uint64_t t_setup_ticks = 0;  // this thread's setup ticks in its current call
thread_local int t_setup_depth = 0;       // ReportSetupTimers open on this thread
int g_sample_period = 64;
int g_counter_key = MPI_KEYVAL_INVALID;
CommCounter g_world_counter;  // MPI_COMM_WORLD's, without an attribute lookup
uint64_t g_start_ns = 0;
uint64_t g_start_ticks = 0;
bool g_use_tsc = false;
std::time_t g_start_utc = 0;
int g_host_rank = -1;
GpuSampler* g_sampler = nullptr;  // on a host's first rank while sampling

uint64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// The per-call clock: the TSC (8 ns a read here, against 23 ns for
// clock_gettime) where the CPU says it ticks at a constant rate in every
// state (invariant TSC), else CLOCK_MONOTONIC in nanoseconds.
bool InvariantTsc() {
#if defined(__x86_64__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid(0x80000007, &a, &b, &c, &d) && (d & (1u << 8)) != 0;
#else
  return false;
#endif
}

inline uint64_t Ticks() {
#if defined(__x86_64__)
  if (g_use_tsc) return __rdtsc();
#endif
  return NowNs();
}

int DeleteCounter(MPI_Comm, int, void* value, void*) {
  delete static_cast<CommCounter*>(value);
  return MPI_SUCCESS;
}

// The counter of `comm`, made on its first call; nullptr when `comm` cannot
// carry one.
CommCounter* CounterOf(MPI_Comm comm) {
  if (comm == MPI_COMM_WORLD) return &g_world_counter;
  if (comm == MPI_COMM_NULL || g_counter_key == MPI_KEYVAL_INVALID) return nullptr;
  void* value = nullptr;
  int found = 0;
  if (PMPI_Comm_get_attr(comm, g_counter_key, &value, &found) != MPI_SUCCESS) return nullptr;
  if (found) return static_cast<CommCounter*>(value);
  auto* c = new CommCounter();
  int inter = 0;
  if (PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && !inter && PMPI_Comm_size(comm, &c->size) == MPI_SUCCESS) {
    // The sampling barriers are the library's own calls: never on a
    // communicator that reaches another world (comm_scope.h).
    c->sampleable = c->size > 1 && WithinWorld(comm);
  }
  if (PMPI_Comm_set_attr(comm, g_counter_key, c) != MPI_SUCCESS) {
    delete c;
    return nullptr;
  }
  return c;
}

std::string Utc(std::time_t t, const char* format) { return UtcTime(t, format); }

// The process's command line as /proc/self/cmdline holds it: each argument
// ended by a NUL.
std::string CommandLine() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The base name of argv[0] (/proc/self/comm cuts names at 15 characters).
std::string ProgramName() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string name;
  std::getline(in, name, '\0');
  if (name.empty()) {
    std::ifstream comm("/proc/self/comm");
    std::getline(comm, name);
  }
  const size_t slash = name.rfind('/');
  return slash == std::string::npos ? name : name.substr(slash + 1);
}

std::string HostName() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

// SLURM_JOB_ID, or "local"; only characters safe in a file name.
std::string JobId() {
  const char* id = std::getenv("SLURM_JOB_ID");
  std::string out;
  for (const char* p = id ? id : ""; *p; ++p) {
    const char c = *p;
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '.') out += c;
  }
  return out.empty() ? "local" : out;
}

void AtomicMax(std::atomic<int>* a, int v) {
  int cur = a->load(std::memory_order_relaxed);
  while (v > cur && !a->compare_exchange_weak(cur, v, std::memory_order_relaxed)) {
  }
}

// Per-rank figures, reduced with MIN, SUM and MAX to world rank 0.
enum Scalar { kWall, kAllreduce, kWait, kSampling, kSetup, kDeviceUsed, kScalars };
enum PerBin { kCalls, kBytes, kTime, kBinWait, kCommSize, kPerBin };
constexpr int kFigures = kScalars + kKinds * kSizeBins * kPerBin;
int Figure(int kind, int bin, int what) { return kScalars + (kind * kSizeBins + bin) * kPerBin + what; }

// Seconds per tick, from the whole job's run.
double TickSeconds(uint64_t end_ns, uint64_t end_ticks) {
  return g_use_tsc && end_ticks > g_start_ticks ? (end_ns - g_start_ns) * 1e-9 / (end_ticks - g_start_ticks) : 1e-9;
}

// The one-time setup inside each bin's calls, in seconds, the largest over
// the ranks: one rank's setup holds up the others inside the same collective
// call, so every rank's time in that bin carries it.  Collective over
// MPI_COMM_WORLD.
std::vector<double> BinSetupMax(double tick_s) {
  std::vector<double> mine(kKinds * kSizeBins), most(kKinds * kSizeBins);
  for (int k = 0; k < kKinds; ++k)
    for (int i = 0; i < kSizeBins; ++i) mine[k * kSizeBins + i] = g_bins[k][i].setup.load() * tick_s;
  PMPI_Allreduce(mine.data(), most.data(), kKinds * kSizeBins, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return most;
}

// This rank's figures; each bin's time without `setup_max` (BinSetupMax),
// which is counted once, as the setup.
void LocalFigures(uint64_t end_ns, uint64_t end_ticks, const std::vector<double>& setup_max, std::vector<double>* v) {
  v->assign(kFigures, 0.0);
  const double tick_s = TickSeconds(end_ns, end_ticks);
  double sampled_wait = 0, sampled_time = 0;
  for (auto& kind : g_bins) {
    for (BinCounters& b : kind) {
      sampled_wait += b.sampled_wait.load() * tick_s;
      sampled_time += b.sampled_time.load() * tick_s;
    }
  }
  const double fallback = sampled_time > 0 ? sampled_wait / sampled_time : 0.0;
  double total = 0, wait = 0, setup = 0;
  for (int k = 0; k < kKinds; ++k) {
    for (int i = 0; i < kSizeBins; ++i) {
      BinCounters& b = g_bins[k][i];
      const double calls = static_cast<double>(b.calls.load());
      const double in_calls = b.time.load() * tick_s;
      const double bin_setup = std::min(setup_max[k * kSizeBins + i], in_calls);
      const double time = in_calls - bin_setup;
      setup += bin_setup;
      const double w = EstimatedWait(time, b.sampled_wait.load() * tick_s, b.sampled_time.load() * tick_s, fallback);
      (*v)[Figure(k, i, kCalls)] = calls;
      (*v)[Figure(k, i, kBytes)] = static_cast<double>(b.bytes.load());
      (*v)[Figure(k, i, kTime)] = time;
      (*v)[Figure(k, i, kBinWait)] = w;
      (*v)[Figure(k, i, kCommSize)] = b.comm_size.load();
      total += time;
      wait += w;
      if (k == static_cast<int>(MemKind::kDevice) && calls > 0) (*v)[kDeviceUsed] = 1;
    }
  }
  // Time inside allreduce counts the setup too; the bins do not.
  (*v)[kWall] = (end_ns - g_start_ns) * 1e-9;
  (*v)[kAllreduce] = total + setup;
  (*v)[kSetup] = setup;
  (*v)[kWait] = wait;
  (*v)[kSampling] = g_sampling.load() * tick_s;
}

// Distinct host names and the "gpus" elements of every host, gathered from
// the first rank of each host to world rank 0.  `text` is this host's
// "name\n" + gpus elements on a host's first rank, ignored elsewhere.
void GatherHosts(const std::string& text, bool leader, int world_rank, std::vector<std::string>* hosts,
                 std::string* gpus_json) {
  MPI_Comm leaders = MPI_COMM_NULL;
  if (PMPI_Comm_split(MPI_COMM_WORLD, leader ? 0 : MPI_UNDEFINED, world_rank, &leaders) != MPI_SUCCESS ||
      leaders == MPI_COMM_NULL) {
    return;
  }
  int n = 0, me = 0;
  PMPI_Comm_size(leaders, &n);
  PMPI_Comm_rank(leaders, &me);
  int len = static_cast<int>(text.size());
  std::vector<int> lens(me == 0 ? n : 0), offsets(me == 0 ? n : 0);
  PMPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, leaders);
  std::string all;
  if (me == 0) {
    int total = 0;
    for (int i = 0; i < n; ++i) {
      offsets[i] = total;
      total += lens[i];
    }
    all.resize(total);
  }
  PMPI_Gatherv(text.data(), len, MPI_CHAR, &all[0], lens.data(), offsets.data(), MPI_CHAR, 0, leaders);
  PMPI_Comm_free(&leaders);
  if (me != 0) return;
  std::set<std::string> names;
  for (int i = 0; i < n; ++i) {
    const std::string piece = all.substr(offsets[i], lens[i]);
    const size_t nl = piece.find('\n');
    names.insert(piece.substr(0, nl));
    if (nl != std::string::npos && nl + 1 < piece.size()) {
      if (!gpus_json->empty()) *gpus_json += ", ";
      *gpus_json += piece.substr(nl + 1);
    }
  }
  hosts->assign(names.begin(), names.end());
}

}  // namespace

void StartJobReport(const Config& config, int host_rank) {
  g_sample_period = config.report_sample;
  g_host_rank = host_rank;
  if (g_counter_key == MPI_KEYVAL_INVALID) {
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, DeleteCounter, &g_counter_key, nullptr);
  }
  if (host_rank == 0 && config.report_interval_s > 0) {
    auto* sampler = new GpuSampler();
    if (sampler->Start(config.report_interval_s))
      g_sampler = sampler;
    else
      delete sampler;
  }
  g_world_counter.size = 1;
  PMPI_Comm_size(MPI_COMM_WORLD, &g_world_counter.size);
  g_world_counter.sampleable = g_world_counter.size > 1;
  g_use_tsc = InvariantTsc();
  g_start_utc = std::time(nullptr);
  g_start_ns = NowNs();
  g_start_ticks = Ticks();
  g_on.store(true);
}

ReportSetupTimer::ReportSetupTimer() {
  if (t_setup_depth++ == 0 && ReportOn()) start_ = Ticks();
}

ReportSetupTimer::~ReportSetupTimer() {
  --t_setup_depth;
  if (start_ != 0) t_setup_ticks += Ticks() - start_;
}

ReportClock ReportCallBegin(MPI_Comm comm) {
  ReportClock clock;
  t_setup_ticks = 0;
  CommCounter* counter = CounterOf(comm);
  clock.start = Ticks();
  if (counter != nullptr) {
    clock.comm_size = counter->size;
    if (counter->sampleable && SampledCall(counter->calls.fetch_add(1, std::memory_order_relaxed), g_sample_period)) {
      PMPI_Barrier(comm);
      const uint64_t arrived = Ticks();
      // Every rank samples the same calls, so every rank calibrates alike.
      if (counter->calibrations.fetch_add(1, std::memory_order_relaxed) < kCalibrations) {
        PMPI_Barrier(comm);
        const uint64_t second = Ticks() - arrived;
        clock.sampling += second;
        if (second < counter->barrier.load(std::memory_order_relaxed)) {
          counter->barrier.store(second, std::memory_order_relaxed);
        }
      }
      const uint64_t barrier = arrived - clock.start;
      const uint64_t latency = std::min(barrier, counter->barrier.load(std::memory_order_relaxed));
      clock.wait = barrier - latency;
      clock.sampling += latency;
      clock.sampled = true;
    }
  }
  return clock;
}

void ReportCallEnd(const ReportClock& clock, const CallOutcome& outcome) {
  const uint64_t ticks = Ticks() - clock.start;
  const uint64_t setup = std::min(t_setup_ticks, ticks);
  t_setup_ticks = 0;
  BinCounters& b = g_bins[static_cast<int>(outcome.kind) & 1][SizeBin(outcome.bytes)];
  b.calls.fetch_add(1, std::memory_order_relaxed);
  b.bytes.fetch_add(outcome.bytes, std::memory_order_relaxed);
  b.time.fetch_add(ticks, std::memory_order_relaxed);
  if (setup > 0) b.setup.fetch_add(setup, std::memory_order_relaxed);
  if (outcome.algo >= 0 && outcome.algo < MLA_ALGO_COUNT) b.algos[outcome.algo].fetch_add(1, std::memory_order_relaxed);
  if (outcome.path >= 0 && outcome.path < MLA_PATH_COUNT) b.paths[outcome.path].fetch_add(1, std::memory_order_relaxed);
  if (outcome.nccl_fallback) b.nccl_fallbacks.fetch_add(1, std::memory_order_relaxed);
  if (outcome.system_algo >= 0 && outcome.system_algo < kSystemAlgorithmSlots)
    b.system_algos[outcome.system_algo].fetch_add(1, std::memory_order_relaxed);
  if (clock.comm_size > b.comm_size.load(std::memory_order_relaxed)) AtomicMax(&b.comm_size, clock.comm_size);
  if (clock.sampled) {
    b.sampled.fetch_add(1, std::memory_order_relaxed);
    b.sampled_wait.fetch_add(clock.wait, std::memory_order_relaxed);
    b.sampled_time.fetch_add(ticks > clock.sampling ? ticks - clock.sampling : 0, std::memory_order_relaxed);
    g_sampled_calls.fetch_add(1, std::memory_order_relaxed);
    g_sampling.fetch_add(clock.sampling, std::memory_order_relaxed);
  }
}

namespace {

// Every rank's figures (LocalFigures) and their min, sum and max over
// MPI_COMM_WORLD at world rank 0.
struct WorldFigures {
  std::vector<double> mine, lo = std::vector<double>(kFigures), sum = lo, hi = lo;
  Spread At(int f) const { return {lo[f], sum[f], hi[f]}; }
};

// Frees the call counters' attribute key and the attributes it keys.
void ReleaseCounterKey() {
  if (g_counter_key == MPI_KEYVAL_INVALID) return;
  for (MPI_Comm comm : {MPI_COMM_WORLD, MPI_COMM_SELF}) {
    void* value = nullptr;
    int found = 0;
    if (PMPI_Comm_get_attr(comm, g_counter_key, &value, &found) == MPI_SUCCESS && found)
      PMPI_Comm_delete_attr(comm, g_counter_key);
  }
  PMPI_Comm_free_keyval(&g_counter_key);
}

// The distinct GPUs that ran device buffers, by UUID (16 bytes a rank in
// `uuids`, zero where none); 1 when some GPU ran them but no UUID was read.
int DistinctGpus(const std::vector<unsigned char>& uuids, bool device_used) {
  std::set<std::string> distinct;
  static const unsigned char kZero[16] = {0};
  for (size_t at = 0; at + 16 <= uuids.size(); at += 16) {
    if (std::memcmp(&uuids[at], kZero, 16) != 0)
      distinct.insert(std::string(reinterpret_cast<const char*>(&uuids[at]), 16));
  }
  return device_used && distinct.empty() ? 1 : static_cast<int>(distinct.size());
}

// data->bins: every (memory kind, size bin) that some rank called, with the
// profile entry that covered it.
void AddBins(const Config& config, const WorldFigures& f, ReportData* data) {
  const int ppg = RanksPerGpuOrOne(config.ranks_per_gpu);
  for (int k = 0; k < kKinds; ++k) {
    for (int i = 0; i < kSizeBins; ++i) {
      if (f.hi[Figure(k, i, kCalls)] <= 0) continue;
      ReportBin b;
      b.kind = static_cast<MemKind>(k);
      b.bin = i;
      const bool rank0_called = f.mine[Figure(k, i, kCalls)] > 0;
      const std::vector<double>& counted = rank0_called ? f.mine : f.hi;
      b.calls = counted[Figure(k, i, kCalls)];
      b.bytes = counted[Figure(k, i, kBytes)];
      b.time_s = f.At(Figure(k, i, kTime));
      b.wait_s_sum = f.sum[Figure(k, i, kBinWait)];
      b.comm_size = static_cast<int>(f.hi[Figure(k, i, kCommSize)]);
      for (int a = 0; a < MLA_ALGO_COUNT; ++a) b.algos[a] = g_bins[k][i].algos[a].load();
      for (int p = 0; p < MLA_PATH_COUNT; ++p) b.paths[p] = g_bins[k][i].paths[p].load();
      b.nccl_fallbacks = g_bins[k][i].nccl_fallbacks.load();
      for (int a = 0; a < kSystemAlgorithmSlots; ++a)
        if (const uint64_t n = g_bins[k][i].system_algos[a].load())
          b.system_algos.emplace_back(SystemAlgorithmName(a), n);
      // Device calls matched ppg= against the GPU groups found by UUID.
      const int bin_ppg = b.kind == MemKind::kDevice && DeviceRanksPerGpuSeen() > 0 ? DeviceRanksPerGpuSeen() : ppg;
      if (!config.has_forced) b.profile = config.profile.Lookup(b.kind, SizeBinFrom(i), bin_ppg);
      data->bins.push_back(b);
    }
  }
}

// Writes the report into MULTILANE_REPORT's folder and, when set, the same
// file into MULTILANE_HISTORY's; a folder that cannot take it is warned
// about, never an error of the job.
void WriteReportFiles(const Config& config, const ReportData& data) {
  const std::string name = "multilane-report-" + data.job_id + "-" + Utc(g_start_utc, "%Y%m%dT%H%M%SZ") + "-" +
                           std::to_string(static_cast<long>(getpid())) + ".json";
  const std::string text = RenderReport(data);
  const std::string why = WriteFileAtomically(config.report_dir, name, text);
  if (!why.empty()) {
    WarnOnce("MULTILANE_REPORT=" + Quoted(config.report_dir) + ": the job report cannot be written there (" + why +
             "): create that directory and make it writable, or point MULTILANE_REPORT to one that is; "
             "the job itself is not affected");
  } else {
    Info("job report: " + config.report_dir + "/" + name);
  }
  if (config.history_dir.empty()) return;
  const std::string kept = WriteFileAtomically(config.history_dir, name, text);
  if (!kept.empty())
    WarnOnce("MULTILANE_HISTORY=" + Quoted(config.history_dir) +
             ": the job's history record cannot be written there (" + kept +
             "): `multilane run` makes that folder; create it, or unset MULTILANE_HISTORY; the job itself is "
             "not affected");
}

}  // namespace

void FinishJobReport(const Config& config) {
  const uint64_t end_ticks = Ticks();
  const uint64_t end_ns = NowNs();
  g_on.store(false);
  if (g_sampler != nullptr) g_sampler->Stop();

  int world_rank = 0, world_size = 1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
  WorldFigures f;
  LocalFigures(end_ns, end_ticks, BinSetupMax(TickSeconds(end_ns, end_ticks)), &f.mine);
  PMPI_Reduce(f.mine.data(), f.lo.data(), kFigures, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
  PMPI_Reduce(f.mine.data(), f.sum.data(), kFigures, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  PMPI_Reduce(f.mine.data(), f.hi.data(), kFigures, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);

  // GPUs count on hosts where some rank had CUDA loaded.
  int cuda_on_host = (CudaDriverLoaded() || f.mine[kDeviceUsed] > 0) ? 1 : 0;
  MPI_Comm host = MPI_COMM_NULL;
  if (PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, world_rank, MPI_INFO_NULL, &host) == MPI_SUCCESS) {
    PMPI_Allreduce(MPI_IN_PLACE, &cuda_on_host, 1, MPI_INT, MPI_MAX, host);
    PMPI_Comm_free(&host);
  }
  const bool leader = g_host_rank == 0;
  std::string text = HostName() + "\n";
  if (leader && cuda_on_host && g_sampler != nullptr) text += g_sampler->ToJson(HostName());
  ReportData data;
  GatherHosts(text, leader, world_rank, &data.hosts, &data.gpus_json);

  // Distinct GPUs that ran device buffers, by UUID.
  unsigned char uuid[16] = {0};
  if (f.mine[kDeviceUsed] > 0) CurrentCudaDeviceUuid(uuid);
  std::vector<unsigned char> uuids(world_rank == 0 ? 16 * world_size : 0);
  PMPI_Gather(uuid, 16, MPI_UNSIGNED_CHAR, uuids.data(), 16, MPI_UNSIGNED_CHAR, 0, MPI_COMM_WORLD);

  mla_layout layout{};
  const bool have_layout = mla_comm_layout(MPI_COMM_WORLD, &layout) == MPI_SUCCESS;
  ReleaseCounterKey();
  delete g_sampler;
  g_sampler = nullptr;
  if (world_rank != 0) return;

  data.job_id = JobId();
  data.job_name = ProgramName();
  data.job_key = config.job_key.empty() ? DefaultJobKey(data.job_name, CommandLine()) : config.job_key;
  data.started_utc = Utc(g_start_utc, kUtcTimestampFormat);
  data.ranks = world_size;
  if (have_layout) {
    data.nodes = layout.nodes;
    data.ranks_per_node = layout.ranks_per_node;
    data.ranks_per_gpu = layout.ranks_per_gpu;
    data.regular = layout.regular != 0;
  }
  data.gpus = DistinctGpus(uuids, f.hi[kDeviceUsed] > 0);
  if (config.has_forced) data.algo = mla::AlgoName(config.forced.algo);
  data.has_profile = !config.profile.empty();
  if (data.has_profile) data.profile_text = config.profile.ToString();
  data.wall_s = f.At(kWall);
  data.allreduce_s = f.At(kAllreduce);
  data.wait_s = f.At(kWait);
  data.sampling_s = f.At(kSampling);
  data.setup_s = f.At(kSetup);
  data.wait_sampled_calls = g_sampled_calls.load();
  data.entries = EntryStatsSnapshot();
  data.details = DetailStatsSnapshot();
  AddBins(config, f, &data);
  WriteReportFiles(config, data);
}

}  // namespace mla::lib
