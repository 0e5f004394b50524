// query.c: what one driver question about a pointer costs, on host memory (malloc) and on device
// memory (cuMemAlloc), per form of the question; the library asks cuPointerGetAttributes with
// three attributes (cuda/module.cc) or two (device/buffer_kinds.cc).  Median of 201 rounds of 1,000.
// Build (the GPU host): gcc -O2 query.c -I/usr/local/cuda/include -l:libcuda.so.1 -o query
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}
static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}
enum { kRounds = 201, kCalls = 1000 };
static double ns_per_call(int form, CUdeviceptr p) {
  double t[kRounds];
  unsigned type = 0, managed = 0;
  int ordinal = 0;
  CUpointer_attribute a3[3] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                               CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
  void* v3[3] = {&type, &managed, &ordinal};
  CUdeviceptr base = 0;
  size_t size = 0;
  for (int r = 0; r < kRounds; ++r) {
    double t0 = now();
    for (int i = 0; i < kCalls; ++i) {
      if (form == 0) cuPointerGetAttributes(3, a3, v3, p);
      if (form == 1) cuPointerGetAttributes(2, a3, v3, p);
      if (form == 2) cuPointerGetAttributes(1, a3, v3, p);
      if (form == 3) cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p);
      if (form == 4) cuMemGetAddressRange(&base, &size, p);
      __asm__ volatile("" ::: "memory");
    }
    t[r] = (now() - t0) * 1e9 / kCalls;
  }
  qsort(t, kRounds, sizeof(double), cmp);
  return t[kRounds / 2];
}
int main(void) {
  CUdevice dev;
  CUcontext ctx;
  if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx)) return 1;
  CUdeviceptr d = 0;
  if (cuMemAlloc(&d, 1 << 20)) return 1;
  void* h = malloc(1 << 20);
  const char* forms[5] = {"cuPointerGetAttributes x3", "cuPointerGetAttributes x2", "cuPointerGetAttributes x1",
                          "cuPointerGetAttribute", "cuMemGetAddressRange"};
  for (int f = 0; f < 5; ++f)
    printf("%-28s host %7.1f ns  device %7.1f ns\n", forms[f], ns_per_call(f, (CUdeviceptr)h), ns_per_call(f, d));
  return 0;
}
