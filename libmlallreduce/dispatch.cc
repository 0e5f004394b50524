// dispatch.cc: the decision for each allreduce call and the C API.
#include <atomic>
#include <optional>
#include <string>

#include "libmlallreduce/algorithms/algorithms.h"
#include "libmlallreduce/device/buffer_kinds.h"
#include "libmlallreduce/algorithms/call_support.h"
#include "libmlallreduce/startup/comm_scope.h"
#include "libmlallreduce/base/cuda_presence.h"
#include "libmlallreduce/device_loader.h"
#include "libmlallreduce/jobreport/job_report.h"
#include "libmlallreduce/base/log.h"
#include "mlallreduce.h"
#include "libmlallreduce/dispatch.h"
#include "libmlallreduce/quick_route.h"
#include "libmlallreduce/runtime.h"
#include "libmlallreduce/base/stats.h"
#include "libmlallreduce/algorithms/system_choice.h"
#include "libmlallreduce/algorithms/topology.h"
#include "vocab/algo_names.h"
#include "vocab/ranks_per_gpu.h"

namespace mla::lib {
namespace {

// One call's arguments and what the steps below tell about it.  `device`:
// the CUDA module when the buffers are device memory, else nullptr.
// (args.extent is found only where an algorithm runs.)
struct Call {
  AllreduceCall args;
  MPI_Comm comm;
  uint64_t bytes;
  const DeviceModule* device;
  CallOutcome* out;
};

// The system MPI path, on communicator `on` (the caller's, or the library's
// copy for a system algorithm): for device buffers, staged through host
// memory.  Counts the call when it succeeds.
int SystemMpi(const Call& c, MPI_Comm on) {
  const AllreduceCall& a = c.args;
  int rc = c.device != nullptr ? c.device->staged(a.sendbuf, a.recvbuf, a.count, a.datatype, a.op, on)
                               : PMPI_Allreduce(a.sendbuf, a.recvbuf, a.count, a.datatype, a.op, on);
  if (rc == MPI_SUCCESS) {
    CountDone(MLA_ALGO_PASSTHROUGH, c.bytes);
    if (c.device != nullptr) {
      CountDevicePath(MLA_PATH_STAGED, false);
      c.out->path = MLA_PATH_STAGED;
    }
  }
  return rc;
}

// The ranks per GPU a profile's `ppg=` is matched against for a call on
// device buffers: the size of this rank's GPU group, found from the devices'
// UUIDs (MULTILANE_RANKS_PER_GPU only stands in for it on host memory).  On
// communicators the algorithms cannot take, *ppg is left as it is: no
// algorithm runs there whatever the profile says.  Collective over comm, on
// every rank alike (a call's buffers are of one kind on every rank).
int DeviceRanksPerGpu(const DeviceModule* device, void* recvbuf, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                      int* ppg) {
  bool matters = false;  // only entries with ppg= on device memory need it
  for (const ProfileEntry& e : CurrentConfig().profile.entries()) matters |= e.kind == MemKind::kDevice && e.ppg > 0;
  if (!matters || UnsupportedReason(datatype, op, comm) != nullptr) return MPI_SUCCESS;
  const Topology* topo = nullptr;
  int rc = GetTopology(comm, &topo);
  if (rc != MPI_SUCCESS || !topo->regular) return rc;
  rc = device->ranks_per_gpu(recvbuf, comm, topo, ppg);
  if (rc == MPI_SUCCESS && comm == MPI_COMM_WORLD) NoteDeviceRanksPerGpu(*ppg);
  return rc;
}

// An error of an algorithm, raised on the caller's communicator as the system
// MPI raises its own: the algorithms run on the library's communicators,
// which return their errors (topology.h), so the handler the caller's
// communicator has now (MPI_ERRORS_RETURN, MPI_ERRORS_ARE_FATAL or the
// program's own) is called, once, with the same code.  Returns rc.
int RaiseOnCaller(MPI_Comm comm, int rc) {
  if (rc != MPI_SUCCESS) PMPI_Comm_call_errhandler(comm, rc);
  return rc;
}

uint64_t MessageBytes(int count, MPI_Datatype datatype, int* type_size) {
  *type_size = 0;
  if (count <= 0 || datatype == MPI_DATATYPE_NULL) return 0;
  if (PMPI_Type_size(datatype, type_size) != MPI_SUCCESS || *type_size < 0) *type_size = 0;
  return static_cast<uint64_t>(count) * static_cast<uint64_t>(*type_size);
}

// The kind of a call's buffers, and the CUDA module where CUDA is in the
// process (*device, else nullptr).  The first call that finds the CUDA
// driver in the process loads the module, and the driver's first answer sets
// up its context (on the GPU host, 0.1 s): one-time setup, timed apart from
// the call for the job report.
int ClassifyCallBuffers(const void* sendbuf, const void* recvbuf, const DeviceModule** device) {
  static std::atomic<bool> cuda_seen{false};
  const bool cuda = CudaDriverLoaded();  // asked once here: it walks the loaded objects until CUDA is in
  std::optional<ReportSetupTimer> setup;
  if (cuda && !cuda_seen.load(std::memory_order_relaxed)) setup.emplace();
  *device = cuda ? DeviceModuleIfCudaInUse() : nullptr;  // without CUDA: no second walk
  const int kinds = ClassifyBuffers(*device != nullptr || cuda, *device, sendbuf, recvbuf);
  if (setup) cuda_seen.store(true, std::memory_order_relaxed);
  return kinds;
}

// The algorithm the settings give call c: `forced` (the caller's), else the
// settings' choice (SettingsChoice) for its memory kind, size and ranks per
// GPU (*system_algorithm: the entry's mpi=NAME); *choice stays as it is when
// none applies.  Fails only where finding the GPU groups fails.
int ChooseAlgorithm(const Call& c, const mla_choice* forced, mla_choice* choice, const std::string** system_algorithm) {
  const Config& config = CurrentConfig();
  if (forced != nullptr) {
    *choice = *forced;
    return MPI_SUCCESS;
  }
  int ppg = RanksPerGpuOrOne(config.ranks_per_gpu);
  if (c.device != nullptr && !config.has_forced && !config.profile.empty()) {
    int rc = DeviceRanksPerGpu(c.device, c.args.recvbuf, c.args.datatype, c.args.op, c.comm, &ppg);
    if (rc != MPI_SUCCESS) return rc;
  }
  SettingsChoice(config, c.device != nullptr ? MemKind::kDevice : MemKind::kHost, c.bytes, ppg, choice,
                 system_algorithm);
  return MPI_SUCCESS;
}

// Runs c with `choice`, an algorithm of the library, on comm's layout `topo`
// (folded onto its regular core when `folded`); its errors are raised on the
// caller's communicator.  Sets c.out->algo to the algorithm that ran it.
int RunAlgorithm(const Call& c, const Topology& topo, bool folded, mla_choice choice) {
  AllreduceCall call = c.args;
  MPI_Aint lb = 0;
  PMPI_Type_get_extent(call.datatype, &lb, &call.extent);
  mla_algo ran = choice.algo;
  int rc = MPI_SUCCESS;
  if (c.device != nullptr) {
    DeviceRun run;
    // The module's steps on the caller's communicator raise their errors
    // there themselves; RaiseOnCaller may call a program's own handler a
    // second time for those (never a fatal one, which has ended the job).
    rc = RaiseOnCaller(c.comm, c.device->allreduce(&call, c.comm, &topo, &choice, &run));
    ran = run.algo;
    if (rc == MPI_SUCCESS) {
      CountDevicePath(run.path, run.nccl_fallback);
      c.out->path = run.path;
      c.out->nccl_fallback = run.nccl_fallback;
    }
  } else if (folded) {
    rc = RaiseOnCaller(c.comm, RunFolded(call, topo, choice));
  } else {
    switch (choice.algo) {
      case MLA_ALGO_LANE:
        rc = RunLane(call, topo, choice);
        break;
      case MLA_ALGO_HIER:
        rc = RunHier(call, topo, choice);
        break;
      case MLA_ALGO_SPLIT:
        rc = RunSplit(call, topo, choice);
        break;
      default:
        return SystemMpi(c, c.comm);
    }
    rc = RaiseOnCaller(c.comm, rc);
  }
  if (rc == MPI_SUCCESS) CountDone(ran, c.bytes);
  c.out->algo = ran;
  return rc;
}

// Runs c with `choice` where comm and its layout let the algorithm run it,
// else with the system MPI (counted as unsupported).
int RunWhereItFits(const Call& c, mla_choice choice) {
  Unsupported why = Unsupported::kArguments;
  if (UnsupportedReason(c.args.datatype, c.args.op, c.comm, &why) != nullptr) {
    CountUnsupported(why);
    return SystemMpi(c, c.comm);
  }
  const Topology* topo = nullptr;
  int rc = GetTopology(c.comm, &topo);
  if (rc != MPI_SUCCESS) return rc;
  const bool host = c.device == nullptr;
  // On device buffers the module checks GPU groups itself (from UUIDs).
  const bool layout_ok = (choice.algo == MLA_ALGO_SPLIT && host) ? topo->gpus_regular : topo->regular;
  // Host memory on an irregular layout: folded onto its regular core.
  const bool folded =
      !layout_ok && host && topo->fold != MPI_COMM_NULL && (choice.algo != MLA_ALGO_SPLIT || topo->core_gpus_regular);
  if (!layout_ok && !folded) {
    if (CurrentConfig().verbose > 0) {
      WarnOnce(std::string(mla::AlgoName(choice.algo)) + " cannot run on a communicator with " +
               topo->irregular_reason + ": its calls go to the system MPI");
    }
    CountUnsupported(Unsupported::kLayout);
    return SystemMpi(c, c.comm);
  }
  return RunAlgorithm(c, *topo, folded, choice);
}

// Runs c as a passthrough entry's mpi=`name` (system_choice.h) and counts
// the calls that algorithm ran, for the stats and the report.
int RunSystemAlgorithm(const Call& c, const std::string& name) {
  int slot = -1;
  const int rc = SystemAlgorithmAllreduce(
      name, c.args.count, c.args.op, c.comm, c.bytes, [&c](MPI_Comm on) { return SystemMpi(c, on); }, &slot);
  if (rc == MPI_SUCCESS && slot >= 0) {
    CountSystemAlgorithm(slot);
    c.out->system_algo = slot;
  }
  return rc;
}

// The call the entry points received, its size found once for every path.
Call NewCall(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  Call c{{sendbuf, recvbuf, count, datatype, op, 0, 0}, comm, 0, nullptr, nullptr};
  c.bytes = MessageBytes(count, datatype, &c.args.type_size);
  return c;
}

// Runs call c with `forced` (nullptr: decide from the settings) and tells
// *c.out its size, memory kind and the algorithm that ran it.
int Allreduce(Call c, const mla_choice* forced) {
  CountCall();
  const AllreduceCall& a = c.args;
  c.out->bytes = c.bytes;
  // count, datatype, op and comm are equal on every rank (MPI's rule), and so
  // are the buffer kinds for any program a CUDA-aware MPI would run, so every
  // branch below is taken alike on every rank.  Arguments the system MPI
  // refuses reach it before anything else looks at them: it raises its own
  // error (MPI_ERR_OP, MPI_ERR_COMM, ...) under the caller's handler.
  if (a.count <= 0 || InvalidArguments(a.datatype, a.op, c.comm)) return SystemMpi(c, c.comm);

  const DeviceModule* device = nullptr;
  const int kinds = ClassifyCallBuffers(a.sendbuf, a.recvbuf, &device);
  // CUDA without its module: the buffers may be device memory (the loader's
  // warning says these calls go to the system MPI).
  if (kinds == kBuffersUnknown) return SystemMpi(c, c.comm);
  if (kinds != kBuffersHost) {
    c.device = device;
    CountDeviceCall();
    c.out->kind = MemKind::kDevice;
  } else if (QuickPassthrough(c.bytes, forced)) {
    return SystemMpi(c, c.comm);  // a process with CUDA: known to be host memory only now
  }
  // Served only where the start-up agreement speaks for every process of
  // comm (comm_scope.h): never a communicator that reaches another world.
  if (kinds == kBuffersMixed || (forced == nullptr && !Enabled()) || !SettingsConsistent() || !WithinWorld(c.comm))
    return SystemMpi(c, c.comm);

  mla_choice choice{MLA_ALGO_PASSTHROUGH, 0, 0, MLA_TRANSPORT_AUTO};
  const std::string* system_algorithm = nullptr;  // the entry's mpi=NAME
  int rc = ChooseAlgorithm(c, forced, &choice, &system_algorithm);
  if (rc != MPI_SUCCESS) return rc;
  if (RunsUnchanged(choice, nullptr)) {
    // Device buffers: the staged path's host collective runs the algorithm.
    if (!RunsUnchanged(choice, system_algorithm)) return RunSystemAlgorithm(c, *system_algorithm);
    return SystemMpi(c, c.comm);
  }
  return RunWhereItFits(c, choice);
}

// Allreduce, timed for the job report when it is on.
int RecordedAllreduce(Call c, const mla_choice* forced) {
  CallOutcome outcome;
  c.out = &outcome;
  if (!ReportOn()) return Allreduce(c, forced);
  const ReportClock clock = ReportCallBegin(c.comm);
  const int rc = Allreduce(c, forced);
  ReportCallEnd(clock, outcome);
  return rc;
}

// A call of `entry` (MLA_ENTRY_COUNT: the C API) that the quick route
// (quick_route.h) sends to the system MPI: what Allreduce does with it,
// counted alike, without its look-ups.  Returns false, having done and
// counted nothing, for every other call.
bool QuickCall(mla_entry entry, const Call& c, const mla_choice* forced, int* rc) {
  // No CUDA in the process: the buffers are host memory (ClassifyBuffers).
  if (!QuickPassthrough(c.bytes, forced) || CudaDriverLoaded()) return false;
  const AllreduceCall& a = c.args;
  *rc = PMPI_Allreduce(a.sendbuf, a.recvbuf, a.count, a.datatype, a.op, c.comm);
  CountSystemCall(entry, c.bytes, *rc == MPI_SUCCESS);
  return true;
}

// The one way of every call: the quick route, else counted under its entry
// and the whole path.
int Dispatch(mla_entry entry, const Call& c, const mla_choice* forced) {
  int rc = MPI_SUCCESS;
  if (QuickCall(entry, c, forced, &rc)) return rc;
  CountEntry(entry, false);
  return RecordedAllreduce(c, forced);
}

}  // namespace

int EntryAllreduce(mla_entry entry, const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm) {
  return Dispatch(entry, NewCall(sendbuf, recvbuf, count, datatype, op, comm), nullptr);
}

}  // namespace mla::lib

