// hier: reduce to the node leader, allreduce among leaders, broadcast.
#include <algorithm>

#include "libmlallreduce/algorithms/algorithms.h"
#include "libmlallreduce/algorithms/node_shm.h"
#include "libmlallreduce/base/partition.h"

namespace mla::lib {

int RunHier(const AllreduceCall& call, const Topology& topo, const mla_choice& choice) {
  bool ran = false;
  const int shm_rc = RunOnNodeShm(call, topo, choice, 1, true, &ran);
  if (ran || shm_rc != MPI_SUCCESS) return shm_rc;
  const bool in_place = call.sendbuf == MPI_IN_PLACE;
  const char* src = static_cast<const char*>(in_place ? call.recvbuf : call.sendbuf);
  char* dst = static_cast<char*>(call.recvbuf);
  const bool leader = topo.node_rank == 0;
  const long long chunk_elems =
      choice.chunk_bytes == 0 ? 0 : std::max<long long>(1, static_cast<long long>(choice.chunk_bytes / call.type_size));
  long long offset = 0;
  for (int seg : Segments(call.count, chunk_elems)) {
    const MPI_Aint byte_offset = static_cast<MPI_Aint>(offset) * call.extent;
    int rc;
    if (leader) {
      rc = PMPI_Reduce(in_place ? MPI_IN_PLACE : src + byte_offset, dst + byte_offset, seg, call.datatype, call.op, 0,
                       topo.node);
    } else {
      rc = PMPI_Reduce(src + byte_offset, nullptr, seg, call.datatype, call.op, 0, topo.node);
    }
    if (rc != MPI_SUCCESS) return rc;
    if (leader && topo.num_nodes > 1) {
      rc = PMPI_Allreduce(MPI_IN_PLACE, dst + byte_offset, seg, call.datatype, call.op, topo.lane);
      if (rc != MPI_SUCCESS) return rc;
    }
    rc = PMPI_Bcast(dst + byte_offset, seg, call.datatype, 0, topo.node);
    if (rc != MPI_SUCCESS) return rc;
    offset += seg;
  }
  return MPI_SUCCESS;
}

}  // namespace mla::lib
