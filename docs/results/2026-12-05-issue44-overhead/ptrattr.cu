// Cost of classifying a host pointer with CUDA in the process.
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
template <class F>
double ns_per(F f, int n) {
  for (int i = 0; i < n / 10; ++i) f();
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) f();
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / n;
}
int main() {
  std::vector<char> host(1 << 20);
  void* dev = nullptr;
  cudaMalloc(&dev, 1 << 20);
  const int n = 200000;
  for (void* p : {static_cast<void*>(host.data()), dev}) {
    const char* what = p == dev ? "device" : "host malloc";
    double rt = ns_per(
        [&] {
          cudaPointerAttributes a;
          if (cudaPointerGetAttributes(&a, p) != cudaSuccess) cudaGetLastError();
        },
        n);
    double one = ns_per(
        [&] {
          unsigned t = 0;
          cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)p);
        },
        n);
    CUpointer_attribute at[2] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED};
    double two = ns_per(
        [&] {
          unsigned t = 0;
          unsigned m = 0;
          void* d[2] = {&t, &m};
          cuPointerGetAttributes(2, at, d, (CUdeviceptr)p);
        },
        n);
    CUpointer_attribute only[1] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE};
    double type_only = ns_per(
        [&] {
          unsigned t = 0;
          void* d[1] = {&t};
          cuPointerGetAttributes(1, only, d, (CUdeviceptr)p);
        },
        n);
    std::printf(
        "%-12s cudaPointerGetAttributes %.1f ns, cuPointerGetAttribute(type) %.1f ns, "
        "cuPointerGetAttributes(type,managed) %.1f ns, cuPointerGetAttributes(type) %.1f ns\n",
        what, rt, one, two, type_only);
  }
  return 0;
}
