/* fake_nvml_test_support.c: a stand-in libnvidia-ml.so.1 for the unit test of the job
 * report's GPU sampler (job_report_test.cc, GpuSampler.ThreadSamplesAFakeNvml),
 * so that the sampler's thread starts and samples on a host without a GPU,
 * also under ThreadSanitizer (issue 27: no TSan run had that thread).  One
 * fake GPU; fake_nvml_samples() counts the utilisation reads.  Never
 * installed. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

typedef struct {
  unsigned int gpu;
  unsigned int memory;
} FakeUtilization;

static atomic_ulong samples;
static atomic_ullong energy_mj;

unsigned long fake_nvml_samples(void) { return atomic_load(&samples); }

int nvmlInit_v2(void) { return 0; }
int nvmlShutdown(void) { return 0; }
int nvmlDeviceGetCount_v2(unsigned int* count) {
  *count = 1;
  return 0;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned int index, void** device) {
  *device = (void*)(uintptr_t)(index + 1);
  return 0;
}
int nvmlDeviceGetUUID(void* device, char* buf, unsigned int size) {
  (void)device;
  snprintf(buf, size, "GPU-fake-0000");
  return 0;
}
int nvmlDeviceGetName(void* device, char* buf, unsigned int size) {
  (void)device;
  snprintf(buf, size, "Fake GPU");
  return 0;
}
int nvmlDeviceGetUtilizationRates(void* device, FakeUtilization* u) {
  (void)device;
  u->gpu = 50;
  u->memory = 10;
  atomic_fetch_add(&samples, 1);
  return 0;
}
int nvmlDeviceGetPowerUsage(void* device, unsigned int* milliwatts) {
  (void)device;
  *milliwatts = 100000;
  return 0;
}
int nvmlDeviceGetTotalEnergyConsumption(void* device, unsigned long long* mj) {
  (void)device;
  *mj = atomic_fetch_add(&energy_mj, 1000) + 1000;
  return 0;
}
