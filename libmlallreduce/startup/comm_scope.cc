// comm_scope.cc: which communicators the start-up agreement speaks for
// (comm_scope.h).
#include "libmlallreduce/startup/comm_scope.h"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <numeric>
#include <vector>

#include "libmlallreduce/base/log.h"

namespace mla::lib {
namespace {

int g_keyval = MPI_KEYVAL_INVALID;
std::once_flag g_keyval_once;
std::atomic<bool> g_said{false};

// The cached answers, as attribute values (no memory of their own, so a
// duplicate of a communicator, which has its group, takes its answer along).
constexpr std::intptr_t kWithin = 1;
constexpr std::intptr_t kBeyond = 2;

// The lowest rank of comm's group in this process's world, or -1 when some
// member is outside it.  *first_of_world: the lowest rank of comm whose
// process is in this world (the one that speaks for it).
int Translate(MPI_Comm comm, int* first_of_world) {
  MPI_Group group = MPI_GROUP_NULL, world = MPI_GROUP_NULL;
  int size = 0, outside = 0;
  *first_of_world = -1;
  if (PMPI_Comm_group(comm, &group) != MPI_SUCCESS || PMPI_Comm_group(MPI_COMM_WORLD, &world) != MPI_SUCCESS ||
      PMPI_Group_size(group, &size) != MPI_SUCCESS) {
    outside = 1;
  } else {
    std::vector<int> ranks(static_cast<size_t>(size)), in_world(static_cast<size_t>(size), MPI_UNDEFINED);
    std::iota(ranks.begin(), ranks.end(), 0);
    if (PMPI_Group_translate_ranks(group, size, ranks.data(), world, in_world.data()) != MPI_SUCCESS) outside = 1;
    for (int r = 0; r < size; ++r) {
      if (in_world[static_cast<size_t>(r)] == MPI_UNDEFINED)
        ++outside;
      else if (*first_of_world < 0)
        *first_of_world = r;
    }
  }
  if (group != MPI_GROUP_NULL) PMPI_Group_free(&group);
  if (world != MPI_GROUP_NULL) PMPI_Group_free(&world);
  return outside;
}

bool Compute(MPI_Comm comm) {
  int inter = 0;
  // Intercommunicators are never served and are counted as unsupported
  // where every call's support is checked (call_support.h): nothing here.
  if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS) return false;
  if (inter) return true;
  int first_of_world = -1, rank = -1;
  if (Translate(comm, &first_of_world) == 0) return true;
  PMPI_Comm_rank(comm, &rank);
  if (rank == first_of_world && !g_said.exchange(true)) {
    WarnHere(
        "a communicator reaches processes of another MPI world (MPI_Comm_spawn, MPI_Comm_connect/accept or "
        "MPI_Comm_join, then a merge): the start-up agreement did not count their library and settings, so its "
        "calls, and those of any communicator made from it that reaches another world, run the system MPI; "
        "communicators within one world are served as before");
  }
  return false;
}

// A duplicate has its communicator's group: it takes the answer along.  Not
// MPI_COMM_DUP_FN, which MPICH defines as a symbol of its own library: the
// MPICH build must load into a process of another MPI and say so.
int CopyAnswer(MPI_Comm, int, void*, void* value_in, void* value_out, int* flag) {
  *static_cast<void**>(value_out) = value_in;
  *flag = 1;
  return MPI_SUCCESS;
}

}  // namespace

bool WithinWorld(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) return false;
  if (comm == MPI_COMM_WORLD || comm == MPI_COMM_SELF) return true;
  std::call_once(g_keyval_once,
                 [] { PMPI_Comm_create_keyval(CopyAnswer, MPI_COMM_NULL_DELETE_FN, &g_keyval, nullptr); });
  void* value = nullptr;
  int found = 0;
  if (g_keyval != MPI_KEYVAL_INVALID && PMPI_Comm_get_attr(comm, g_keyval, &value, &found) == MPI_SUCCESS && found)
    return reinterpret_cast<std::intptr_t>(value) == kWithin;
  const bool within = Compute(comm);
  if (g_keyval != MPI_KEYVAL_INVALID)
    PMPI_Comm_set_attr(comm, g_keyval, reinterpret_cast<void*>(within ? kWithin : kBeyond));
  return within;
}

void ReleaseCommScope() {
  if (g_keyval != MPI_KEYVAL_INVALID) PMPI_Comm_free_keyval(&g_keyval);
}

}  // namespace mla::lib
