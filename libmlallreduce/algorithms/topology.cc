#include "libmlallreduce/algorithms/topology.h"

#include <mutex>

#include "libmlallreduce/algorithms/node_shm.h"
#include "libmlallreduce/jobreport/job_report.h"
#include "vocab/ranks_per_gpu.h"

namespace mla::lib {
namespace {

int g_keyval = MPI_KEYVAL_INVALID;
std::once_flag g_keyval_once;
LayoutSettings g_layout;  // set once by InitTopologyCache, read by Build

void FreeComm(MPI_Comm* c) {
  if (*c != MPI_COMM_NULL) PMPI_Comm_free(c);
}

void FreeTopology(Topology* t) {
  if (t->device_state != nullptr && t->free_device_state != nullptr) t->free_device_state(t->device_state);
  FreeNodeShm(t->shm);
  FreeComm(&t->fold);
  FreeComm(&t->core);
  FreeComm(&t->slice);
  FreeComm(&t->gpu_group);
  FreeComm(&t->lane);
  FreeComm(&t->node);
  delete t;
}

// The library's communicators return their errors to it instead of calling
// the handler they inherited (MPI_ERRORS_ARE_FATAL, or the caller's at the
// first call): dispatch raises them on the caller's communicator, under the
// handler it has at the time of the call (dispatch.cc).
void ReturnErrors(const Topology& t) {
  for (MPI_Comm c : {t.node, t.lane, t.gpu_group, t.slice, t.core, t.fold})
    if (c != MPI_COMM_NULL) PMPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
}

// Called by MPI when the communicator carrying the topology is freed.
int DeleteTopology(MPI_Comm, int, void* value, void*) {
  FreeTopology(static_cast<Topology*>(value));
  return MPI_SUCCESS;
}

// The folded form of an irregular layout (topology.h).  Collective over comm.
int BuildFold(MPI_Comm comm, int width, Topology* t) {
  int rc;
  t->fold_width = width;
  const bool in_core = t->node_rank < width;
  if ((rc = PMPI_Comm_split(comm, in_core ? 0 : MPI_UNDEFINED, t->rank, &t->core)) != MPI_SUCCESS) return rc;
  if ((rc = PMPI_Comm_split(t->node, t->node_rank % width, t->node_rank, &t->fold)) != MPI_SUCCESS) return rc;
  int split_ok = 0;
  if (in_core) {
    const Topology* core = nullptr;
    if ((rc = GetTopology(t->core, &core)) != MPI_SUCCESS) return rc;
    split_ok = core->regular && core->gpus_regular ? 1 : 0;
  }
  // The core's answer for everyone: every fold has its core rank as rank 0.
  if ((rc = PMPI_Bcast(&split_ok, 1, MPI_INT, 0, t->fold)) != MPI_SUCCESS) return rc;
  int all = split_ok;
  if ((rc = PMPI_Allreduce(&split_ok, &all, 1, MPI_INT, MPI_MIN, comm)) != MPI_SUCCESS) return rc;
  t->core_gpus_regular = all != 0;
  return MPI_SUCCESS;
}

int Build(MPI_Comm comm, Topology* t) {
  int rc;
  PMPI_Comm_size(comm, &t->size);
  PMPI_Comm_rank(comm, &t->rank);
  const LayoutSettings& config = g_layout;
  t->shm_node_step = config.shm_node_step;
  t->shm_single_copy = config.shm_single_copy;
  t->verbose = config.verbose;

  // Node: ranks sharing memory, cut into virtual nodes when asked.  Virtual
  // nodes are cut from the host's ranks in MPI_COMM_WORLD, so that a
  // sub-communicator sees the nodes MPI_COMM_WORLD sees.
  MPI_Comm shared = MPI_COMM_NULL;
  if ((rc = PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, t->rank, MPI_INFO_NULL, &shared)) != MPI_SUCCESS)
    return rc;
  int shared_rank = 0;
  PMPI_Comm_rank(shared, &shared_rank);
  const int host_rank = config.host_rank >= 0 ? config.host_rank : shared_rank;
  if (config.ranks_per_node > 0) {
    rc = PMPI_Comm_split(shared, host_rank / config.ranks_per_node, shared_rank, &t->node);
    PMPI_Comm_free(&shared);
    if (rc != MPI_SUCCESS) return rc;
  } else {
    t->node = shared;
  }
  PMPI_Comm_rank(t->node, &t->node_rank);
  PMPI_Comm_size(t->node, &t->node_size);

