// front.cc: libmlallreduce.so, the library launchers inject with LD_PRELOAD.
//
// A PMPI interposer is bound to one MPI family's ABI, so multilane builds one
// library per family (libmlallreduce-openmpi.so.0, libmlallreduce-mpich.so.0).
// This front defines the entry points the family builds interpose (front.h
// lists them, front_entries.cc defines them); the first call of any of them
// finds the MPI loaded in the process (it is loaded by then, also when a
// Python extension opened it), opens the family build beside this file and
// forwards every later call to it.  An MPI of neither
// family gets one line on stderr and the calls go to the MPI unchanged.  A
// family build that cannot be opened, or is not of this front's family and
// version, makes the front pass the calls to the MPI too, but it still takes
// part in the start-up agreement (startup.h) with an off vote, so the job's
// other ranks go off with it: a job is all in or all out
// (docs/all-in-or-all-out.md).  Why in the process and not in the launcher:
// docs/admin.md, "MPI families".
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

#include "libmlallreduce/front/front.h"
#include "libmlallreduce/startup/mpi_family.h"
#include "libmlallreduce/startup/pmix_channel.h"
#include "libmlallreduce/startup/startup.h"
#include "vocab/terminal_text.h"
#include "vocab/verbose_level.h"

#if !defined(__x86_64__) && !defined(__aarch64__)
#error "the front forwards MPI handles in integer registers: x86-64 and AArch64 only"
#endif

namespace {

using mla::lib::front::kFirstOptional;
using mla::lib::front::kSlots;

#define MLA_NAME_OF(name, ...) #name,
constexpr const char* kNames[kSlots] = {MLA_FRONT_SLOTS(MLA_NAME_OF)};
#undef MLA_NAME_OF

constexpr char kUnchanged[] = ", so multilane is off and the job runs unchanged; ";

std::atomic<void*> g_target[kSlots];
std::once_flag g_once;

// Set when the front passes the job through to the MPI: why (the off vote the
// front casts in the start-up agreement), and how to reach the MPI.
struct Fallback {
  bool active = false;
  bool agree = false;  // a family whose handles are known: take part in the agreement
  std::string reason;
  mla::lib::MpiAbiHandles abi;
  void* comm_size = nullptr;
  void* comm_rank = nullptr;
  void* allreduce = nullptr;
} g_fallback;

// The absolute directory of this library, as the kernel mapped it: the family
// builds are installed beside it.  Never relative to the current directory
// (a relative LD_PRELOAD), where anyone could plant a library.
std::string OwnDirectory() {
  const auto self = reinterpret_cast<std::uintptr_t>(&OwnDirectory);
  std::FILE* maps = std::fopen("/proc/self/maps", "re");
  if (maps == nullptr) return "";
  std::string dir;
  char line[4096];
  while (dir.empty() && std::fgets(line, sizeof line, maps) != nullptr) {
    unsigned long lo = 0, hi = 0;
    int path_at = 0;
    if (std::sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &lo, &hi, &path_at) < 2 || self < lo || self >= hi) continue;
    std::string path = line + path_at;
    while (!path.empty() && (path.back() == '\n' || path.back() == ' ')) path.pop_back();
    const size_t slash = path.rfind('/');
    if (!path.empty() && path[0] == '/' && slash != std::string::npos) dir = path.substr(0, slash);
  }
  std::fclose(maps);
  return dir;
}

// MULTILANE_VERBOSE read as the settings read it: a value they refuse is
// their one warning line, never a line of the front's as well.
bool Verbose() {
  const char* v = std::getenv("MULTILANE_VERBOSE");
  return v != nullptr && mla::VerboseLevel(v) > 0;
}

void Say(const std::string& line) {
  if (mla::lib::LaunchedAsRankZero()) mla::PrintLine(line);
}

