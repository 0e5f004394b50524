#include "libmlallreduce/algorithms/node_shm.h"

#include <atomic>
#include <cstring>
#include <string>

#include "libmlallreduce/base/log.h"
#include "libmlallreduce/jobreport/job_report.h"
#include "libmlallreduce/shm/node_allreduce.h"
#include "libmlallreduce/shm/segment_file.h"

namespace mla::lib {

struct NodeShm {
  SegmentMap map;
  NodeArea area;
  uint64_t epoch = 0;  // this rank's count of the segment's epochs
};

namespace {

constexpr int kNameBytes = 96;

// Node rank 0 creates the segment and hands its name to the others, who map
// it; once every rank of the node has tried, the name is unlinked, and the
// ranks of every node agree (MIN over node, then over lane) whether all have
// it.  *out: the segment, or nullptr where any rank failed.
int SetUp(const Topology& topo, NodeShm** out) {
  const size_t slot = SlotBytesFor(topo.node_size);
  const size_t bytes = NodeArea::Bytes(topo.node_size, slot);
  char name[kNameBytes] = {0};
  SegmentMap map;
  std::string error;
  int ok = 0;
  if (topo.node_rank == 0) {
    std::string made;
    ok = CreateSegment(bytes, &made, &map, &error);  // a name of about 45 bytes
    if (ok) {
      NodeArea::Initialize(map.base, topo.node_size, slot);
      std::memcpy(name, made.c_str(), made.size());
    }
  }
  int rc = PMPI_Bcast(name, kNameBytes, MPI_CHAR, 0, topo.node);
  if (rc == MPI_SUCCESS && topo.node_rank != 0 && name[0] != '\0') ok = AttachSegment(name, bytes, &map, &error);
  // Every rank of the node has mapped it or given up: nothing stays in /dev/shm.
  if (rc == MPI_SUCCESS) rc = PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, topo.node);
  if (topo.node_rank == 0 && name[0] != '\0') UnlinkSegment(name);
  if (rc == MPI_SUCCESS) rc = PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, topo.lane);
  if (rc != MPI_SUCCESS || !ok) {
    if (!error.empty()) WarnOnce(error + "; the node steps use the system MPI (MULTILANE_NODE_STEP=mpi hides this)");
    UnmapSegment(&map);
    *out = nullptr;
    return rc;
  }
  *out = new NodeShm{map, NodeArea(map.base, topo.node_size, slot)};
  return MPI_SUCCESS;
}

// topo's segment, set up on first use; nullptr when it could not be.
int SegmentOf(const Topology& topo, NodeShm** shm) {
  if (topo.shm_state == 0) {
    ReportSetupTimer setup;  // one-time set-up, not the call's own time
    int rc = SetUp(topo, &topo.shm);
    if (rc != MPI_SUCCESS) return rc;
    topo.shm_state = topo.shm != nullptr ? 1 : -1;
    static std::atomic<bool> said{false};  // once per process: the first segment tells what runs
    if (topo.shm != nullptr && topo.verbose && !said.exchange(true))
      Info("node steps on shared memory: a segment of " + std::to_string(topo.shm->map.bytes >> 10) +
           " KiB per node of " + std::to_string(topo.node_size) + " ranks, one copy into it (no single-copy path)");
  }
  *shm = topo.shm;
  return MPI_SUCCESS;
}

}  // namespace

int RunOnNodeShm(const AllreduceCall& call, const Topology& topo, int active, bool leader_only, bool* ran) {
  *ran = false;
  // Types with padding (MPI_DOUBLE_INT...) leave recvbuf's padding as it was
  // only through the MPI's own copies.
  if (!topo.shm_node_step || topo.node_size < 2 || call.extent != call.type_size) return MPI_SUCCESS;
  NodeShm* shm = nullptr;
  int rc = SegmentOf(topo, &shm);
  if (rc != MPI_SUCCESS || shm == nullptr) return rc;
  *ran = true;
  const char* src = static_cast<const char*>(call.sendbuf == MPI_IN_PLACE ? call.recvbuf : call.sendbuf);
  const NodeStepCall c{src,     static_cast<char*>(call.recvbuf), call.count, call.extent, call.datatype,
                       call.op, leader_only ? 1 : active};
  CrossNodeStep cross;
  if (topo.num_nodes > 1) {
    cross = [&call, &topo](char* block, int n) {
      return PMPI_Allreduce(MPI_IN_PLACE, block, n, call.datatype, call.op, topo.lane);
    };
  }
  return NodeAllreduce(shm->area, topo.node_rank, &shm->epoch, c, cross);
}

void FreeNodeShm(NodeShm* shm) {
  if (shm == nullptr) return;
  UnmapSegment(&shm->map);
  delete shm;
}

}  // namespace mla::lib
