// probe_sizes.h: how mlprobe (probe_main.cc) measures one message size of
// its plan: every candidate validated once against PMPI_Allreduce, then
// measured in rounds with successive halving within the size's share of the
// budget, and with --compare an exhaustive sweep after it.  The modes and
// the repetition are described at the top of probe_main.cc; the result's
// format in tuner/README.md.
//
// Every function here is collective over MPI_COMM_WORLD: all ranks call it
// with the same arguments, and every decision is taken from values all ranks
// hold equal (MAX-reduced samples) or that rank 0 broadcasts (the clock).
#ifndef MLTUNER_PROBE_SIZES_H_
#define MLTUNER_PROBE_SIZES_H_

#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tuner/candidates.h"
#include "tuner/plan.h"
#include "tuner/search.h"
#include "libmlallreduce/tool_device.h"

namespace mltuner {

// Rank 0's verdict, shared with every rank.
bool BcastFlag(bool v);

// True on every rank when `v` is true on any rank.
bool AnyRank(bool v);

// Rank `rank` 0 prints `progress <done> <total> <seconds_left> <what>` on
// stdout, flushed (the launcher draws its progress bar from these lines);
// other ranks print nothing.
void PrintProgress(int rank, long done, long total, double seconds_left, const std::string& what);

// The buffers of one memory kind.  Host: the calls use `send`/`recv`
// directly.  Device: the calls use device copies made through the library's
// CUDA module (tool_device.h), so mlprobe needs no CUDA of its own; `send` is
// uploaded once per size and the result read back into `recv` to validate.
class Buffers {
 public:
  std::vector<float> send, recv, ref;  // host: the call's buffers; device: the host side

  // Device buffers on GPU `gpu` (< 0: host buffers).  ok() says whether the
  // allocation worked.
  Buffers(size_t count, int gpu) : send(count), recv(count), ref(count) {
    if (gpu < 0) return;
    device_ = true;
    dsend_ = mla_tool_device_alloc(gpu, count * 4);
    drecv_ = mla_tool_device_alloc(gpu, count * 4);
  }
  ~Buffers() {
    mla_tool_device_free(dsend_);
    mla_tool_device_free(drecv_);
  }
  Buffers(const Buffers&) = delete;
  Buffers& operator=(const Buffers&) = delete;

  bool ok() const { return !device_ || (dsend_ != nullptr && drecv_ != nullptr); }
  const void* call_send() const { return device_ ? dsend_ : send.data(); }
  void* call_recv() { return device_ ? drecv_ : recv.data(); }
  // After `send` was filled: the call's send buffer holds it.
  bool Upload(size_t count) { return !device_ || mla_tool_memcpy(dsend_, send.data(), count * 4) == 0; }
  // Fills the call's receive buffer with a pattern no right result has.
  bool Poison(size_t count) {
    std::memset(recv.data(), 0x5a, count * 4);
    return !device_ || mla_tool_memcpy(drecv_, recv.data(), count * 4) == 0;
  }
  // After a call: `recv` holds its result.
  bool Download(size_t count) { return !device_ || mla_tool_memcpy(recv.data(), drecv_, count * 4) == 0; }

 private:
  bool device_ = false;
  void* dsend_ = nullptr;
  void* drecv_ = nullptr;
};

class SystemAlgorithms;

// What the sizes of one probe run share: its settings, its clock, its
// progress and the previous size's medians.  Made by StartRun.
struct ProbeRun {
  const Plan* plan = nullptr;
  SystemAlgorithms* system = nullptr;  // the system MPI's own algorithms (probe_system.h); null: none
  int rank = 0;                        // in MPI_COMM_WORLD; rank 0 prints
  int nranks = 1;                      // in MPI_COMM_WORLD
  bool exhaustive = false;             // --exhaustive
  bool compare = false;                // --compare
  HalvingOptions halving;
  double t_start = 0;           // MPI_Wtime() when the run started
  size_t steps = 0;             // sizes of every memory kind
  long steps_per_size = 0;      // progress steps of one size
  long total = 0;               // progress steps of the run
  long done = 0;                // progress steps done
  double budgeted_spent = 0;    // --compare: seconds of the budgeted parts so far
  double exhaustive_spent = 0;  // --compare: seconds of the exhaustive sweeps so far
  // Per memory kind: the medians of the last size measured, by candidate.
  std::map<MemKind, std::map<std::string, double>> previous_median;

  // The seconds left as the progress lines say them: the budget's rest in
  // the budgeted mode, else an estimate from the steps done.
  double SecondsLeft() const;
  // Prints a progress line at `done` (PrintProgress).
  void Progress(const std::string& what) const;
};

// Starts the run of `plan` over `steps` sizes now (t_start); the halving
// margin is the plan's, at least twice its noise floor.
ProbeRun StartRun(const Plan& plan, int rank, bool exhaustive, bool compare, size_t steps);

// Measures size number `si` of the run (`bytes` of memory kind `mem`) on
// `cands` (passthrough first) with `buf`, whose buffers hold at least
// bytes / 4 floats: builds, orders and validates the entries, runs the
// rounds, and with --compare the sweep.  Prints its progress lines, warns
// (rank 0) about each candidate dropped as wrong, updates run->done, the
// spent times and the medians, and returns the size's object of the
// result's "sizes" (tuner/README.md).
nlohmann::json MeasureSize(ProbeRun* run, size_t si, MemKind mem, uint64_t bytes, const std::vector<Candidate>& cands,
                           Buffers* buf);

}  // namespace mltuner

#endif  // MLTUNER_PROBE_SIZES_H_
