// system_choice.cc: the profile's `mpi=NAME` applied per call (system_choice.h).
#include "libmlallreduce/algorithms/system_choice.h"

#include <climits>
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include "libmlallreduce/base/log.h"
#include "libmlallreduce/base/stats.h"
#include "libmlallreduce/jobreport/job_report.h"

#ifndef MLA_SIMULATION
#include "sysalgo/system_allreduce.h"
#endif

namespace mla::lib {

bool ProfileNamesSystemAlgorithms(const Profile& profile) {
  for (const ProfileEntry& e : profile.entries())
    if (!e.system_algorithm.empty()) return true;
  return false;
}

#ifdef MLA_SIMULATION
// SimGrid's SMPI has no MPI tool interface: its own selection runs.
void PrepareSystemAlgorithms(const Profile&) {}
int SystemAlgorithmAllreduce(const std::string&, int, MPI_Op, MPI_Comm comm, uint64_t,
                             const std::function<int(MPI_Comm)>& system_mpi, int*) {
  return system_mpi(comm);
}
void ReleaseSystemAlgorithms() {}
#else

namespace {

// The MPI's algorithms, found at the first call that names one (after
// MPI_Init) and kept until MPI_Finalize.
std::mutex g_mutex;
std::unique_ptr<mlsys::SystemAllreduce> g_system;
std::string g_left_off;  // why coll/tuned's dynamic rules were left off before MPI_Init
std::once_flag g_keyval_once;
int g_keyval = MPI_KEYVAL_INVALID;

// What the library keeps on one communicator, by algorithm name: whether
// every rank can apply it (agreed once, collectively); Open MPI: its copies
// (MPI_COMM_NULL where making one failed on some rank, never tried again);
// MPICH: whether every rank's MPI took the name (agreed once).
struct Copies {
  std::map<std::string, bool> agreed;
  std::map<std::string, MPI_Comm> by_name;
  std::map<std::string, bool> per_call_agreed;
};

int DeleteCopies(MPI_Comm, int, void* value, void*) {
  auto* copies = static_cast<Copies*>(value);
  for (auto& [name, made] : copies->by_name)
    if (made != MPI_COMM_NULL) PMPI_Comm_free(&made);
  delete copies;
  return MPI_SUCCESS;
}

// This process's MPI algorithms where it can choose them, else nullptr with
// *why.  Decided by this process alone (its environment, MCA files, its MPI):
// callers agree on it with the other ranks (Agreed) before acting on it.
mlsys::SystemAllreduce* System(std::string* why) {
  static std::once_flag looked;
  static std::string why_none;
  std::call_once(looked, [] {
    if (!g_left_off.empty()) {
      why_none = g_left_off + ": your settings win";
      return;
    }
    auto system = std::make_unique<mlsys::SystemAllreduce>();
    if (system->names().empty()) {
      why_none = system->why_none();
      return;
    }
    g_system = std::move(system);
  });
  *why = why_none;
  return g_system.get();
}

// What the library keeps on comm, made at its first use (nullptr when the
// MPI refused to attach it).
Copies* CopiesOf(MPI_Comm comm) {
  std::call_once(g_keyval_once,
                 [] { PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, DeleteCopies, &g_keyval, nullptr); });
  void* value = nullptr;
  int found = 0;
  if (g_keyval == MPI_KEYVAL_INVALID || PMPI_Comm_get_attr(comm, g_keyval, &value, &found) != MPI_SUCCESS)
    return nullptr;
  if (found) return static_cast<Copies*>(value);
  auto* copies = new Copies();
  if (PMPI_Comm_set_attr(comm, g_keyval, copies) != MPI_SUCCESS) {
    DeleteCopies(comm, g_keyval, copies, nullptr);
    return nullptr;
  }
  return copies;
}

// True on every rank of comm or on none: `ok` held on every rank.
bool AllRanks(bool ok, MPI_Comm comm) {
  int mine = ok ? 1 : 0, all = 0;
  return PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm) == MPI_SUCCESS && all == 1;
}

// The MPI's algorithms when every rank of comm can apply `name` (its own
// settings leave the choice to the library, its MPI offers choices, it is not
// MPI_THREAD_MULTIPLE), else nullptr on every rank.  Agreed once per
// communicator and name, collectively over comm: each rank decides this
// alone, from settings outside the start-up agreement (per-node MCA files,
// per-rank variables), and ranks that chose differently would make different
// collectives.  Where they disagree, the lowest rank that cannot apply it
// says why, once.
mlsys::SystemAllreduce* Agreed(Copies* copies, const std::string& name, MPI_Comm comm) {
  auto it = copies->agreed.find(name);
  if (it != copies->agreed.end()) return it->second ? g_system.get() : nullptr;
  ReportSetupTimer setup;  // once per communicator and name: not the call's own time
  std::string why;
  mlsys::SystemAllreduce* system = System(&why);
  int level = MPI_THREAD_SINGLE, rank = 0;
  PMPI_Query_thread(&level);
  PMPI_Comm_rank(comm, &rank);
  // Making a copy writes a process-wide variable around a collective call:
  // two threads doing it at once could swap their choices, or wait on each
  // other across ranks.  MPI_THREAD_MULTIPLE programs keep the MPI's choice.
  if (system != nullptr && level == MPI_THREAD_MULTIPLE) {
    system = nullptr;
    why = "the program runs MPI_THREAD_MULTIPLE, where a choice could reach another thread's call";
  }
  int first_refusing = system != nullptr ? INT_MAX : rank;
  const bool exchanged = PMPI_Allreduce(MPI_IN_PLACE, &first_refusing, 1, MPI_INT, MPI_MIN, comm) == MPI_SUCCESS;
  const bool all = exchanged && first_refusing == INT_MAX;
  if (!all && first_refusing == rank) {
    static std::set<std::string> said;  // one line per name and process
    std::lock_guard<std::mutex> lock(g_mutex);
    if (said.insert(name).second) {
      WarnHere("the profile names the system MPI's own algorithm (mpi=" + name + ") but on rank " +
               std::to_string(rank) + " of the communicator " + why +
               "; every rank of it runs the MPI's own choice for those calls (give every rank the same MPI "
               "settings to apply the profile's)");
    }
  }
  copies->agreed[name] = all;
  return all ? system : nullptr;
}

