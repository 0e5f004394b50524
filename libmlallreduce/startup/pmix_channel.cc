// pmix_channel.cc: the start-up ballots carried by PMIx (pmix_channel.h).
#include "libmlallreduce/startup/pmix_channel.h"

#include <dlfcn.h>

#include <cstdlib>

#include "libmlallreduce/startup/ballot_reader.h"
#include "libmlallreduce/base/loaded_symbol.h"
#include "libmlallreduce/startup/pmix_abi.h"
#include "vocab/refuse.h"

namespace mla::lib {
namespace {

constexpr char kKey[] = "multilane.ballot.1";  // frozen: the protocol's name

struct Pmix {
  pmix::InitFn init = nullptr;
  pmix::FinalizeFn finalize = nullptr;
  pmix::PutFn put = nullptr;
  pmix::CommitFn commit = nullptr;
  pmix::GetFn get = nullptr;
  pmix::GetNbFn get_nb = nullptr;  // optional: without it, a missing ballot is read from the local store only
  pmix::Proc self{};
  bool connected = false;
};

Pmix& State() {
  static Pmix p;
  return p;
}

// Opens the libpmix the MPI uses (the same object when it is loaded already).
bool Open(Pmix* p, std::string* why) {
  void* lib = dlopen("libpmix.so.2", RTLD_NOW | RTLD_GLOBAL);
  if (lib == nullptr) {
    const char* e = dlerror();
    return mla::Refuse(why, std::string("cannot open libpmix.so.2: ") + (e ? e : "unknown error"));
  }
  p->init = reinterpret_cast<pmix::InitFn>(dlsym(lib, "PMIx_Init"));
  p->finalize = reinterpret_cast<pmix::FinalizeFn>(dlsym(lib, "PMIx_Finalize"));
  p->put = reinterpret_cast<pmix::PutFn>(dlsym(lib, "PMIx_Put"));
  p->commit = reinterpret_cast<pmix::CommitFn>(dlsym(lib, "PMIx_Commit"));
  p->get = reinterpret_cast<pmix::GetFn>(dlsym(lib, "PMIx_Get"));
  p->get_nb = reinterpret_cast<pmix::GetNbFn>(dlsym(lib, "PMIx_Get_nb"));
  if (!p->init || !p->finalize || !p->put || !p->commit || !p->get)
    return mla::Refuse(why, "libpmix.so.2 lacks a PMIx client function");
  return true;
}

}  // namespace

bool PmixLaunched() {
  const char* ns = std::getenv("PMIX_NAMESPACE");
  const char* rank = std::getenv("PMIX_RANK");
  return ns != nullptr && ns[0] != '\0' && rank != nullptr && rank[0] != '\0';
}

bool PmixPublish(const std::string& ballot, std::string* why) {
  Pmix& p = State();
  if (!Open(&p, why)) return false;
  if (int rc = p.init(&p.self, nullptr, 0); rc != pmix::kSuccess)
    return mla::Refuse(why, "PMIx_Init failed (status " + std::to_string(rc) + ")");
  p.connected = true;
  pmix::Value value{};
  value.type = pmix::kTypeString;
  std::string text = ballot;
  value.data.string = text.data();
  if (int rc = p.put(pmix::kScopeGlobal, kKey, &value); rc != pmix::kSuccess)
    return mla::Refuse(why, "PMIx_Put failed (status " + std::to_string(rc) + ")");
  if (int rc = p.commit(); rc != pmix::kSuccess)
    return mla::Refuse(why, "PMIx_Commit failed (status " + std::to_string(rc) + ")");
  return true;
}

std::optional<std::vector<std::optional<std::string>>> PmixCollect(int size) {
  Pmix& p = State();
  if (!p.connected) return std::nullopt;
  bool complete = true;
  std::vector<std::optional<std::string>> ballots = ReadBallots({p.get, p.get_nb, p.self}, kKey, size, &complete);
  // A read still in PMIx's hands keeps this connection: its answer may come.
  if (complete) p.finalize(nullptr, 0);
  p.connected = false;
  return ballots;
}

// The MPI's initialisation as this library sees it (pmix_channel.h): how deep
// in it the process is, and whether the MPI has called PMIx_Init since it began.
// MPI initialisation runs once, on one thread, before any other MPI call.
int g_mpi_init_depth = 0;
bool g_mpi_called_pmix_init = false;

void PmixMpiInitBegins() {
  if (g_mpi_init_depth++ == 0) g_mpi_called_pmix_init = false;
}

void PmixMpiInitEnds() {
  if (g_mpi_init_depth > 0) --g_mpi_init_depth;
}

}  // namespace mla::lib

#ifndef MLA_SIMULATION
namespace {

// PMIx's own function `name`: from libpmix.so.2 where it is loaded (also when
// the MPI was opened with dlopen, out of RTLD_NEXT's reach), else the next
// definition after this library.  Null while no libpmix is loaded.
void* RealPmixFunction(const char* name) {
  if (void* fn = mla::lib::LoadedSymbol("libpmix.so.2", name)) return fn;
  return dlsym(RTLD_NEXT, name);
}

}  // namespace

// PMIx's own entry points, exported (exports.map) so that the MPI's calls
// reach these first; both forward to the real libpmix.
extern "C" __attribute__((visibility("default"))) int PMIx_Initialized(void) {
  if (mla::lib::g_mpi_init_depth > 0 && !mla::lib::g_mpi_called_pmix_init) return 0;
  auto real = reinterpret_cast<int (*)()>(RealPmixFunction("PMIx_Initialized"));
  return real != nullptr ? real() : 0;
}

extern "C" __attribute__((visibility("default"))) int PMIx_Init(mla::lib::pmix::Proc* proc, mla::lib::pmix::Info* info,
                                                                size_t ninfo) {
  if (mla::lib::g_mpi_init_depth > 0) mla::lib::g_mpi_called_pmix_init = true;
  auto real = reinterpret_cast<mla::lib::pmix::InitFn>(RealPmixFunction("PMIx_Init"));
  return real != nullptr ? real(proc, info, ninfo) : mla::lib::pmix::kErrInit;
}
#endif
