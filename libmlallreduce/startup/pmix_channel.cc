// pmix_channel.cc: the start-up ballots carried by PMIx (pmix_channel.h).
#include "libmlallreduce/startup/pmix_channel.h"

#include <dlfcn.h>

#include <cstdlib>

#include "libmlallreduce/startup/ballot_reader.h"
#include "libmlallreduce/startup/ballot_tree.h"
#include "libmlallreduce/base/loaded_symbol.h"
#include "libmlallreduce/startup/pmix_abi.h"
#include "vocab/refuse.h"

namespace mla::lib {
namespace {

constexpr char kKey[] = "multilane.ballot.1";    // frozen: the protocol's name
constexpr char kTreeKey[] = "multilane.tree.1";  // a leader's subtree summary (ballot_tree.h)
// How long a rank waits for a leader's summary before it computes that
// subtree from the ballots itself: a leader publishes once it has read its
// block and its children's, which a slow node may take a while to do.
constexpr int kSummaryWaitSeconds = 10;

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

// Publishes `text` under `key` for the job's other ranks.
bool Put(Pmix& p, const char* key, const std::string& text, std::string* why) {
  pmix::Value value{};
  value.type = pmix::kTypeString;
  std::string copy = text;
  value.data.string = copy.data();
  if (int rc = p.put(pmix::kScopeGlobal, key, &value); rc != pmix::kSuccess)
    return mla::Refuse(why, "PMIx_Put failed (status " + std::to_string(rc) + ")");
  if (int rc = p.commit(); rc != pmix::kSuccess)
    return mla::Refuse(why, "PMIx_Commit failed (status " + std::to_string(rc) + ")");
  return true;
}

// The block size: the ranks of a node (virtual, or the job's ranks over its
// nodes as PMIx counts them), capped by TreeBlock.
int BlockSize(const BallotReads& reads, int size, int ranks_per_node) {
  if (ranks_per_node <= 0) {
    const int nodes = ReadNodeCount(reads);
    ranks_per_node = nodes > 0 ? (size + nodes - 1) / nodes : kMaxBlock;
  }
  return TreeBlock(ranks_per_node);
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
  return Put(p, kKey, ballot, why);
}

std::optional<BallotSummary> PmixAgree(int size, int rank, int ranks_per_node, const Ballot& mine, int* reads) {
  Pmix& p = State();
  if (!p.connected) return std::nullopt;
  bool complete = true;
  const BallotReads pmix{p.get, p.get_nb, p.self, reads};
  TreeStore store;
  store.ballots = [&](int first, int count) {
    bool done = true;
    auto texts = ReadBallots(pmix, kKey, first, count, &done);
    complete = complete && done;
    return texts;
  };
  store.summary = [&](int leader) { return ReadPublished(pmix, kTreeKey, leader, kSummaryWaitSeconds); };
  store.publish = [&](const std::string& text) {
    std::string ignored;  // a summary that cannot be published is computed by its readers
    Put(p, kTreeKey, text, &ignored);
  };
  const TreeShape shape{size, BlockSize(pmix, size, ranks_per_node)};
  BallotSummary all = AgreeByTree(shape, rank, mine, store);
  // A read still in PMIx's hands keeps this connection: its answer may come.
  if (complete) p.finalize(nullptr, 0);
  p.connected = false;
  return all;
}

void PmixRelease() {
  Pmix& p = State();
  if (p.connected) p.finalize(nullptr, 0);
  p.connected = false;
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
