// pmix_channel.cc: the start-up ballots carried by PMIx (pmix_channel.h).
#include "pmix_channel.h"

#include <dlfcn.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <iterator>

#include "loaded_symbol.h"
#include "pmix_abi.h"

namespace mla {
namespace {

constexpr char kKey[] = "multilane.ballot.1";  // frozen: the protocol's name

struct Pmix {
  pmix::InitFn init = nullptr;
  pmix::FinalizeFn finalize = nullptr;
  pmix::PutFn put = nullptr;
  pmix::CommitFn commit = nullptr;
  pmix::GetFn get = nullptr;
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
    *why = std::string("cannot open libpmix.so.2: ") + (e ? e : "unknown error");
    return false;
  }
  p->init = reinterpret_cast<pmix::InitFn>(dlsym(lib, "PMIx_Init"));
  p->finalize = reinterpret_cast<pmix::FinalizeFn>(dlsym(lib, "PMIx_Finalize"));
  p->put = reinterpret_cast<pmix::PutFn>(dlsym(lib, "PMIx_Put"));
  p->commit = reinterpret_cast<pmix::CommitFn>(dlsym(lib, "PMIx_Commit"));
  p->get = reinterpret_cast<pmix::GetFn>(dlsym(lib, "PMIx_Get"));
  if (!p->init || !p->finalize || !p->put || !p->commit || !p->get) {
    *why = "libpmix.so.2 lacks a PMIx client function";
    return false;
  }
  return true;
}

// A PMIX_TIMEOUT entry: the operation gives up after `seconds`.
pmix::Info Timeout(int seconds) {
  pmix::Info info{};
  std::strncpy(info.key, pmix::kTimeout, pmix::kMaxKeyLen);
  info.value.type = pmix::kTypeInt;
  info.value.data.integer = seconds;
  return info;
}

// A boolean entry `key` set to true (PMIX_OPTIONAL).
pmix::Info Flag(const char* key) {
  pmix::Info info{};
  std::strncpy(info.key, key, pmix::kMaxKeyLen);
  info.value.type = pmix::kTypeBool;
  info.value.data.flag = true;
  return info;
}

// Reads one rank's ballot: first from the local store (`local_only`,
// PMIX_OPTIONAL: what MPI_Init's exchange collected: Open MPI 4 collects
// every rank's data), then, where it is not there, from the rank's own node
// (`direct`, the direct modex: Open MPI 5 collects none); both bounded by
// PMIX_TIMEOUT.  Every rank has committed its data in MPI_Init by now, so a
// rank without multilane answers "not found" at once.
std::optional<std::string> Read(const Pmix& p, uint32_t rank) {
  pmix::Proc peer{};
  std::memcpy(peer.nspace, p.self.nspace, sizeof peer.nspace);
  peer.rank = rank;
  const pmix::Info local_only[] = {Timeout(2), Flag(pmix::kOptional)};
  const pmix::Info direct[] = {Timeout(2)};
  pmix::Value* value = nullptr;
  if (p.get(&peer, kKey, local_only, std::size(local_only), &value) != pmix::kSuccess || value == nullptr) {
    value = nullptr;
    if (p.get(&peer, kKey, direct, std::size(direct), &value) != pmix::kSuccess || value == nullptr)
      return std::nullopt;
  }
  std::optional<std::string> text;
  if (value->type == pmix::kTypeString && value->data.string != nullptr) text = value->data.string;
  if (value->type == pmix::kTypeString) std::free(value->data.string);  // what PMIX_VALUE_RELEASE does
  std::free(value);
  return text;
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
  if (int rc = p.init(&p.self, nullptr, 0); rc != pmix::kSuccess) {
    *why = "PMIx_Init failed (status " + std::to_string(rc) + ")";
    return false;
  }
  p.connected = true;
  pmix::Value value{};
  value.type = pmix::kTypeString;
  std::string text = ballot;
  value.data.string = text.data();
  if (int rc = p.put(pmix::kScopeGlobal, kKey, &value); rc != pmix::kSuccess) {
    *why = "PMIx_Put failed (status " + std::to_string(rc) + ")";
    return false;
  }
  if (int rc = p.commit(); rc != pmix::kSuccess) {
    *why = "PMIx_Commit failed (status " + std::to_string(rc) + ")";
    return false;
  }
  return true;
}

std::optional<std::vector<std::optional<std::string>>> PmixCollect(int size) {
  Pmix& p = State();
  if (!p.connected) return std::nullopt;
  std::vector<std::optional<std::string>> ballots;
  ballots.reserve(static_cast<size_t>(size));
  for (int r = 0; r < size; ++r) ballots.push_back(Read(p, static_cast<uint32_t>(r)));
  p.finalize(nullptr, 0);
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

}  // namespace mla

#ifndef MLA_SIMULATION
namespace {

// PMIx's own function `name`: from libpmix.so.2 where it is loaded (also when
// the MPI was opened with dlopen, out of RTLD_NEXT's reach), else the next
// definition after this library.  Null while no libpmix is loaded.
void* RealPmixFunction(const char* name) {
  if (void* fn = mla::LoadedSymbol("libpmix.so.2", name)) return fn;
  return dlsym(RTLD_NEXT, name);
}

}  // namespace

// PMIx's own entry points, exported (exports.map) so that the MPI's calls
// reach these first; both forward to the real libpmix.
extern "C" __attribute__((visibility("default"))) int PMIx_Initialized(void) {
  if (mla::g_mpi_init_depth > 0 && !mla::g_mpi_called_pmix_init) return 0;
  auto real = reinterpret_cast<int (*)()>(RealPmixFunction("PMIx_Initialized"));
  return real != nullptr ? real() : 0;
}

extern "C" __attribute__((visibility("default"))) int PMIx_Init(mla::pmix::Proc* proc, mla::pmix::Info* info,
                                                                size_t ninfo) {
  if (mla::g_mpi_init_depth > 0) mla::g_mpi_called_pmix_init = true;
  auto real = reinterpret_cast<mla::pmix::InitFn>(RealPmixFunction("PMIx_Init"));
  return real != nullptr ? real(proc, info, ninfo) : mla::pmix::kErrInit;
}
#endif
