// topology.h: how the ranks of a communicator sit on nodes and GPUs, and the
// sub-communicators the algorithms run on.  Built once per communicator on
// first use, cached on it as an attribute and freed with it.
#ifndef MLA_TOPOLOGY_H_
#define MLA_TOPOLOGY_H_

#include <mpi.h>

#include <string>

namespace mla::lib {

struct NodeShm;  // node_shm.cc

struct Topology {
  int size = 0;  // ranks in the communicator
  int rank = 0;
  // node: the ranks of this rank's (virtual) node, in communicator order.
  MPI_Comm node = MPI_COMM_NULL;
  int node_rank = 0;
  int node_size = 0;
  int num_nodes = 0;  // size / node_size when regular
  // lane: the ranks with this rank's node_rank on every node, in communicator order.
  MPI_Comm lane = MPI_COMM_NULL;
  // gpu_group: the ranks of this node that share this rank's GPU.
  MPI_Comm gpu_group = MPI_COMM_NULL;
  int ppg = 1;       // ranks per GPU
  int gpu_rank = 0;  // index within the GPU group
  // slice: the ranks with this rank's gpu_rank on every GPU of every node.
  MPI_Comm slice = MPI_COMM_NULL;
  // Every node holds the same number of ranks.
  bool regular = false;
  // Every GPU group holds ppg ranks (regular, and ppg divides node_size).
  bool gpus_regular = false;
  // Why the layout is irregular, for messages; empty when regular.
  std::string irregular_reason;
  // Irregular layouts, folded (algo_fold.cc): fold_width is the smallest
  // node's size; the ranks with node_rank < fold_width form `core`, a
  // communicator whose nodes all hold fold_width ranks, and every rank of a
  // node joins the core rank node_rank % fold_width in `fold` (that core
  // rank is fold rank 0).  COMM_NULL and 0 on regular layouts; `core` is
  // COMM_NULL on the other ranks.  core_gpus_regular: whether split can run
  // on `core` (the same on every rank).
  MPI_Comm core = MPI_COMM_NULL;
  MPI_Comm fold = MPI_COMM_NULL;
  int fold_width = 0;
  bool core_gpus_regular = false;
  // The node steps of lane and hier on a shared segment (node_shm.h), for
  // choices with transport shm or, with MULTILANE_NODE_STEP=shm, auto; set
  // up on the first call that uses it; shm_state 0: not yet, 1: set up
  // (shm), -1: refused (the MPI's node steps).
  bool shm_node_step = false;
  bool shm_single_copy = false;  // shm-cma: and read peers directly where the kernel allows
  bool verbose = false;          // MULTILANE_VERBOSE: say once what the node steps run on
  mutable NodeShm* shm = nullptr;
  mutable int shm_state = 0;
  // The CUDA module's state for this communicator (device_comm.h), made on
  // the first call with device buffers and freed with the topology.
  mutable void* device_state = nullptr;
  mutable void (*free_device_state)(void*) = nullptr;
};

// The layout the job asked for, handed to the topology code once MPI is up
// (as the CUDA module receives HostServices): topology.cc reads no
// configuration or process state of its own.
struct LayoutSettings {
  int ranks_per_node = 0;        // MULTILANE_RANKS_PER_NODE: virtual nodes of this many ranks; 0: the host
  int ranks_per_gpu = 0;         // MULTILANE_RANKS_PER_GPU: consecutive ranks sharing a GPU; 0: 1
  int host_rank = -1;            // this rank's index among its host's ranks of MPI_COMM_WORLD; -1: unknown
  bool shm_node_step = false;    // MULTILANE_NODE_STEP=shm or shm-cma
  bool shm_single_copy = false;  // MULTILANE_NODE_STEP=shm-cma: single copy where the kernel allows
  bool verbose = false;          // MULTILANE_VERBOSE above 0
};

// Creates the attribute key the cache uses and keeps `layout` for every
// topology built from then on.  Call once after MPI is up, before the first
// GetTopology; later calls do nothing.  Thread-safe.
void InitTopologyCache(const LayoutSettings& layout);

// Sets *out to the topology of `comm`, building it on first use; building is
// collective over `comm`, so every rank must ask at the same call.  Returns
// MPI_SUCCESS or the MPI error of the failed step.  `comm` must be an
// intracommunicator.  The topology lives until `comm` is freed.  Its
// communicators have MPI_ERRORS_RETURN: calls on them return their errors.
int GetTopology(MPI_Comm comm, const Topology** out);

// Frees the topology cached on MPI_COMM_WORLD and the attribute key; call
// before PMPI_Finalize.
void ReleaseTopologyCache();

}  // namespace mla::lib

#endif  // MLA_TOPOLOGY_H_