  // Regular when every node has the same size: {max, -min} in one call.
  int sizes[2] = {t->node_size, -t->node_size};
  if ((rc = PMPI_Allreduce(MPI_IN_PLACE, sizes, 2, MPI_INT, MPI_MAX, comm)) != MPI_SUCCESS) return rc;
  const int max_size = sizes[0], min_size = -sizes[1];
  t->regular = (min_size == max_size);
  t->num_nodes = t->regular ? t->size / t->node_size : 0;
  if (!t->regular) {
    t->irregular_reason =
        "nodes of different sizes (" + std::to_string(min_size) + " to " + std::to_string(max_size) + " ranks)";
  }

  // Lane: same node-local index on every node.
  if ((rc = PMPI_Comm_split(comm, t->node_rank, t->rank, &t->lane)) != MPI_SUCCESS) return rc;

  // GPU groups: consecutive ranks of a (virtual) node of the host share a GPU.
  const int ppg = RanksPerGpuOrOne(config.ranks_per_gpu);
  const int index_on_node = config.ranks_per_node > 0 ? host_rank % config.ranks_per_node : host_rank;
  const int group = GpuGroupOfRank(index_on_node, config.ranks_per_gpu);
  if ((rc = PMPI_Comm_split(t->node, group, t->node_rank, &t->gpu_group)) != MPI_SUCCESS) return rc;
  PMPI_Comm_rank(t->gpu_group, &t->gpu_rank);
  PMPI_Comm_size(t->gpu_group, &t->ppg);
  if ((rc = PMPI_Comm_split(comm, t->gpu_rank, t->rank, &t->slice)) != MPI_SUCCESS) return rc;
  // Equal GPU groups everywhere, and the same setting on every rank.
  int shape[4] = {t->ppg, -t->ppg, ppg, -ppg};
  if ((rc = PMPI_Allreduce(MPI_IN_PLACE, shape, 4, MPI_INT, MPI_MAX, comm)) != MPI_SUCCESS) return rc;
  t->gpus_regular = t->regular && shape[0] == -shape[1] && shape[2] == -shape[3];
  if (t->regular && !t->gpus_regular) {
    t->irregular_reason = "GPUs shared by different numbers of ranks (" + std::to_string(-shape[1]) + " to " +
                          std::to_string(shape[0]) + " with " + std::to_string(ppg) + " ranks per GPU)";
  }
  if (!t->regular) return BuildFold(comm, min_size, t);
  return MPI_SUCCESS;
}

}  // namespace

void InitTopologyCache(const LayoutSettings& layout) {
  std::call_once(g_keyval_once, [&layout] {
    g_layout = layout;
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, DeleteTopology, &g_keyval, nullptr);
  });
}

int GetTopology(MPI_Comm comm, const Topology** out) {
  InitTopologyCache(LayoutSettings{});  // a no-op after the runtime's call
  void* value = nullptr;
  int found = 0;
  int rc = PMPI_Comm_get_attr(comm, g_keyval, &value, &found);
  if (rc != MPI_SUCCESS) return rc;
  if (found) {
    *out = static_cast<Topology*>(value);
    return MPI_SUCCESS;
  }
  auto* t = new Topology();
  {
    ReportSetupTimer setup;  // a communicator's first layout: not its first call's own time
    rc = Build(comm, t);
  }
  if (rc != MPI_SUCCESS) {
    FreeTopology(t);
    return rc;
  }
  ReturnErrors(*t);
  if ((rc = PMPI_Comm_set_attr(comm, g_keyval, t)) != MPI_SUCCESS) {
    FreeTopology(t);
    return rc;
  }
  *out = t;
  return MPI_SUCCESS;
}

void ReleaseTopologyCache() {
  if (g_keyval == MPI_KEYVAL_INVALID) return;
  void* value = nullptr;
  int found = 0;
  // Deleting an attribute that is not there is an error under
  // MPI_ERRORS_ARE_FATAL: look first.
  if (PMPI_Comm_get_attr(MPI_COMM_WORLD, g_keyval, &value, &found) == MPI_SUCCESS && found) {
    PMPI_Comm_delete_attr(MPI_COMM_WORLD, g_keyval);
  }
  PMPI_Comm_free_keyval(&g_keyval);
}

}  // namespace mla::lib
