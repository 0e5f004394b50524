#include "libmlallreduce/algorithms/node_shm.h"

#include <atomic>
#include <cstring>
#include <string>

#include "libmlallreduce/base/log.h"
#include "libmlallreduce/jobreport/job_report.h"
#include "libmlallreduce/shm/node_allreduce.h"
#include "libmlallreduce/shm/segment_file.h"
#include "libmlallreduce/shm/single_copy.h"

namespace mla::lib {

struct NodeShm {
  SegmentMap map;
  NodeArea area;
  uint64_t epoch = 0;        // this rank's count of the segment's epochs
  bool single_copy = false;  // every rank of the node reads its peers (single_copy.h)
};

namespace {

constexpr int kNameBytes = 96;

// Messages below this take the copy even where single copy is on: each read
// is a system call per peer and block (on the H100 host's 16 ranks the read
// took 57-61 us from 512 B to 8 KiB, the copy 6-15 us; from 512 KiB the two
// were within the runs' spread; docs/benchmarks.md).
constexpr uint64_t kSingleCopyMinBytes = 256u << 10;

// Node rank 0 creates the segment and hands its name to the others, who map
// it and publish their single-copy probe; once every rank of the node has
// tried, the name is unlinked, each rank probes its peers (where single copy
// is allowed), and the ranks of every node agree (MIN over node, then over
// lane) whether all have the segment and whether all can read their peers.
// *out: the segment, or nullptr where any rank failed; *cma_why: why single
// copy is off on this rank, when it is.
int SetUp(const Topology& topo, NodeShm** out, std::string* cma_why) {
  const size_t slot = SlotBytesFor(topo.node_size);
  const size_t bytes = NodeArea::Bytes(topo.node_size, slot);
  char name[kNameBytes] = {0};
  SegmentMap map;
  std::string error;
  int ok[2] = {0, 0};  // the segment, single copy
  if (topo.node_rank == 0) {
    std::string made;
    ok[0] = CreateSegment(bytes, &made, &map, &error);  // a name of about 45 bytes
    if (ok[0]) {
      NodeArea::Initialize(map.base, topo.node_size, slot);
      std::memcpy(name, made.c_str(), made.size());
    }
  }
  int rc = PMPI_Bcast(name, kNameBytes, MPI_CHAR, 0, topo.node);
  if (rc == MPI_SUCCESS && topo.node_rank != 0 && name[0] != '\0') ok[0] = AttachSegment(name, bytes, &map, &error);
  const NodeArea area(map.base, topo.node_size, slot);
  if (ok[0]) PublishProbe(area, topo.node_rank);
  // Every rank of the node has mapped it or given up: nothing stays in /dev/shm.
  if (rc == MPI_SUCCESS) rc = PMPI_Allreduce(MPI_IN_PLACE, ok, 1, MPI_INT, MPI_MIN, topo.node);
  if (topo.node_rank == 0 && name[0] != '\0') UnlinkSegment(name);
  *cma_why = "not asked for; MULTILANE_NODE_STEP=shm-cma tries it";
  if (topo.shm_single_copy) cma_why->clear();
  if (ok[0] && topo.shm_single_copy) ok[1] = ProbeSingleCopy(area, topo.node_rank, cma_why);
  if (rc == MPI_SUCCESS) rc = PMPI_Allreduce(MPI_IN_PLACE, ok, 2, MPI_INT, MPI_MIN, topo.node);
  if (rc == MPI_SUCCESS) rc = PMPI_Allreduce(MPI_IN_PLACE, ok, 2, MPI_INT, MPI_MIN, topo.lane);
  if (rc != MPI_SUCCESS || !ok[0]) {
    if (!error.empty()) WarnOnce(error + "; the node steps use the system MPI (MULTILANE_NODE_STEP=mpi hides this)");
    UnmapSegment(&map);
    *out = nullptr;
    return rc;
  }
  if (ok[1])
    cma_why->clear();
  else if (topo.shm_single_copy && cma_why->empty())
    *cma_why = "another rank's process_vm_readv was refused";
  *out = new NodeShm{map, area, 0, ok[1] != 0};
  return MPI_SUCCESS;
}

// topo's segment, set up on first use; nullptr when it could not be.
int SegmentOf(const Topology& topo, NodeShm** shm) {
  if (topo.shm_state == 0) {
    ReportSetupTimer setup;  // one-time set-up, not the call's own time
    std::string cma_why;
    int rc = SetUp(topo, &topo.shm, &cma_why);
    if (rc != MPI_SUCCESS) return rc;
    topo.shm_state = topo.shm != nullptr ? 1 : -1;
    static std::atomic<bool> said{false};  // once per process: the first segment tells what runs
    if (topo.shm != nullptr && topo.verbose && !said.exchange(true)) {
      Info("node steps on shared memory: a segment of " + std::to_string(topo.shm->map.bytes >> 10) +
           " KiB per node of " + std::to_string(topo.node_size) + " ranks, " +
           (topo.shm->single_copy ? std::string("single copy from each peer (CMA process_vm_readv)")
                                  : "one copy into it (no single copy: " + cma_why + ")"));
    }
  }
  *shm = topo.shm;
  return MPI_SUCCESS;
}

}  // namespace

bool WantsNodeShm(const mla_choice& choice, const Topology& topo) {
  return choice.transport == MLA_TRANSPORT_SHM || (choice.transport == MLA_TRANSPORT_AUTO && topo.shm_node_step);
}

int RunOnNodeShm(const AllreduceCall& call, const Topology& topo, const mla_choice& choice, int active,
                 bool leader_only, bool* ran) {
  *ran = false;
  // Types with padding (MPI_DOUBLE_INT...) leave recvbuf's padding as it was
  // only through the MPI's own copies.
  if (!WantsNodeShm(choice, topo) || topo.node_size < 2 || call.extent != call.type_size) return MPI_SUCCESS;
  NodeShm* shm = nullptr;
  int rc = SegmentOf(topo, &shm);
  if (rc != MPI_SUCCESS || shm == nullptr) return rc;
  *ran = true;
  const char* src = static_cast<const char*>(call.sendbuf == MPI_IN_PLACE ? call.recvbuf : call.sendbuf);
  NodeStepCall c{src, static_cast<char*>(call.recvbuf), call.count, call.extent, call.datatype, call.op, active};
  if (leader_only) c.active = 1;
  c.single_copy = shm->single_copy && static_cast<uint64_t>(call.count) * call.type_size >= kSingleCopyMinBytes;
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
