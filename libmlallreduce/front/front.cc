// front.cc: libmlallreduce.so, the library launchers inject with LD_PRELOAD.
//
// A PMPI interposer is bound to one MPI family's ABI, so multilane builds one
// library per family (libmlallreduce-openmpi.so.0, libmlallreduce-mpich.so.0).
// This front defines the four MPI functions the family builds interpose; the
// first call of any of them finds the MPI loaded in the process (it is loaded
// by then, also when a Python extension opened it), opens the family build
// beside this file and forwards every later call to it.  An MPI of neither
// family, or a family build that cannot be opened, gets one line on stderr and
// the calls go to the MPI unchanged.  Why in the process and not in the
// launcher: docs/admin.md, "MPI families".
//
// The front is compiled without mpi.h: the families' handle types differ (int
// in MPICH, pointers in Open MPI), and the front only passes the arguments on.
// It declares each handle as uintptr_t; on x86-64 (System V) and AArch64 both
// kinds travel in one integer register, which the front hands over untouched.
#include <dlfcn.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include "mpi_family.h"

#if !defined(__x86_64__) && !defined(__aarch64__)
#error "the front forwards MPI handles in integer registers: x86-64 and AArch64 only"
#endif

namespace {

enum Slot { kInit, kInitThread, kFinalize, kAllreduce, kSlots };
constexpr const char* kNames[kSlots] = {"MPI_Init", "MPI_Init_thread", "MPI_Finalize", "MPI_Allreduce"};

std::atomic<void*> g_target[kSlots];
std::once_flag g_once;

// The directory of this library: the family builds are installed beside it.
std::string OwnDirectory() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&OwnDirectory), &info) == 0 || info.dli_fname == nullptr) return ".";
  std::string self = info.dli_fname;
  size_t slash = self.rfind('/');
  return slash == std::string::npos ? "." : self.substr(0, slash);
}

bool Verbose() {
  const char* v = std::getenv("MULTILANE_VERBOSE");
  return v != nullptr && v[0] != '\0' && std::string(v) != "0";
}

void Say(const std::string& line) {
  if (mla::LaunchedAsRankZero()) std::fprintf(stderr, "multilane: %s\n", line.c_str());
}

// Points every slot at the MPI's own function: the job runs unchanged.
void PassThrough(const std::string& mpi_path) {
  void* mpi = mpi_path.empty() ? nullptr : dlopen(mpi_path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  for (int s = 0; s < kSlots; ++s) {
    void* fn = dlsym(RTLD_NEXT, kNames[s]);
    if (fn == nullptr && mpi != nullptr) fn = dlsym(mpi, kNames[s]);
    g_target[s].store(fn, std::memory_order_release);
  }
}

void Resolve() {
  std::string mpi_path;
  std::string version = mla::LoadedMpiVersion(&mpi_path);
  mla::MpiFamily family = mla::MpiFamilyFromVersion(version);
  std::string first = mla::FirstLine(version);
  if (family == mla::MpiFamily::kNeither) {
    Say("warning: the MPI in this process (" + (first.empty() ? std::string("none found") : first) +
        ") is neither Open MPI nor MPICH-based; multilane is off and the job runs unchanged");
    PassThrough(mpi_path);
    return;
  }
  std::string build = OwnDirectory() + "/libmlallreduce-" + mla::MpiFamilyName(family) + ".so.0";
  // RTLD_GLOBAL: the build's C API (mla_get_stats, mla_comm_layout, ...) is
  // then found by dlsym(RTLD_DEFAULT) as when the build itself was preloaded.
  // Its MPI_* come after this front (preloaded) in the global search order, so
  // the program's MPI calls still reach the front first.
  void* handle = dlopen(build.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    Say("warning: the " + std::string(mla::MpiFamilyName(family)) + " build of multilane (" + build +
        ") cannot be loaded: " + (why != nullptr ? why : "unknown error") +
        "; install it beside libmlallreduce.so; the job runs unchanged");
    PassThrough(mpi_path);
    return;
  }
  for (int s = 0; s < kSlots; ++s) {
    void* fn = dlsym(handle, kNames[s]);
    if (fn == nullptr) {
      Say("warning: " + build + " lacks " + kNames[s] + "; reinstall multilane; the job runs unchanged");
      PassThrough(mpi_path);
      return;
    }
    g_target[s].store(fn, std::memory_order_release);
  }
  if (Verbose()) Say("MPI family " + std::string(mla::MpiFamilyName(family)) + " (" + first + "), " + build);
}

void* Target(Slot s) {
  void* fn = g_target[s].load(std::memory_order_acquire);
  if (fn != nullptr) return fn;
  std::call_once(g_once, Resolve);
  fn = g_target[s].load(std::memory_order_acquire);
  if (fn == nullptr) {
    // No MPI defines the function, yet the program called it: nothing to forward to.
    std::fprintf(stderr, "multilane: error: %s called but no MPI library defines it\n", kNames[s]);
    std::abort();
  }
  return fn;
}

}  // namespace

#define MLA_FRONT extern "C" __attribute__((visibility("default")))

MLA_FRONT int MPI_Init(int* argc, char*** argv) {
  return reinterpret_cast<int (*)(int*, char***)>(Target(kInit))(argc, argv);
}

MLA_FRONT int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  return reinterpret_cast<int (*)(int*, char***, int, int*)>(Target(kInitThread))(argc, argv, required, provided);
}

MLA_FRONT int MPI_Finalize(void) { return reinterpret_cast<int (*)()>(Target(kFinalize))(); }

MLA_FRONT int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, std::uintptr_t datatype,
                            std::uintptr_t op, std::uintptr_t comm) {
  using Fn = int (*)(const void*, void*, int, std::uintptr_t, std::uintptr_t, std::uintptr_t);
  return reinterpret_cast<Fn>(Target(kAllreduce))(sendbuf, recvbuf, count, datatype, op, comm);
}

// The version of the family builds beside it (`multilane doctor` reads it).
MLA_FRONT const char* mla_version(void) { return MLA_FRONT_VERSION; }
