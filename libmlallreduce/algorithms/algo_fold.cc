// algo_fold.cc: lane, hier and split on an irregular layout, folded onto its
// regular core (algorithms.h, docs/algorithms.md).
#include "libmlallreduce/algorithms/algorithms.h"

namespace mla::lib {

int RunFolded(const AllreduceCall& call, const Topology& topo, const mla_choice& choice) {
  int fold_rank = 0, fold_size = 1;
  PMPI_Comm_rank(topo.fold, &fold_rank);
  PMPI_Comm_size(topo.fold, &fold_size);
  // 1. Into the core rank of each fold (rank 0 there), in recvbuf.  Also on
  // a fold of one rank: MPI copies the data by the datatype and leaves the
  // padding of pair types (MPI_DOUBLE_INT...) in recvbuf as it was.
  const void* send = call.sendbuf;
  if (fold_rank != 0 && send == MPI_IN_PLACE) send = call.recvbuf;
  int rc = PMPI_Reduce(send, fold_rank == 0 ? call.recvbuf : nullptr, call.count, call.datatype, call.op, 0, topo.fold);
  // 2. The algorithm among the core ranks, in place.
  if (rc == MPI_SUCCESS && topo.core != MPI_COMM_NULL) {
    const Topology* core = nullptr;
    rc = GetTopology(topo.core, &core);
    if (rc == MPI_SUCCESS) {
      AllreduceCall in_place = call;
      in_place.sendbuf = MPI_IN_PLACE;
      switch (choice.algo) {
        case MLA_ALGO_LANE:
          rc = RunLane(in_place, *core, choice);
          break;
        case MLA_ALGO_HIER:
          rc = RunHier(in_place, *core, choice);
          break;
        case MLA_ALGO_SPLIT:
          rc = RunSplit(in_place, *core, choice);
          break;
        default:
          rc = PMPI_Allreduce(MPI_IN_PLACE, call.recvbuf, call.count, call.datatype, call.op, topo.core);
      }
    }
  }
  // 3. The core's result to the rest of its fold (always called, so that no
  // rank of the fold waits for one that gave up).
  if (fold_size > 1) {
    const int brc = PMPI_Bcast(call.recvbuf, call.count, call.datatype, 0, topo.fold);
    if (rc == MPI_SUCCESS) rc = brc;
  }
  return rc;
}

}  // namespace mla::lib
