// device_allreduce.cc: lane, hier and split on device buffers.
//
// All three are one pattern over a group G of ranks that can map each
// other's buffers with CUDA IPC (a node, or the ranks sharing a GPU) and a
// cross communicator X linking the ranks that own the same block in every
// group:
//   1. the message is cut into |G| blocks (the first `active` non-empty); the
//      owner of block b reads block b of every member's send buffer (peer
//      GPUs over NVLink) and reduces it, in member order;
//   2. when X has more than one rank, the owners allreduce their block over X
//      (NCCL, or pinned host staging and the system MPI), all owners at once;
//   3. the owner writes the result into block b of every member's receive
//      buffer.
// With no cross step, 1 and 3 are one kernel.  Each element is reduced once,
// by one rank, so every rank receives the same bits.
//
// What carried the cross step (NCCL or MPI staging, and whether a requested
// NCCL fell back) is recorded per lane and made known to every rank by the
// closing step, so that every rank counts the call the same way.
//
// Synchronisation, correct under buffer reuse: every rank first waits for
// its device (the application's writes to the send buffer are done); the
// exchange of buffers (an allgather of IPC handles, or, when every rank calls
// on the buffers of its group's previous call, one allreduce saying so) is
// the entry barrier (every member's input is ready and no member still reads
// its receive buffer from before), and a barrier at the end (an allreduce of
// the transport bits, which completes on no rank before every member entered
// it) tells every member that all writes into its receive buffer and all
// reads of its send buffer are done.
//
// Small calls on one node take the flag path instead (flag_group.h), where
// the ranks meet on the GPU and no MPI call is made.
#include "libmlallreduce/cuda/device_allreduce.h"

#include <algorithm>
#include <vector>

#include "libmlallreduce/base/partition.h"
#include "libmlallreduce/cuda/cuda_util.h"
#include "libmlallreduce/cuda/device_comm.h"
#include "libmlallreduce/cuda/flag_group.h"
#include "libmlallreduce/cuda/ipc_cache.h"
#include "libmlallreduce/cuda/reduce_kernels.h"
#include "libmlallreduce/cuda/staging.h"