// The MPI's own `name`: the next definition after the front (preloaded), or
// the one in the MPI library at `mpi_path` where a Python extension opened it
// without making it global.
void* SystemFunction(const std::string& mpi_path, const char* name) {
  void* fn = dlsym(RTLD_NEXT, name);
  if (fn != nullptr || mpi_path.empty()) return fn;
  void* mpi = dlopen(mpi_path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  return mpi != nullptr ? dlsym(mpi, name) : nullptr;
}

// Points every slot at the MPI's own function: the job runs unchanged.  The
// front still casts an off vote at MPI_Init (with `reason`), so that ranks
// whose family build runs go off too.
void PassThrough(const std::string& mpi_path, mla::MpiFamily family, const std::string& reason) {
  void* mpi = mpi_path.empty() ? nullptr : dlopen(mpi_path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  auto find = [&](const char* name) { return SystemFunction(mpi_path, name); };
  for (int s = 0; s < kSlots; ++s) g_target[s].store(find(kNames[s]), std::memory_order_release);
  g_fallback.active = true;
  g_fallback.reason = reason;
  g_fallback.comm_size = find("PMPI_Comm_size");
  g_fallback.comm_rank = find("PMPI_Comm_rank");
  g_fallback.allreduce = find("PMPI_Allreduce");
  g_fallback.agree = g_fallback.comm_size && g_fallback.comm_rank && g_fallback.allreduce &&
                     mla::lib::FindMpiAbiHandles(family, mpi, &g_fallback.abi);
}

// Opens the family build and checks that it is the build of `family` and of
// this front's version (a package upgraded under a running job is not).
void* OpenBuild(const std::string& build, mla::MpiFamily family, std::string* why) {
  void* handle = dlopen(build.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* e = dlerror();
    *why = "the " + std::string(mla::MpiFamilyName(family)) + " build of multilane (" + build + ") cannot be loaded (" +
           (e != nullptr ? e : "unknown error") + ")" + kUnchanged + "install it beside libmlallreduce.so";
    return nullptr;
  }
  using TextFn = const char* (*)();
  auto built_for = reinterpret_cast<TextFn>(dlsym(handle, "mla_build_family"));
  auto version = reinterpret_cast<TextFn>(dlsym(handle, "mla_version"));
  const std::string got_family = built_for ? built_for() : "unknown";
  const std::string got_version = version ? version() : "unknown";
  if (got_family != mla::MpiFamilyName(family) || got_version != MLA_FRONT_VERSION) {
    dlclose(handle);
    *why = build + " is multilane " + got_version + " built for " + got_family + ", not " + MLA_FRONT_VERSION +
           " for " + mla::MpiFamilyName(family) + kUnchanged + "reinstall multilane (one version on every node)";
    return nullptr;
  }
  // RTLD_GLOBAL: the build's C API (mla_get_stats, mla_comm_layout, ...) is
  // then found by dlsym(RTLD_DEFAULT) as when the build itself was preloaded.
  // Its MPI_* come after this front (preloaded) in the global search order, so
  // the program's MPI calls still reach the front first.
  return dlopen(build.c_str(), RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
}

void Resolve() {
  std::string mpi_path;
  std::string version = mla::lib::LoadedMpiVersion(&mpi_path);
  mla::MpiFamily family = mla::MpiFamilyFromVersion(version);
  std::string first = mla::MpiVersionKey(version);
  if (family == mla::MpiFamily::kNeither) {
    Say("warning: the MPI in this process (" + (first.empty() ? std::string("none found") : first) +
        ") is neither Open MPI nor MPICH-based; multilane is off and the job runs unchanged");
    PassThrough(mpi_path, family, "");
    return;
  }
  const std::string dir = OwnDirectory();
  std::string why = std::string("the directory of libmlallreduce.so cannot be found in /proc/self/maps") + kUnchanged +
                    "inject it by its absolute path";
  const std::string build = dir + "/" + mla::FamilyLibraryFile(mla::MpiFamilyName(family));
  void* handle = dir.empty() ? nullptr : OpenBuild(build, family, &why);
  for (int s = 0; handle != nullptr && s < kSlots; ++s) {
    void* fn = dlsym(handle, kNames[s]);
    if (fn == nullptr && s >= kFirstOptional) fn = SystemFunction(mpi_path, kNames[s]);  // the MPI's own
    if (fn == nullptr && s < kFirstOptional) {
      why = build + " lacks " + kNames[s] + kUnchanged + "reinstall multilane";
      handle = nullptr;
      break;
    }
    g_target[s].store(fn, std::memory_order_release);
  }
  if (handle == nullptr) {
    PassThrough(mpi_path, family, why);
    return;
  }
  if (Verbose()) Say("MPI family " + std::string(mla::MpiFamilyName(family)) + " (" + first + "), " + build);
}

}  // namespace

namespace mla::lib::front {

void* Target(Slot s) {
  void* fn = g_target[s].load(std::memory_order_acquire);
  if (fn != nullptr) return fn;
  std::call_once(g_once, Resolve);
  fn = g_target[s].load(std::memory_order_acquire);
  if (fn == nullptr) {
    // No MPI defines the function, yet the program called it: nothing to forward to.
    mla::PrintLine(std::string("error: ") + kNames[s] + " called but no MPI library defines it");
    std::abort();
  }
  return fn;
}

}  // namespace mla::lib::front

namespace {

// The front's part in the start-up agreement when it passes the job through.
mla::lib::Ballot FallbackBallot() {
  mla::lib::Ballot b;
  b.version = MLA_FRONT_VERSION;
  b.settings = 0;  // the front reads no settings: never equal to a family build's
  b.on = false;
  b.reason = g_fallback.reason;
  return b;
}

// How deep the program is in MPI initialisation (MPICH's Fortran MPI_INIT
// calls MPI_Init); initialisation happens once, on one thread.
int g_init_depth = 0;

}  // namespace

namespace mla::lib::front {

void BeforeInit() {
  mla::lib::PmixMpiInitBegins();
  if (g_init_depth++ == 0 && g_fallback.active && g_fallback.agree) mla::lib::CastBallot(FallbackBallot());
}

void AfterInit(int rc) {
  mla::lib::PmixMpiInitEnds();
  if (--g_init_depth != 0 || rc != 0 || !g_fallback.active || !g_fallback.agree) return;
  using CommIntFn = int (*)(std::uintptr_t, int*);
  using AllreduceFn = int (*)(const void*, void*, int, std::uintptr_t, std::uintptr_t, std::uintptr_t);
  const mla::lib::MpiAbiHandles& abi = g_fallback.abi;
  mla::lib::StartupMpi mpi;
  mpi.world_size = [&] {
    int n = 1;
    reinterpret_cast<CommIntFn>(g_fallback.comm_size)(abi.comm_world, &n);
    return n;
  };
  mpi.world_rank = [&] {
    int r = 0;
    reinterpret_cast<CommIntFn>(g_fallback.comm_rank)(abi.comm_world, &r);
    return r;
  };
  mpi.combine_max = [&](uint64_t* words, int n) {
    return reinterpret_cast<AllreduceFn>(g_fallback.allreduce)(abi.in_place, words, n, abi.unsigned_long_long,
                                                               abi.op_max, abi.comm_world) == 0;
  };
  const mla::lib::Verdict v = mla::lib::CountBallots(FallbackBallot(), mpi, 0);
  if (v.reporter == mpi.world_rank() && !v.line.empty()) {
    mla::PrintLine("warning: " + v.line);
  }
}

}  // namespace mla::lib::front
