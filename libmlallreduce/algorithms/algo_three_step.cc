// lane and split: reduce-scatter in a group, allreduce across groups,
// allgather in the group; they differ in which communicators play the parts.
#include <algorithm>
#include <vector>

#include "libmlallreduce/algorithms/algorithms.h"
#include "libmlallreduce/algorithms/node_shm.h"
#include "libmlallreduce/base/partition.h"

namespace mla::lib {
namespace {

// Scratch memory for the reduced block, one buffer per thread, kept between
// calls so large messages do not pay for fresh pages every time.
char* Scratch(size_t bytes) {
  thread_local std::vector<char> buffer;
  if (buffer.size() < bytes) {
    buffer.clear();
    buffer.shrink_to_fit();
    buffer.resize(bytes);
  }
  return buffer.data();
}

long long ChunkElements(const AllreduceCall& call, const mla_choice& choice) {
  if (choice.chunk_bytes == 0) return 0;
  return std::max<long long>(1, static_cast<long long>(choice.chunk_bytes / call.type_size));
}

// group: where the message is cut into blocks (group_size blocks, the first
// `active` non-empty); cross: the ranks holding the same block index on the
// other groups.
int ThreeStep(const AllreduceCall& call, MPI_Comm group, int group_rank, int group_size, int active, MPI_Comm cross,
              int cross_size, long long chunk_elems) {
  const char* src = static_cast<const char*>(call.sendbuf == MPI_IN_PLACE ? call.recvbuf : call.sendbuf);
  char* dst = static_cast<char*>(call.recvbuf);
  long long offset = 0;
  for (int seg : Segments(call.count, chunk_elems)) {
    const Partition p = BlockPartition(seg, group_size, active);
    const int mine = p.counts[group_rank];
    char* block = Scratch(static_cast<size_t>(std::max(mine, 1)) * call.extent);
    const MPI_Aint byte_offset = static_cast<MPI_Aint>(offset) * call.extent;
    int rc = PMPI_Reduce_scatter(src + byte_offset, block, p.counts.data(), call.datatype, call.op, group);
    if (rc != MPI_SUCCESS) return rc;
    if (mine > 0 && cross_size > 1) {
      rc = PMPI_Allreduce(MPI_IN_PLACE, block, mine, call.datatype, call.op, cross);
      if (rc != MPI_SUCCESS) return rc;
    }
    rc = PMPI_Allgatherv(block, mine, call.datatype, dst + byte_offset, p.counts.data(), p.displs.data(), call.datatype,
                         group);
    if (rc != MPI_SUCCESS) return rc;
    offset += seg;
  }
  return MPI_SUCCESS;
}

}  // namespace

int RunLane(const AllreduceCall& call, const Topology& topo, const mla_choice& choice) {
  const int active = choice.lanes > 0 ? std::min(choice.lanes, topo.node_size) : topo.node_size;
  bool ran = false;
  const int rc = RunOnNodeShm(call, topo, choice, active, false, &ran);
  if (ran || rc != MPI_SUCCESS) return rc;
  return ThreeStep(call, topo.node, topo.node_rank, topo.node_size, active, topo.lane, topo.num_nodes,
                   ChunkElements(call, choice));
}

int RunSplit(const AllreduceCall& call, const Topology& topo, const mla_choice& choice) {
  const int slices = topo.size / topo.ppg;  // ranks holding each slice index
  return ThreeStep(call, topo.gpu_group, topo.gpu_rank, topo.ppg, topo.ppg, topo.slice, slices,
                   ChunkElements(call, choice));
}

}  // namespace mla::lib
