// tune_request.h: what `multilane tune` was asked, read and checked once.
// The command line lands in TuneOptions as typed (text); ParseTuneRequest
// validates every option with the vocabulary's readers and gives the typed
// TuneRequest, read in two places: cmd_tune.cc resolves it on this machine
// once (the probe launches and the record take what it resolved), and the
// tune of a partition hands it to its probe jobs.  No text is read again.
#ifndef MULTILANE_LAUNCHER_TUNE_REQUEST_H_
#define MULTILANE_LAUNCHER_TUNE_REQUEST_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "report/report_reader.h"
#include "vocab/mpi_families.h"

namespace multilane {

// The options that need no reading: the request takes them as given.
struct TuneSettings {
  int np = 0;             // 0: not given
  int virtual_nodes = 0;  // 0: not given
  std::string partition;  // "": not given
  bool system = false;
  std::string database;  // --db; "": not given
  bool exhaustive = false;
  std::string keep;  // --keep; "": a temporary folder
  bool allow_oversubscribed = false;
  bool for_system = false;  // hidden: a partition's probe job whose profile goes to the system database
  // --srun-mpi: srun's --mpi for the probes inside an allocation; "": the
  // family's (SrunMpiOf); "default": none, the cluster's MpiDefault.
  std::string srun_mpi;
};

// The options as the command line gives them (CLI11 binds these).
struct TuneOptions : TuneSettings {
  double budget_s = 60;  // the whole tune, launch overheads included
  std::string sizes = "4K:64M";
  int step = 4;
  std::string memory = "auto";  // host, device, all, or auto (all where GPUs are present)
  std::string ranks_per_gpu;    // "" (default), one value, or a list "1,2,4,8"
  std::string weights;          // a job report whose calls per size weight the choice of ranks per GPU
  // The MPI family to tune with: a name of vocab/mpi_families.cc (default: its first row's, Open MPI).
  std::string mpi = mla::MpiFamilies().front().name;
};

// --memory: which buffers are measured; kAuto is all where the node has GPUs
// (resolved against the node's GPUs: tune_gpu.h, ResolveTuneMemory).
enum class TuneMemory { kAuto, kHost, kDevice, kAll };

// "auto", "host", "device" or "all".
const char* TuneMemoryName(TuneMemory memory);

// --sizes FROM:TO with --step: FROM, FROM x step, ... up to TO, each rounded
// down to a multiple of 4 bytes (fp32).
struct TuneSizes {
  uint64_t from = 0;
  uint64_t to = 0;
  int step = 4;
  std::vector<uint64_t> bytes;  // the sizes measured, ascending
};

// A tune as asked, every option checked.
struct TuneRequest : TuneSettings {
  double budget_s = 60;  // > 0
  TuneSizes sizes;
  TuneMemory memory = TuneMemory::kAuto;
  std::vector<int> ranks_per_gpu;              // empty: not given (the default list where one is needed)
  std::optional<mlreport::JobReport> weights;  // --weights, read
  const mla::MpiFamilyInfo* family = nullptr;  // --mpi's row of the family table, never null
};

// srun's --mpi type for `r`'s probes: --srun-mpi, else its family's; "" for
// none (--srun-mpi default: the cluster's MpiDefault).
std::string SrunMpiOf(const TuneRequest& r);

// Checks every option of `opt` (sizes and step, budget, memory, ranks per
// GPU, --mpi) and reads the --weights report, before any machine is looked
// at.  False with *error set to the one line the tune fails with.
bool ParseTuneRequest(const TuneOptions& opt, TuneRequest* request, std::string* error);

}  // namespace multilane

#endif  // MULTILANE_LAUNCHER_TUNE_REQUEST_H_
