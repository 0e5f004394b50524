// algorithms.h: the multilane allreduce algorithms on host memory, built from
// PMPI collectives on a communicator's sub-communicators
// (docs/algorithms.md describes each).
#ifndef MLA_ALGORITHMS_H_
#define MLA_ALGORITHMS_H_

#include <mpi.h>

#include "mlallreduce.h"
#include "libmlallreduce/algorithms/topology.h"

namespace mla::lib {

// One allreduce call, already checked by UnsupportedReason: `datatype` is
// contiguous with lower bound 0 and `extent` bytes per element, `op` is
// commutative, and count > 0.
struct AllreduceCall {
  const void* sendbuf;  // may be MPI_IN_PLACE
  void* recvbuf;
  int count;
  MPI_Datatype datatype;
  MPI_Op op;
  MPI_Aint extent;
  int type_size;
};

// lane: reduce-scatter inside the node into choice.lanes blocks (all node
// ranks when 0), allreduce of each block among the ranks holding it on every
// node (all lanes at once), allgather inside the node.  Needs a regular layout.
// With MULTILANE_NODE_STEP=shm the node steps run on a shared segment
// (node_shm.h), the whole call on a one-node communicator.
int RunLane(const AllreduceCall& call, const Topology& topo, const mla_choice& choice);

// hier: reduce to the node's first rank, allreduce among those leaders,
// broadcast inside the node.  Needs a regular layout.  With
// MULTILANE_NODE_STEP=shm the node steps run on a shared segment (node_shm.h).
int RunHier(const AllreduceCall& call, const Topology& topo, const mla_choice& choice);

// split: reduce-scatter inside the GPU group into ppg slices, allreduce of
// each slice among the ranks with the same index on every GPU (all slices at
// once), allgather inside the GPU group.  Needs equal GPU groups.
int RunSplit(const AllreduceCall& call, const Topology& topo, const mla_choice& choice);

// An irregular layout, folded (topology.h): every rank reduces into its
// node's core rank (`fold`), the core ranks run choice.algo on `core`, whose
// layout is regular, and each core rank broadcasts the result to its fold.
// Every rank ends with the core's result, bitwise the same everywhere.  Needs
// topo.fold (an irregular layout) and, for split, topo.core_gpus_regular.
int RunFolded(const AllreduceCall& call, const Topology& topo, const mla_choice& choice);

}  // namespace mla::lib

#endif  // MLA_ALGORITHMS_H_