namespace mla::lib {
namespace cuda {
namespace {

struct Plan {
  MPI_Comm group = MPI_COMM_NULL;
  int group_rank = 0;
  int group_size = 0;
  int active = 0;
  MPI_Comm cross = MPI_COMM_NULL;
  int cross_size = 1;
  NcclLane* nccl = nullptr;           // for the cross step, or nullptr
  ExchangeCache* exchange = nullptr;  // the group's last buffer exchange
};

bool SameBuffer(const ExportedBuffer& a, const ExportedBuffer& b) {
  return a.valid && b.valid && a.buffer_id == b.buffer_id && a.offset == b.offset && a.pid == b.pid;
}

// Fills sends/recvs with every member's buffers, mapped here.  The members
// exchange their buffers (PMPI_Allgather over the group) unless every rank of
// comm calls on the same buffers as in its group's previous call: then one
// PMPI_Allreduce says so and the previous exchange is used (each peer looked
// up again in the IPC cache, which may have closed it since).  Sets *mapped
// to whether every rank of comm could map all its peers.  Collective over comm.
int MapGroup(MPI_Comm comm, const Plan& plan, const void* send, void* recv, std::vector<const char*>* sends,
             std::vector<char*>* recvs, int* mapped) {
  ExchangeCache& cache = *plan.exchange;
  Exchange mine{};
  ExportBuffer(send, &mine.send);
  ExportBuffer(recv, &mine.recv);
  int same = cache.valid && SameBuffer(mine.send, cache.mine.send) && SameBuffer(mine.recv, cache.mine.recv) ? 1 : 0;
  MLA_MPI_TRY(PMPI_Allreduce(MPI_IN_PLACE, &same, 1, MPI_INT, MPI_MIN, comm));
  if (!same) {
    cache.valid = false;
    cache.mine = mine;
    cache.all.assign(static_cast<size_t>(plan.group_size), Exchange{});
    MLA_MPI_TRY(
        PMPI_Allgather(&mine, sizeof(Exchange), MPI_BYTE, cache.all.data(), sizeof(Exchange), MPI_BYTE, plan.group));
  }
  *mapped = 1;
  for (int r = 0; r < plan.group_size; ++r) {
    if (r == plan.group_rank) {
      (*sends)[r] = static_cast<const char*>(send);
      (*recvs)[r] = static_cast<char*>(recv);
      continue;
    }
    cudaError_t err;
    (*sends)[r] = static_cast<const char*>(ImportBuffer(cache.all[r].send, &err));
    (*recvs)[r] = static_cast<char*>(ImportBuffer(cache.all[r].recv, &err));
    if ((*sends)[r] == nullptr || (*recvs)[r] == nullptr) *mapped = 0;
  }
  // A new exchange is kept only if every rank mapped every peer (a reused
  // one was, and the cache reopens what it closed since).
  if (!same) {
    MLA_MPI_TRY(PMPI_Allreduce(MPI_IN_PLACE, mapped, 1, MPI_INT, MPI_MIN, comm));
    cache.valid = *mapped != 0;
  }
  return MPI_SUCCESS;
}

// What carried the cross steps of one call, OR-ed over the ranks.
enum TransportBits { kUsedMpi = 1, kUsedNccl = 2, kNcclFellBack = 4 };

// dst[0..n) = allreduce over the cross communicator of src[0..n) (device
// memory; src may equal dst), queued on the communicator's stream.  Adds to
// *used what carried it.
int CrossStep(const Plan& plan, DeviceComm* dc, const AllreduceCall& call, DType type, DOp op, const void* src,
              void* dst, size_t n, const mla_choice& choice, int* used) {
  const bool nccl_asked = choice.transport == MLA_TRANSPORT_NCCL;
  bool use_nccl = false;
  if (choice.transport != MLA_TRANSPORT_MPI && plan.nccl != nullptr && NcclLane::Covers(type, op)) {
    use_nccl = plan.nccl->Ready(plan.cross, dc->uuid);
    if (!use_nccl && nccl_asked) {
      Warn("transport nccl cannot run here (NCCL missing, or two ranks of a lane on one GPU): using MPI staging");
    }
  }
  if (use_nccl) {
    *used |= kUsedNccl;
    return plan.nccl->Allreduce(src, dst, n, type, op, dc->stream);
  }
  *used |= kUsedMpi | (nccl_asked ? kNcclFellBack : 0);
  return dc->staging.Allreduce(src, dst, n, static_cast<size_t>(call.extent), call.datatype, call.op, plan.cross,
                               choice.chunk_bytes, dc->stream);
}

// The device path of a call whose cross steps set `bits` on some rank.
void Outcome(int bits, DeviceRun* run) {
  run->path = (bits & kUsedMpi) ? MLA_PATH_MPI : (bits & kUsedNccl) ? MLA_PATH_NCCL : MLA_PATH_IPC;
  run->nccl_fallback = (bits & kNcclFellBack) != 0;
}

int Staged(const AllreduceCall& call, MPI_Comm comm, DeviceRun* run) {
  run->algo = MLA_ALGO_PASSTHROUGH;
  run->path = MLA_PATH_STAGED;
  run->nccl_fallback = false;
  return StagedAllreduce(call.sendbuf, call.recvbuf, call.count, call.datatype, call.op, comm);
}

int RunPlan(MPI_Comm comm, const Plan& plan, DeviceComm* dc, const AllreduceCall& call, DType type, DOp op,
            const mla_choice& choice, DeviceRun* run) {
  const void* send = call.sendbuf == MPI_IN_PLACE ? call.recvbuf : call.sendbuf;
  if (plan.group_size > kMaxBuffers) return MPI_ERR_INTERN;

  // Inputs written by the application are complete before anyone reads them.
  MLA_CUDA_TRY("cudaDeviceSynchronize", cudaDeviceSynchronize());

  // A group of one (one rank per GPU for split, one rank per node for lane):
  // nothing to share, the cross step reads the send buffer and writes the
  // receive buffer directly.  The cross communicator is then all of comm,
  // so every rank saw the same transport.
  if (plan.group_size == 1) {
    int used = 0;
    MLA_MPI_TRY(
        CrossStep(plan, dc, call, type, op, send, call.recvbuf, static_cast<size_t>(call.count), choice, &used));
    MLA_CUDA_TRY("cudaStreamSynchronize", cudaStreamSynchronize(dc->stream));
    Outcome(used, run);
    return MPI_SUCCESS;
  }

  // Map every member's buffers; every rank of the communicator must agree
  // that all could be mapped, or all stage through the host.
  std::vector<const char*> sends(plan.group_size);
  std::vector<char*> recvs(plan.group_size);
  int mapped = 0;
  MLA_MPI_TRY(MapGroup(comm, plan, send, call.recvbuf, &sends, &recvs, &mapped));
  if (!mapped) {
    Warn("device buffers could not be shared with CUDA IPC (memory not from cudaMalloc?): staging through the host");
    return Staged(call, comm, run);
  }

  const Partition p = BlockPartition(call.count, plan.group_size, plan.active);
  const size_t n = static_cast<size_t>(p.counts[plan.group_rank]);
  const size_t offset = static_cast<size_t>(p.displs[plan.group_rank]) * call.extent;
  int used = 0;
  if (n > 0) {
    BufferSet b;
    b.nsrc = plan.group_size;
    for (int r = 0; r < plan.group_size; ++r) b.src[r] = sends[r] + offset;
    if (plan.cross_size > 1) {
      b.ndst = 1;
      b.dst[0] = recvs[plan.group_rank] + offset;
      MLA_CUDA_TRY("reduce kernel", LaunchReduce(type, op, b, n, dc->stream));
      MLA_MPI_TRY(CrossStep(plan, dc, call, type, op, recvs[plan.group_rank] + offset, recvs[plan.group_rank] + offset,
                            n, choice, &used));
      BufferSet copy;
      copy.nsrc = 1;
      copy.src[0] = recvs[plan.group_rank] + offset;
      for (int r = 0; r < plan.group_size; ++r)
        if (r != plan.group_rank) copy.dst[copy.ndst++] = recvs[r] + offset;
      if (copy.ndst > 0) MLA_CUDA_TRY("copy kernel", LaunchReduce(type, op, copy, n, dc->stream));
    } else {
      b.ndst = plan.group_size;
      for (int r = 0; r < plan.group_size; ++r) b.dst[r] = recvs[r] + offset;
      MLA_CUDA_TRY("reduce kernel", LaunchReduce(type, op, b, n, dc->stream));
    }
    MLA_CUDA_TRY("cudaStreamSynchronize", cudaStreamSynchronize(dc->stream));
  }
  // The closing barrier, carrying what the group's lanes used; every node's
  // lanes are the same lanes, so every rank of comm gets the same bits.
  MLA_MPI_TRY(PMPI_Allreduce(MPI_IN_PLACE, &used, 1, MPI_INT, MPI_BOR, plan.group));
  Outcome(used, run);
  return MPI_SUCCESS;
}

// Runs a call of one node on the flag path when it is small enough and the
// path can run on this communicator (building it on the first such call;
// every rank decides the same from the call and the agreed build), and sets
// *ran.  hier and lane with one lane run one-shot, the others two-shot.
int FlagPath(const AllreduceCall& call, const Topology& topo, DeviceComm* dc, DType type, DOp op,
             const mla_choice& choice, bool* ran) {
  *ran = false;
  const size_t limit = FlagMaxBytes();
  const size_t bytes = static_cast<size_t>(call.count) * DTypeSize(type);
  if (limit == 0 || bytes > limit) return MPI_SUCCESS;
  if (!dc->flags_built) {
    dc->flags_built = true;
    MLA_MPI_TRY(FlagGroup::Create(topo.node, dc->ppg > 1, limit, &dc->flags, &dc->flags_off));
    if (dc->flags == nullptr && Verbose())
      Warn("device calls up to " + std::to_string(limit) + " bytes cannot meet on the GPU (" + dc->flags_off +
           "): they synchronise on the host");
  }
  if (dc->flags == nullptr) return MPI_SUCCESS;
  const bool one_shot = choice.algo == MLA_ALGO_HIER || (choice.algo == MLA_ALGO_LANE && choice.lanes == 1);
  const void* send = call.sendbuf == MPI_IN_PLACE ? call.recvbuf : call.sendbuf;
  MLA_CUDA_TRY("flag-path kernel",
               dc->flags->Allreduce(type, op, send, call.recvbuf, static_cast<size_t>(call.count), !one_shot,
                                    SyncOnStream() ? SyncRule::kStream : SyncRule::kDevice, dc->stream));
  *ran = true;
  return MPI_SUCCESS;
}

}  // namespace

int DeviceAllreduce(const AllreduceCall& call, MPI_Comm comm, const Topology& topo, int device,
                    const mla_choice& choice, DeviceRun* run) {
  *run = DeviceRun{};
  DType type;
  DOp op;
  if (!MapReduction(call.datatype, call.op, &type, &op)) return Staged(call, comm, run);
  MLA_CUDA_TRY("cudaSetDevice", cudaSetDevice(device));
  DeviceComm* dc = nullptr;
  MLA_MPI_TRY(GetDeviceComm(comm, topo, device, &dc));

  const bool algorithm = choice.algo == MLA_ALGO_LANE || choice.algo == MLA_ALGO_HIER || choice.algo == MLA_ALGO_SPLIT;
  if (algorithm && topo.num_nodes == 1) {
    bool ran = false;
    MLA_MPI_TRY(FlagPath(call, topo, dc, type, op, choice, &ran));
    if (ran) {
      run->algo = choice.algo;
      run->path = MLA_PATH_IPC;
      return MPI_SUCCESS;
    }
  }

  Plan plan;
  switch (choice.algo) {
    case MLA_ALGO_LANE:
    case MLA_ALGO_HIER:
      plan.group = topo.node;
      plan.group_rank = topo.node_rank;
      plan.group_size = topo.node_size;
      plan.active = choice.algo == MLA_ALGO_HIER ? 1
                    : choice.lanes > 0           ? std::min(choice.lanes, topo.node_size)
                                                 : topo.node_size;
      plan.cross = topo.lane;
      plan.cross_size = topo.num_nodes;
      plan.nccl = &dc->lane_nccl;
      plan.exchange = &dc->node_exchange;
      break;
    case MLA_ALGO_SPLIT:
      if (!dc->gpus_regular) {
        if (Verbose())
          Warn("split cannot run on a communicator with " + dc->irregular_reason + ": staging through the host");
        return Staged(call, comm, run);
      }
      plan.group = dc->gpu_group;
      plan.group_rank = dc->gpu_rank;
      plan.group_size = dc->ppg;
      plan.active = dc->ppg;
      plan.cross = dc->slice;
      plan.cross_size = dc->slice_size;
      plan.nccl = &dc->slice_nccl;
      plan.exchange = &dc->gpu_exchange;
      break;
    default:
      return Staged(call, comm, run);
  }
  if (plan.group_size > kMaxBuffers) {
    Warn("more than " + std::to_string(kMaxBuffers) + " ranks in one IPC group: staging through the host");
    return Staged(call, comm, run);
  }
  int rc = RunPlan(comm, plan, dc, call, type, op, choice, run);
  if (rc == MPI_SUCCESS && run->path != MLA_PATH_STAGED) run->algo = choice.algo;
  return rc;
}

int DeviceRanksPerGpu(MPI_Comm comm, const Topology& topo, int device, int* ppg) {
  MLA_CUDA_TRY("cudaSetDevice", cudaSetDevice(device));
  DeviceComm* dc = nullptr;
  MLA_MPI_TRY(GetDeviceComm(comm, topo, device, &dc));
  *ppg = dc->ppg;
  return MPI_SUCCESS;
}

}  // namespace cuda
}  // namespace mla::lib
