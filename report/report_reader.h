// report_reader.h: the job report file that libmlallreduce writes at
// MPI_Finalize (docs/job-report-format.md, format `multilane-job-report`,
// version 1), read and checked.
#ifndef MULTILANE_REPORT_READER_H_
#define MULTILANE_REPORT_READER_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlreport {

inline constexpr char kJobReportFormat[] = "multilane-job-report";
inline constexpr int kJobReportVersion = 1;

// A figure over the ranks of MPI_COMM_WORLD.
struct MinMeanMax {
  double min = 0;
  double mean = 0;
  double max = 0;
};

// bins[].profile: the profile entry that covered the bin's lower edge.
struct BinProfile {
  std::string algo;
  std::optional<double> time_us;      // the tuner's time of `algo`
  std::optional<double> mpi_time_us;  // the tuner's time of the system MPI
};

// One (memory kind, power-of-two size bin) that saw calls.
struct ReportBin {
  std::string memory;  // "host" or "device"
  uint64_t from = 0;
  std::optional<uint64_t> to;  // absent: no upper bound
  int64_t calls = 0;           // world rank 0's calls
  uint64_t bytes = 0;          // message size x calls, world rank 0
  MinMeanMax time_s;
  double wait_s = 0;
  int comm_ranks = 0;    // n of busbw; 0 when the file does not say
  double algbw_gbs = 0;  // 0 when the file has null (no time to divide by)
  double busbw_gbs = 0;
  std::map<std::string, int64_t> algos;  // calls by algorithm
  std::map<std::string, int64_t>
      transports;              // device bins: calls by path (ipc, mpi, nccl, staged); empty in older files
  int64_t nccl_fallbacks = 0;  // device bins: calls whose NCCL transport fell back to MPI staging
  std::map<std::string, int64_t> system_algos;  // of the passthrough calls, those the system MPI's algorithm NAME ran
                                                // (mpi=NAME); empty in older files
  std::optional<BinProfile> profile;
};

// One GPU sampled through NVML.
struct ReportGpu {
  std::string host;
  int index = 0;
  std::string uuid;
  std::string name;
  int64_t samples = 0;
  double interval_s = 0;
  std::optional<double> utilization_mean_pct;
  std::optional<double> memory_activity_mean_pct;
  std::optional<double> power_mean_w;
  std::optional<double> power_max_w;
  std::optional<double> energy_j;
};

// entries.NAME: the calls that came in through one entry point (names as
// mla_entry_name gives them: c, fortran, f08, large_count, nonblocking,
// persistent) and how many of them multilane handed to the system MPI
// unserved.
struct ReportEntry {
  std::string name;
  int64_t calls = 0;
  int64_t not_served = 0;
};

// The whole file, as far as `multilane report` uses it.  Every text read
// from the file but profile_text (names, ids, hosts, GPUs, algorithm and
// entry point names) holds its control bytes written out by
// mla::EscapeControlBytes (vocab/terminal_text.h): a NUL or an ESC in a host
// name is "\x00" or "\x1b" in the text, JSON and HTML output alike, never
// raw and never the end of a line.
struct JobReport {
  std::string path;  // where it was read from
  std::string library_version;
  std::string job_id;
  std::string job_name;
  std::string job_key;  // the history's key (vocab/job_key.h); "" in files written before it
  std::string started_utc;
  int ranks = 0;
  int nodes = 0;
  int ranks_per_node = 0;
  int ranks_per_gpu = 0;
  int gpus = 0;
  std::vector<std::string> hosts;
  bool regular = true;
  std::string settings_algo;
  std::optional<std::string> profile_text;  // absent: no profile in force
  MinMeanMax wall_s;
  MinMeanMax allreduce_s;
  MinMeanMax wait_s;
  MinMeanMax setup_s;  // one-time setup inside calls (part of allreduce_s); zero in files written before it
  int64_t wait_sampled_calls = 0;
  std::vector<ReportBin> bins;
  std::vector<ReportGpu> gpus_sampled;
  std::vector<ReportEntry> entries;  // sorted by name; empty in files written before entry points were counted
  // Rank 0's calls that a multilane algorithm was chosen for but that went to
  // the system MPI, by reason (mla::UnsupportedName); empty in older files.
  std::map<std::string, int64_t> unsupported;
};

// Parses and checks `text`, the contents of the file `path` (used only in
// messages).  On success fills *report and returns true.  On failure returns
// false and sets *error to one line that starts with "PATH: " and says what is
// wrong: truncated JSON, not JSON, another format, another version (named), or
// the first missing or ill-typed field (named by its dotted path).
bool ParseJobReport(const std::string& text, const std::string& path, JobReport* report, std::string* error);

// Reads the file `path` and parses it as ParseJobReport does; a file that
// cannot be read is an error too ("PATH: cannot read: REASON").
bool ReadJobReport(const std::string& path, JobReport* report, std::string* error);

}  // namespace mlreport

#endif  // MULTILANE_REPORT_READER_H_
