#include "libmlallreduce/jobreport/gpu_sampler.h"

#include <dlfcn.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <system_error>

#include "libmlallreduce/base/loaded_symbol.h"
#include "vocab/json_text.h"

namespace mla::lib {
namespace {

// The few NVML entry points used, declared here so that nothing links NVML.
// Signatures as in nvml.h; NVML_SUCCESS is 0.
using NvmlDevice = void*;
struct NvmlUtilization {
  unsigned int gpu;
  unsigned int memory;
};
struct Nvml {
  void* lib = nullptr;
  int (*init)() = nullptr;
  int (*shutdown)() = nullptr;
  int (*count)(unsigned int*) = nullptr;
  int (*handle)(unsigned int, NvmlDevice*) = nullptr;
  int (*uuid)(NvmlDevice, char*, unsigned int) = nullptr;
  int (*name)(NvmlDevice, char*, unsigned int) = nullptr;
  int (*utilization)(NvmlDevice, NvmlUtilization*) = nullptr;
  int (*power)(NvmlDevice, unsigned int*) = nullptr;
  int (*energy)(NvmlDevice, unsigned long long*) = nullptr;  // may be absent
};
Nvml g_nvml;  // loaded by GpuSampler::Start, which runs once per process

template <typename F>
bool Bind(void* lib, const char* symbol, F* out) {
  *out = reinterpret_cast<F>(dlsym(lib, symbol));
  return *out != nullptr;
}

bool LoadNvml() {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) return false;
  Nvml n;
  n.lib = lib;
  if (!Bind(lib, "nvmlInit_v2", &n.init) || !Bind(lib, "nvmlShutdown", &n.shutdown) ||
      !Bind(lib, "nvmlDeviceGetCount_v2", &n.count) || !Bind(lib, "nvmlDeviceGetHandleByIndex_v2", &n.handle) ||
      !Bind(lib, "nvmlDeviceGetUUID", &n.uuid) || !Bind(lib, "nvmlDeviceGetName", &n.name) ||
      !Bind(lib, "nvmlDeviceGetUtilizationRates", &n.utilization) || !Bind(lib, "nvmlDeviceGetPowerUsage", &n.power) ||
      n.init() != 0) {
    dlclose(lib);
    return false;
  }
  Bind(lib, "nvmlDeviceGetTotalEnergyConsumption", &n.energy);
  g_nvml = n;
  return true;
}

double NowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

void GpuSeries::Add(double time_s, double util_pct, double mem_pct, double power_w, bool has_energy_counter,
                    unsigned long long energy_mj) {
  ++samples;
  if (util_pct >= 0) {
    util_sum += util_pct;
    util_max = std::max(util_max, util_pct);
    mem_sum += mem_pct;
    mem_max = std::max(mem_max, mem_pct);
  }
  if (power_w >= 0) {
    ++power_samples;
    power_sum_w += power_w;
    power_max_w = std::max(power_max_w, power_w);
    if (last_power_w >= 0) integrated_j += 0.5 * (power_w + last_power_w) * (time_s - last_time_s);
    last_power_w = power_w;
    last_time_s = time_s;
  }
  if (has_energy_counter) {
    if (!has_energy) first_energy_mj = energy_mj;
    has_energy = true;
    last_energy_mj = energy_mj;
  }
}

double GpuSeries::EnergyJoules() const {
  if (has_energy && last_energy_mj >= first_energy_mj) return (last_energy_mj - first_energy_mj) / 1000.0;
  return integrated_j;
}

std::string GpuSeries::ToJson(const std::string& host, double interval_s) const {
  const double n = samples > 0 ? samples : 1;
  const double np = power_samples > 0 ? power_samples : 1;
  std::string s = "{\"host\": " + JsonString(host) + ", \"index\": " + std::to_string(index) +
                  ", \"uuid\": " + JsonString(uuid) + ", \"name\": " + JsonString(name) +
                  ", \"samples\": " + std::to_string(samples) + ", \"interval_s\": " + JsonNumber(interval_s);
  s += ", \"utilization_pct\": {\"mean\": " + JsonNumber(util_sum / n) + ", \"max\": " + JsonNumber(util_max) + "}";
  s += ", \"memory_activity_pct\": {\"mean\": " + JsonNumber(mem_sum / n) + ", \"max\": " + JsonNumber(mem_max) + "}";
  s += ", \"power_w\": {\"mean\": " + JsonNumber(power_sum_w / np) + ", \"max\": " + JsonNumber(power_max_w) + "}";
  s += ", \"energy_j\": " + JsonNumber(EnergyJoules()) + "}";
  return s;
}

GpuSampler::~GpuSampler() { Stop(); }

bool GpuSampler::Start(double interval_s) {
  if (started_ || !LoadNvml()) return false;
  interval_s_ = interval_s;
  unsigned int count = 0;
  if (g_nvml.count(&count) == 0) {
    for (unsigned int i = 0; i < count; ++i) {
      NvmlDevice dev = nullptr;
      if (g_nvml.handle(i, &dev) != 0) continue;
      GpuSeries s;
      s.index = static_cast<int>(i);
      char buf[96] = {0};
      if (g_nvml.uuid(dev, buf, sizeof buf) == 0) s.uuid = buf;
      std::memset(buf, 0, sizeof buf);
      if (g_nvml.name(dev, buf, sizeof buf) == 0) s.name = buf;
      series_.push_back(s);
      devices_.push_back(dev);
    }
  }
  if (series_.empty()) {
    g_nvml.shutdown();
    return false;
  }
  // The first sample here, in MPI_Init: NVML's first queries are slow (tens
  // of milliseconds were seen), and on a thread they would delay rank 0, and
  // with it every rank, in the application's first calls.
  SampleAll();
  try {
    thread_ = std::thread(&GpuSampler::Run, this);
  } catch (const std::system_error&) {
    series_.clear();
    devices_.clear();
    g_nvml.shutdown();
    return false;
  }
  started_ = true;
  return true;
}

void GpuSampler::SampleAll() {
  const double now = NowSeconds();
  for (size_t i = 0; i < devices_.size(); ++i) {
    NvmlUtilization u{0, 0};
    unsigned int mw = 0;
    unsigned long long mj = 0;
    const bool has_util = g_nvml.utilization(devices_[i], &u) == 0;
    const bool has_power = g_nvml.power(devices_[i], &mw) == 0;
    const bool has_energy = g_nvml.energy != nullptr && g_nvml.energy(devices_[i], &mj) == 0;
    series_[i].Add(now, has_util ? u.gpu : -1.0, has_util ? u.memory : -1.0, has_power ? mw / 1000.0 : -1.0, has_energy,
                   mj);
  }
}

void GpuSampler::Run() {
  // The lowest priority for this thread only (Linux applies it to a thread
  // id): where ranks are bound to cores, the sampler shares rank 0's core and
  // must not delay it, since every collective would then wait for rank 0.
  setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 19);
  std::unique_lock<std::mutex> lock(mutex_);
  while (!wake_.wait_for(lock, std::chrono::duration<double>(interval_s_), [this] { return stop_; })) {
    SampleAll();
  }
}

void GpuSampler::Stop() {
  if (!started_) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  SampleAll();  // the last sample closes the energy interval at MPI_Finalize
  g_nvml.shutdown();
  started_ = false;
}

std::string GpuSampler::ToJson(const std::string& host) const {
  std::string out;
  for (const GpuSeries& s : series_) {
    if (!out.empty()) out += ", ";
    out += s.ToJson(host, interval_s_);
  }
  return out;
}

bool CurrentCudaDeviceUuid(unsigned char uuid[16]) {
  auto get_device = reinterpret_cast<int (*)(int*)>(LoadedSymbol("libcuda.so.1", "cuCtxGetDevice"));
  auto get_uuid =  // CUuuid* is 16 bytes
      reinterpret_cast<int (*)(void*, int)>(LoadedSymbol("libcuda.so.1", "cuDeviceGetUuid"));
  int device = -1;
  return get_device != nullptr && get_uuid != nullptr && get_device(&device) == 0 && get_uuid(uuid, device) == 0;
}

}  // namespace mla::lib
