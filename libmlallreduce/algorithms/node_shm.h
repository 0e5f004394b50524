// node_shm.h: a topology's shared-memory segment for its node steps
// (transport shm, or MULTILANE_NODE_STEP=shm; docs/algorithms.md), set up on the first call
// that uses it under the all-or-nothing rule: every rank of the communicator
// has it mapped, or none uses it and the calls take the system MPI's node
// steps.
#ifndef MLA_NODE_SHM_H_
#define MLA_NODE_SHM_H_

#include "libmlallreduce/algorithms/algorithms.h"

namespace mla::lib {

// Runs lane (`leader_only` false: every rank of the node reduces a block and
// allreduces it with its lane) or hier (true: the node's first rank reduces
// the whole chunk and allreduces it among the leaders) over topo's segment.
// Sets *ran false and returns MPI_SUCCESS without touching the buffers when
// the call takes the MPI node steps instead: `choice` does not ask for shared
// memory (WantsNodeShm), the node has one rank, the datatype has padding, or
// the segment could not be set up.  The first call that asks for it sets the
// segment up: collective over the communicator of `topo`, as every call of an
// algorithm is (`choice` is the same on every rank).
int RunOnNodeShm(const AllreduceCall& call, const Topology& topo, const mla_choice& choice, int active,
                 bool leader_only, bool* ran);

// Whether `choice` takes its node steps on shared memory: its transport is
// shm, or auto where MULTILANE_NODE_STEP asks for it (topo.shm_node_step).
bool WantsNodeShm(const mla_choice& choice, const Topology& topo);

// Unmaps a topology's segment (topology.cc, when the communicator is freed).
void FreeNodeShm(NodeShm* shm);

}  // namespace mla::lib

#endif  // MLA_NODE_SHM_H_
