// gpu_sampler.h: GPU utilisation, power and energy for the job report,
// sampled from NVML on a background thread.  NVML is loaded with dlopen only
// (libnvidia-ml.so.1); where it is absent the sampler does nothing.
#ifndef MLA_GPU_SAMPLER_H_
#define MLA_GPU_SAMPLER_H_

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace mla::lib {

// The samples of one GPU, summed as they come.  Pure arithmetic: unit-tested
// without NVML.
struct GpuSeries {
  int index = 0;
  std::string uuid;
  std::string name;
  int samples = 0;
  double util_sum = 0, util_max = 0;
  double mem_sum = 0, mem_max = 0;
  int power_samples = 0;
  double power_sum_w = 0, power_max_w = 0;
  // NVML's energy counter (millijoules) at the first and the last sample;
  // has_energy is false when the GPU has no counter.
  bool has_energy = false;
  unsigned long long first_energy_mj = 0, last_energy_mj = 0;
  // Power integrated over time (trapezoids), the fallback for energy.
  double integrated_j = 0;
  double last_power_w = -1, last_time_s = 0;

  // Adds one sample taken at `time_s` (any monotonic origin).  A negative
  // utilisation or power means NVML could not read it: that part is skipped.
  // energy_mj is used only when has_energy_counter.
  void Add(double time_s, double util_pct, double mem_pct, double power_w, bool has_energy_counter,
           unsigned long long energy_mj);

  // Energy between the first and the last sample, in joules: the counter's
  // difference where the GPU has one, else integrated power.
  double EnergyJoules() const;

  // One element of the report's "gpus" array for a GPU of `host`.
  std::string ToJson(const std::string& host, double interval_s) const;
};

class GpuSampler {
 public:
  GpuSampler() = default;
  GpuSampler(const GpuSampler&) = delete;
  GpuSampler& operator=(const GpuSampler&) = delete;
  // Stops the thread if it still runs.
  ~GpuSampler();

  // Loads NVML, takes a first sample of every GPU it sees on the calling
  // thread and starts a thread that samples them every `interval_s` seconds,
  // at the lowest scheduling priority.  Returns false, with
  // nothing started, when NVML cannot be loaded, sees no GPU or the thread
  // cannot start.  Call at most once.
  bool Start(double interval_s);

  // Takes a last sample, stops and joins the thread and shuts NVML down.
  // Safe to call when Start failed or was never called, and twice.
  void Stop();

  // The "gpus" elements of this host, comma-separated (no brackets); empty
  // when nothing was sampled.  Call after Stop.
  std::string ToJson(const std::string& host) const;

 private:
  void Run();
  void SampleAll();

  double interval_s_ = 1.0;
  std::vector<GpuSeries> series_;
  std::vector<void*> devices_;  // nvmlDevice_t handles, parallel to series_
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  bool started_ = false;
};

// Fills uuid[16] with the UUID of the GPU of this thread's current CUDA
// context, through the CUDA driver the process has already loaded (never
// loads it).  Returns false when there is none.
bool CurrentCudaDeviceUuid(unsigned char uuid[16]);

}  // namespace mla::lib

#endif  // MLA_GPU_SAMPLER_H_