extern "C" {

int mla_allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return mla::lib::EntryAllreduce(MLA_ENTRY_COUNT, sendbuf, recvbuf, count, datatype, op, comm);
}

int mla_allreduce_with(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                       const mla_choice* choice) {
  const mla_choice passthrough{MLA_ALGO_PASSTHROUGH, 0, 0, MLA_TRANSPORT_AUTO};
  return mla::lib::Dispatch(MLA_ENTRY_COUNT, mla::lib::NewCall(sendbuf, recvbuf, count, datatype, op, comm),
                            choice ? choice : &passthrough);
}

int mla_call_supported(MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, const char** reason) {
  const char* why = mla::lib::UnsupportedReason(datatype, op, comm);
  if (reason != nullptr) *reason = why ? why : "";
  return why == nullptr;
}

int mla_comm_layout(MPI_Comm comm, mla_layout* layout) {
  // Building a layout is collective: never where some rank may not take part.
  if (!mla::lib::SettingsConsistent()) return MPI_ERR_OTHER;
  int inter = 0;
  if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter) return MPI_ERR_COMM;
  if (!mla::lib::WithinWorld(comm)) return MPI_ERR_OTHER;
  const mla::lib::Topology* topo = nullptr;
  int rc = mla::lib::GetTopology(comm, &topo);
  if (rc != MPI_SUCCESS) return rc;
  layout->size = topo->size;
  layout->nodes = topo->num_nodes;
  layout->ranks_per_node = topo->node_size;
  layout->ranks_per_gpu = topo->ppg;
  layout->node_rank = topo->node_rank;
  layout->regular = topo->regular ? 1 : 0;
  layout->gpus_regular = topo->gpus_regular ? 1 : 0;
  return MPI_SUCCESS;
}

void mla_get_stats(mla_stats* stats) {
  if (stats == nullptr) return;
  *stats = mla::lib::StatsSnapshot();
  if (const mla::lib::DeviceModule* device = mla::lib::DeviceModuleIfCudaInUse()) {
    device->ipc_stats(&stats->ipc_opened, &stats->ipc_hits, &stats->ipc_closed);
    device->flag_stats(&stats->device_flag_calls, &stats->device_flag_one_shot);
  }
}

void mla_get_entry_stats(mla_entry_stats* stats) {
  if (stats != nullptr) *stats = mla::lib::EntryStatsSnapshot();
}

long long mla_system_algo_calls(int index, const char** name) {
  const char* ran = mla::lib::SystemAlgorithmName(index);
  if (*ran == '\0') return -1;
  if (name != nullptr) *name = ran;
  return static_cast<long long>(mla::lib::DetailStatsSnapshot().system_algos[index]);
}

void mla_reset_stats(void) { mla::lib::ResetStats(); }

int mla_enabled(void) { return mla::lib::Enabled() ? 1 : 0; }

const char* mla_version(void) { return MLA_VERSION_STRING; }

const char* mla_build_family(void) { return MLA_MPI_FAMILY; }

}  // extern "C"
