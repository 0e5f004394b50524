// allreduce_bench.cc: mlallreduce_bench, the allreduce benchmark of multilane.
//
// For each message size it times the system MPI (PMPI_Allreduce, the "mpi"
// baseline) and each requested libmlallreduce algorithm side by side, checks
// the results, and prints one row per (size, algorithm) in the style of
// nccl-tests.  docs/mlallreduce_bench.md describes the options and the columns.
// The parts: options.h (the command line), run_info.h (the run's facts and
// the header), memkind.h (the buffers), bench.h (the measurement and its
// table, validate.h its checks); here the summary and the JSON file.
#include <mpi.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdlib>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "benchmarks/bench.h"
#include "benchmarks/memkind.h"
#include "benchmarks/options.h"
#include "benchmarks/overhead.h"
#include "benchmarks/run_info.h"
#include "vocab/refuse.h"

namespace mlabench {
namespace {

using Json = nlohmann::ordered_json;  // members in the order written

// The mean busbw of an algorithm's rows (nccl-tests' "Avg bus bandwidth").
double average_busbw(const Bench& bench, const std::string& algo) {
  double sum = 0;
  int n = 0;
  for (const Row& r : bench.rows())
    if (r.algo == algo) {
      sum += r.busbw;
      ++n;
    }
  return n ? sum / n : 0.0;
}

// A measured figure to 9 significant digits (what the timers resolve), null
// when not measured or not finite.
Json figure(std::optional<double> v) {
  if (!v || !std::isfinite(*v)) return nullptr;
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", *v);
  return std::strtod(text, nullptr);
}

// One row of the table; what was not measured is null.
Json row_json(const Options& opt, const Row& r) {
  return {{"size", r.bytes},
          {"count", r.count},
          {"type", type_name(opt.type)},
          {"redop", op_name(opt.op)},
          {"algo", r.algo},
          {"time_us", figure(r.time_us)},
          {"algbw", figure(r.algbw)},
          {"busbw", figure(r.busbw)},
          {"wrong", r.checked ? Json(r.wrong) : Json(nullptr)},
          {"vs_mpi", figure(r.vs_mpi)},
          {"vs_best", figure(r.vs_best)},
          {"bound_us", figure(r.bound_us)},
          {"vs_bound", figure(r.vs_bound)},
          {"iters", r.iters},
          {"warmup", r.warmup},
          {"ran_as", r.ran_as}};
}

// Prints the notes, the out-of-bounds count and each algorithm's mean busbw.
void print_summary(const Options& opt, const Bench& bench, uint64_t total_wrong) {
  printf("#\n");
  for (const std::string& n : bench.notes()) printf("# note: %s\n", n.c_str());
  if (opt.check)
    printf("# Out of bounds values : %" PRIu64 " %s\n", total_wrong, total_wrong ? "FAILED" : "OK");
  else
    printf("# Out of bounds values : N/A (check off)\n");
  size_t width = 0;
  for (const AlgoSpec& a : opt.algos) width = std::max(width, a.name.size());
  for (const AlgoSpec& a : opt.algos) {
    printf("# Avg bus bandwidth %-*s : %.3f GB/s\n", static_cast<int>(width + 2), ("(" + a.name + ")").c_str(),
           average_busbw(bench, a.name));
  }
  printf("#\n");
  fflush(stdout);
}

// Writes the run, its rows and its summary to f as JSON: one member of the
// document a line, and the elements of its arrays one a line.  False when
// the writing failed.
bool write_json(FILE* f, const Options& opt, const RunInfo& info, const Bench& bench, uint64_t total_wrong) {
  Json doc = run_json(opt, info);
  doc["results"] = Json::array();
  for (const Row& r : bench.rows()) doc["results"].push_back(row_json(opt, r));
  Json busbw = Json::object();
  for (const AlgoSpec& a : opt.algos) busbw[a.name] = figure(average_busbw(bench, a.name));
  doc["summary"] = {
      {"out_of_bounds", opt.check ? Json(total_wrong) : Json(nullptr)}, {"avg_busbw", busbw}, {"notes", bench.notes()}};
  std::string text = "{";
  for (auto m = doc.begin(); m != doc.end(); ++m) {
    text += std::string(m == doc.begin() ? "" : ",") + "\n  " + Json(m.key()).dump() + ": ";
    if (!m->is_array() || m->empty()) {
      text += m->dump(-1, ' ', false, Json::error_handler_t::replace);
      continue;
    }
    for (size_t i = 0; i < m->size(); ++i)
      text += std::string(i == 0 ? "[" : ",") + "\n    " + (*m)[i].dump(-1, ' ', false, Json::error_handler_t::replace);
    text += "\n  ]";
  }
  text += "\n}\n";
  return fputs(text.c_str(), f) >= 0 && !ferror(f);
}

// Whether `ok` holds on every rank (collective).
bool on_all_ranks(bool ok) {
  int mine = ok, all = 0;
  PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all != 0;
}

// Ends the run everywhere with status; rank 0 prints message to stderr first.
int finish(int rank, int status, const std::string& message) {
  if (rank == 0 && !message.empty()) fprintf(stderr, "mlallreduce_bench: %s\n", message.c_str());
  MPI_Finalize();
  return status;
}

// Checks the mpi:NAME and mpi-best rows against the algorithms the system
// offers: without -a, mpi-best is dropped when there are none (a note says
// why); a row given with -a that the MPI cannot give is an error (message).
bool check_system_rows(Options* opt, const SystemAllreduce& system, std::vector<std::string>* notes,
                       std::string* message) {
  const std::vector<std::string>& names = system.names();
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
  std::vector<AlgoSpec> kept;
  for (const AlgoSpec& spec : opt->algos) {
    if (spec.kind == AlgoSpec::Kind::kMpiAlgo && std::find(names.begin(), names.end(), spec.system_algo) == names.end())
      return mla::Refuse(message, "-a " + spec.name + ": '" + spec.system_algo +
                                      "' is not an allreduce algorithm this MPI lets a job choose; " +
                                      (names.empty() ? system.why_none() : "choose one of: " + list));
    const bool left_out = spec.kind == AlgoSpec::Kind::kMpiBest && names.empty();
    if (left_out && !opt->algos_default) return mla::Refuse(message, "-a mpi-best: " + system.why_none());
    if (left_out) notes->push_back("mpi-best left out: " + system.why_none());
    if (!left_out) kept.push_back(spec);
  }
  opt->algos = kept;
  return true;
}

// Opens -J's file on rank 0 before the run, so that a bad path fails first;
// false (with *error) on every rank when it cannot be written.
bool open_json(const Options& opt, int rank, FILE** json, std::string* error) {
  if (rank == 0 && !opt.json_path.empty()) {
    *json = fopen(opt.json_path.c_str(), "w");
    if (!*json)
      *error = "-J: cannot write '" + opt.json_path + "': " + strerror(errno) + "; give a file in a writable folder";
  }
  return on_all_ranks(error->empty());
}

// Measures and reports on memory of `kind`; returns the exit status and sets
// *message where the run cannot start.
int measure(Options& opt, RunInfo& info, MemKind* kind, FILE* json, std::string* message) {
  const size_t max_bytes = (opt.max_bytes / type_size(opt.type)) * type_size(opt.type);
  SystemAllreduce system;  // the system's own algorithms (mpi:NAME, mpi-best); freed before MPI_Finalize
  Bench bench(opt, info, kind, max_bytes, system);
  if (!on_all_ranks(bench.allocated())) {
    *message = "cannot allocate 2 x " + std::to_string(max_bytes) + " bytes of " + opt.memory +
               " memory on some rank; lower -e or run fewer ranks per node";
    return 1;
  }
  info.memory = kind->describe();
  std::vector<std::string> system_notes;
  if (!check_system_rows(&opt, system, &system_notes, message)) return 2;
  if (!system.names().empty()) {
    info.system_algorithms = system.mechanism() + ":";
    for (const std::string& n : system.names()) info.system_algorithms += " " + n;
  }
  info.device = kind->device();
  info.ranks_per_gpu = bench.ranks_per_gpu();
  if (info.rank == 0) print_header(opt, info);
  const uint64_t total_wrong = bench.run(system_notes);
  int status = total_wrong > 0 ? 1 : 0;
  if (info.rank == 0) print_summary(opt, bench, total_wrong);
  if (opt.overhead) {
    const std::vector<Overhead> rows = MeasureOverhead(opt);
    if (info.rank == 0)
      for (const std::string& line : OverheadLines(rows)) std::printf("%s\n", line.c_str());
  }
  if (json) {
    const bool written = write_json(json, opt, info, bench, total_wrong);
    if (fclose(json) != 0 || !written) {
      fprintf(stderr, "mlallreduce_bench: -J: writing '%s' failed\n", opt.json_path.c_str());
      status = 1;
    }
  }
  return status;
}

int bench_main(int argc, char** argv) {
#ifdef MLABENCH_HAVE_SYSALGO
  mlsys::PrepareBeforeInit();  // Open MPI: lets mpi:NAME force coll/tuned's algorithms
#endif
  MPI_Init(&argc, &argv);
  RunInfo info;
  MPI_Comm_rank(MPI_COMM_WORLD, &info.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &info.nranks);

  Options opt;
  std::string error;
  const ParseStatus parsed = parse_options(argc, argv, &opt, &error);
  if (parsed == ParseStatus::kHelp && info.rank == 0) fputs(usage_text(argv[0]).c_str(), stdout);
  if (parsed == ParseStatus::kHelp) return finish(info.rank, 0, "");
  if (parsed == ParseStatus::kError)
    return finish(info.rank, 2, error + "\n(run mlallreduce_bench -h for the options)");
  FILE* json = nullptr;
  if (!open_json(opt, info.rank, &json, &error)) return finish(info.rank, 2, error);
  collect_run_info(argc, argv, opt, &info);

  std::string message;
  std::unique_ptr<MemKind> kind = make_memkind(opt.memory, info.local_rank, info.local_size, &message);
  if (!on_all_ranks(kind != nullptr))
    return finish(info.rank, 1, "-m " + opt.memory + ": " + (message.empty() ? "failed on some rank" : message));
  const int status = measure(opt, info, kind.get(), json, &message);
  kind.reset();
  return finish(info.rank, status, message);
}

}  // namespace
}  // namespace mlabench

int main(int argc, char** argv) { return mlabench::bench_main(argc, argv); }