// The library's copy of comm on which `name` runs, made at the first call
// (collective over comm; kept only where every rank made one), or
// MPI_COMM_NULL.
MPI_Comm CopyFor(Copies* copies, mlsys::SystemAllreduce* system, const std::string& name, MPI_Comm comm) {
  auto it = copies->by_name.find(name);
  if (it != copies->by_name.end()) return it->second;
  ReportSetupTimer setup;  // the copy is made once: not the call's own time
  std::string error;
  MPI_Comm made = system->MakeCommunicator(name, comm, &error);
  if (!AllRanks(made != MPI_COMM_NULL, comm)) {
    if (made != MPI_COMM_NULL) PMPI_Comm_free(&made);
    WarnOnce("the profile's mpi=" + name + " is not applied: " + (error.empty() ? "another rank failed" : error));
  } else {
    PMPI_Comm_set_errhandler(made, MPI_ERRORS_RETURN);  // errors are raised on the caller's communicator
  }
  copies->by_name[name] = made;
  return made;
}

// MPICH: whether every rank's MPI takes `name` (tried once per communicator,
// collective over comm), so that all run the same algorithm or none does.
bool AgreedPerCall(Copies* copies, mlsys::SystemAllreduce* system, const std::string& name, MPI_Comm comm) {
  auto it = copies->per_call_agreed.find(name);
  if (it != copies->per_call_agreed.end()) return it->second;
  ReportSetupTimer setup;  // tried once per communicator and name: not the call's own time
  std::string error;
  const bool mine = system->Select(name, comm, &error) != MPI_COMM_NULL;
  system->Release();
  const bool all = AllRanks(mine, comm);
  if (!all)
    WarnOnce("the profile's mpi=" + name + " is not applied: " + (error.empty() ? "another rank failed" : error));
  copies->per_call_agreed[name] = all;
  return all;
}

// MPICH: the choice is a variable read by every call, so it is written just
// before this call and put back right after it.
int PerCallAllreduce(Copies* copies, mlsys::SystemAllreduce* system, const std::string& name, MPI_Comm comm,
                     const std::function<int(MPI_Comm)>& system_mpi, int* ran) {
  if (!AgreedPerCall(copies, system, name, comm)) return system_mpi(comm);
  std::string error;
  if (system->Select(name, comm, &error) == MPI_COMM_NULL) return system_mpi(comm);  // took it moments ago
  // On the caller's communicator: an error raises its handler in the MPI.
  const int rc = system_mpi(comm);
  system->Release();
  *ran = SystemAlgorithmSlot(name);
  return rc;
}

}  // namespace

void PrepareSystemAlgorithms(const Profile& profile) {
  if (ProfileNamesSystemAlgorithms(profile)) g_left_off = mlsys::PrepareBeforeInit();
}

int SystemAlgorithmAllreduce(const std::string& name, int count, MPI_Op op, MPI_Comm comm, uint64_t bytes,
                             const std::function<int(MPI_Comm)>& system_mpi, int* ran) {
  // Everything below up to Agreed depends only on the call's arguments, the
  // same on every rank (MPI's rule); dispatch passed invalid ones to the MPI.
  int commutative = 0, size = 0, inter = 0;
  if (PMPI_Op_commutative(op, &commutative) != MPI_SUCCESS || PMPI_Comm_size(comm, &size) != MPI_SUCCESS)
    return system_mpi(comm);
  if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter || size < 2) return system_mpi(comm);
  Copies* copies = CopiesOf(comm);
  if (copies == nullptr) return system_mpi(comm);
  mlsys::SystemAllreduce* system = Agreed(copies, name, comm);
  if (system == nullptr || !system->Applies(name, count, static_cast<long>(bytes), size, commutative != 0))
    return system_mpi(comm);
  if (!system->ChoosesPerCommunicator()) return PerCallAllreduce(copies, system, name, comm, system_mpi, ran);
  MPI_Comm copy = CopyFor(copies, system, name, comm);
  if (copy == MPI_COMM_NULL) return system_mpi(comm);
  // The copy returns errors: they are raised on the caller's communicator.
  const int rc = system_mpi(copy);
  if (rc != MPI_SUCCESS) PMPI_Comm_call_errhandler(comm, rc);
  *ran = SystemAlgorithmSlot(name);
  return rc;
}

void ReleaseSystemAlgorithms() {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_keyval != MPI_KEYVAL_INVALID) {
    void* value = nullptr;
    int found = 0;
    // Deleting an attribute that is not there is an error under
    // MPI_ERRORS_ARE_FATAL: look first.
    if (PMPI_Comm_get_attr(MPI_COMM_WORLD, g_keyval, &value, &found) == MPI_SUCCESS && found)
      PMPI_Comm_delete_attr(MPI_COMM_WORLD, g_keyval);
    PMPI_Comm_free_keyval(&g_keyval);
  }
  g_system.reset();
}

#endif  // MLA_SIMULATION

}  // namespace mla::lib
