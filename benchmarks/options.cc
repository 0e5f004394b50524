// options.cc: parsing of mlallreduce_bench's command line.
#include "benchmarks/options.h"

// The simulation build's smpicxx makes exit() a macro (smpi_helpers.h);
// CLI11 has a member of that name.
#pragma push_macro("exit")
#undef exit
#include <CLI/CLI.hpp>
#pragma pop_macro("exit")
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <functional>
#include <map>

#include "benchmarks/memkind.h"
#include "vocab/algo_names.h"
#include "vocab/byte_size.h"
#include "vocab/refuse.h"

namespace mlabench {
namespace {

// The default -a lists for host and for device memory.
const char kDefaultAlgos[] = "mpi,mpi-best,passthrough,lane,hier,split";
const char kDefaultDeviceAlgos[] = "mpi,mpi-best,mpi-1pg,nccl,lane,hier,split,lane:mpi,split:mpi";

// The names of -t and -o, in the order of the enumerations.
const struct {
  const char* name;
  size_t size;
  MPI_Datatype mpi;
} kTypes[] = {{"float", sizeof(float), MPI_FLOAT},
              {"double", sizeof(double), MPI_DOUBLE},
              {"int32", sizeof(int32_t), MPI_INT32_T},
              {"int64", sizeof(int64_t), MPI_INT64_T}};
const struct {
  const char* name;
  MPI_Op mpi;
} kOps[] = {{"sum", MPI_SUM}, {"prod", MPI_PROD}, {"min", MPI_MIN}, {"max", MPI_MAX}};

// The enumerator whose row of `rows` is named `value`: "" and *out set, else
// why not (`what` names the option's values).
template <typename Enum, typename Row, size_t N>
std::string from_name(const Row (&rows)[N], const char* what, const std::string& value, Enum* out) {
  std::string names;
  for (size_t i = 0; i < N; ++i) {
    if (value == rows[i].name) {
      *out = static_cast<Enum>(i);
      return "";
    }
    names += std::string(i ? ", " : "") + rows[i].name;
  }
  return "unknown " + std::string(what) + " '" + value + "'; use one of " + names;
}

// -b, -e, -c: a byte size (vocab/byte_size.h, the grammar of every part) of
// at least `least` bytes; "" or why not.  `shown` is the option ("-b").
std::string size_value(const std::string& value, const std::string& shown, uint64_t least, uint64_t* out) {
  if (!mla::ParseByteSize(value, out))
    return "'" + value +
           "' is not a size; write bytes as an integer with an optional K, M, G or T suffix (powers of 1024), e.g. " +
           shown + " 4K";
  if (*out < least) return "the size must be at least one element, not 0; e.g. " + shown + " 4K";
  return "";
}

// -f, -l, -w, -n: a decimal integer from lo to hi; "" or why not, saying it
// is not `what` and giving the `rule` and an `example`.
template <typename T>
std::string int_value(const std::string& value, const std::string& shown, long long lo, long long hi, const char* what,
                      const char* rule, const char* example, T* out) {
  char* end = nullptr;
  errno = 0;
  const long long v = strtoll(value.c_str(), &end, 10);
  if (value.empty() || errno != 0 || *end != '\0' || v < lo || v > hi)
    return "'" + value + "' is not " + what + "; give an integer " + rule + ", e.g. " + shown + " " + example;
  *out = static_cast<T>(v);
  return "";
}

// -T: seconds, more than 0 and at most an hour; "" or why not.
std::string seconds_value(const std::string& value, const std::string& shown, double* out) {
  char* end = nullptr;
  errno = 0;
  const double v = strtod(value.c_str(), &end);
  if (value.empty() || *end != '\0' || errno != 0 || !(v > 0) || v > 3600)
    return "'" + value + "' is not a number of seconds; give e.g. " + shown + " 0.5";
  *out = v;
  return "";
}

std::string library_algo_names() {
  std::string names;
  for (int a = 0; a < MLA_ALGO_COUNT; ++a) names += std::string(", ") + mla::AlgoName(static_cast<mla_algo>(a));
  return names;
}

// One entry of -a (`name`, from the whole `list`) into *spec; false with
// *why when it names nothing.
bool parse_algo(const std::string& name, const std::string& list, AlgoSpec* spec, std::string* why) {
  // The entries of -a that are not the library's algorithms (nor mpi:NAME).
  static const std::map<std::string, AlgoSpec::Kind> kWords = {
      {"mpi", AlgoSpec::Kind::kMpi},   {"mpi-best", AlgoSpec::Kind::kMpiBest}, {"mpi-1pg", AlgoSpec::Kind::kMpiPerGpu},
      {"nccl", AlgoSpec::Kind::kNccl}, {"nccl-sync", AlgoSpec::Kind::kNccl},   {"auto", AlgoSpec::Kind::kAuto}};
  const size_t colon = name.find(':');
  const std::string base = name.substr(0, colon);
  const std::string after = colon == std::string::npos ? "" : name.substr(colon + 1);
  spec->name = name;
  if (base == "mpi" && colon != std::string::npos) {
    // mpi:NAME, the system's algorithm NAME (checked against the MPI when the run starts)
    spec->kind = AlgoSpec::Kind::kMpiAlgo;
    spec->system_algo = after;
    if (after.empty() || after.find_first_not_of("abcdefghijklmnopqrstuvwxyz_0123456789") != std::string::npos)
      return mla::Refuse(why, "'" + name + "' does not name a system algorithm; write mpi:NAME, e.g. mpi:ring");
    return true;
  }
  if (colon != std::string::npos && !mla::TransportFromName(after.c_str(), &spec->transport))
    return mla::Refuse(why, "unknown transport in '" + name + "'; write ALGO:TRANSPORT, TRANSPORT one of " +
                                std::string(mla::TransportNames()));
  if (kWords.count(name) != 0) {
    spec->kind = kWords.at(name);
    spec->blocking = name == "nccl-sync";
    return true;
  }
  if (base.empty() || !mla::AlgoFromName(base.c_str(), &spec->algo))
    return mla::Refuse(
        why, (name.empty() ? std::string("empty algorithm name") : "unknown algorithm '" + name + "'") + " in '" +
                 list + "'; give a comma list of: mpi, mpi:NAME, mpi-best, mpi-1pg, nccl, nccl-sync, auto" +
                 library_algo_names() +
                 " (library algorithms take :mpi or :nccl for the transport of device buffers, :shm for host buffers' "
                 "node steps through shared memory)");
  spec->kind = AlgoSpec::Kind::kLibrary;
  spec->name = mla::AlgoName(spec->algo);  // canonical spelling
  if (spec->transport != MLA_TRANSPORT_AUTO) spec->name += std::string(":") + mla::TransportName(spec->transport);
  return true;
}

// -a: the comma list into *out; "" or why not ("-a: ...").
std::string parse_algos(const std::string& list, std::vector<AlgoSpec>* out) {
  const auto blank = [](unsigned char c) { return isspace(c) != 0; };
  out->clear();
  for (size_t pos = 0, comma = 0; comma != std::string::npos; pos = comma + 1) {
    comma = list.find(',', pos);
    std::string name = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    name.erase(std::find_if_not(name.rbegin(), name.rend(), blank).base(), name.end());
    name.erase(name.begin(), std::find_if_not(name.begin(), name.end(), blank));
    AlgoSpec spec;
    std::string why;
    if (!parse_algo(name, list, &spec, &why)) return "-a: " + why;
    for (const AlgoSpec& s : *out)
      if (s.name == spec.name)
        return "-a: algorithm '" + spec.name + "' is listed twice in '" + list + "'; list each once";
    out->push_back(spec);
  }
  return "";
}

// The checks of the options together, after each alone.
std::string check_together(const Options& opt) {
  const auto text = [](uint64_t n) { return std::to_string(n); };
  for (const AlgoSpec& a : opt.algos)
    if (opt.memory == "host" && (a.kind == AlgoSpec::Kind::kMpiPerGpu || a.kind == AlgoSpec::Kind::kNccl))
      return "-a: '" + a.name + "' needs device buffers; add -m cuda or leave it out";
  if (opt.min_bytes > opt.max_bytes)
    return "-b " + text(opt.min_bytes) + " is larger than -e " + text(opt.max_bytes) + "; give -b <= -e";
  const uint64_t esize = type_size(opt.type);
  if (opt.min_bytes < esize)
    return "-b " + text(opt.min_bytes) + " is smaller than one " + type_name(opt.type) + " (" + text(esize) +
           " bytes); give -b " + text(esize) + " or more";
  const uint64_t max_ok = static_cast<uint64_t>(INT_MAX) * esize;
  if (opt.max_bytes > max_ok)
    return "-e " + text(opt.max_bytes) + " needs more than INT_MAX elements of " + type_name(opt.type) +
           " (the MPI count is an int); give -e " + text(max_ok) + " or less, or a larger -t";
  return "";
}

// Reads argv with CLI11 ("-b 4K", "-b4K", "--minbytes 4K", "--minbytes=4K";
// an option given twice: the last) into *opt, the text of -a into *algos,
// and *help.  Returns CLI11's error, or "" and in *refusal the first value
// refused ("-X: why", in the options' alphabetical order) or "".
std::string read_command_line(int argc, char** argv, Options* opt, std::string* algos, bool* help,
                              std::string* refusal) {
  CLI::App app{"mlallreduce_bench"};
  app.set_help_flag();  // -h prints usage_text, not CLI11's own
  app.add_flag("-h,--help", *help);
  app.add_flag("--overhead", opt->overhead);
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  // An option whose value `take` checks and stores: "" or why not.
  const auto add = [&](const char* names, std::function<std::string(const std::string&, const std::string&)> take) {
    const std::string shown = std::string(names).substr(0, 2);
    app.add_option_function<std::string>(names, [refusal, shown, take](const std::string& value) {
      const std::string why = refusal->empty() ? take(value, shown) : "";
      if (!why.empty()) *refusal = shown + ": " + why;
    });
  };
  add("-J,--json", [&](const std::string& v, const std::string& o) {
    opt->json_path = v;
    return v.empty() ? "empty file name; give the JSON file to write, e.g. " + o + " out.json" : "";
  });
  add("-T,--batch_seconds", [&](auto& v, auto& o) { return seconds_value(v, o, &opt->batch_seconds); });
  app.add_option("-a,--algos", *algos);
  add("-b,--minbytes", [&](auto& v, auto& o) { return size_value(v, o, 1, &opt->min_bytes); });
  add("-c,--chunk", [&](auto& v, auto& o) { return size_value(v, o, 0, &opt->chunk_bytes); });
  add("-e,--maxbytes", [&](auto& v, auto& o) { return size_value(v, o, 1, &opt->max_bytes); });
  add("-f,--stepfactor",
      [&](auto& v, auto& o) { return int_value(v, o, 2, 1 << 20, "a step factor", ">= 2", "2", &opt->factor); });
  add("-l,--lanes", [&](auto& v, auto& o) {
    return int_value(v, o, 0, INT_MAX, "a lane count", ">= 0 (0 = all)", "2", &opt->lanes);
  });
  add("-m,--memory", [&](const std::string& v, auto&) {
    std::string why;
    if (memkind_known(v, &why)) opt->memory = v;
    return why;
  });
  add("-n,--iters",
      [&](auto& v, auto& o) { return int_value(v, o, 1, INT_MAX, "an iteration count", ">= 1", "100", &opt->iters); });
  add("-o,--op", [&](auto& v, auto&) { return from_name(kOps, "reduction", v, &opt->op); });
  add("-t,--datatype", [&](auto& v, auto&) { return from_name(kTypes, "type", v, &opt->type); });
  add("-w,--warmup_iters",
      [&](auto& v, auto& o) { return int_value(v, o, 0, INT_MAX, "an iteration count", ">= 0", "10", &opt->warmup); });
  add("-z,--check", [&](const std::string& v, const std::string& o) {
    opt->check = v == "1";
    return v == "0" || v == "1" ? ""
                                : "'" + v + "' is not 0 or 1; use " + o + " 1 to check the results, " + o + " 0 not to";
  });
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return e.what();  // the caller adds the fix: run with -h
  }
  return "";
}

}  // namespace

const char* type_name(DataType t) { return kTypes[static_cast<int>(t)].name; }

size_t type_size(DataType t) { return kTypes[static_cast<int>(t)].size; }

MPI_Datatype mpi_datatype(DataType t) { return kTypes[static_cast<int>(t)].mpi; }

const char* op_name(RedOp op) { return kOps[static_cast<int>(op)].name; }

MPI_Op mpi_op(RedOp op) { return kOps[static_cast<int>(op)].mpi; }

std::string usage_text(const char* argv0) {
  return std::string("usage: ") + argv0 +
         " [options]   (run under mpirun/srun; every rank takes the same options)\n"
         "\n"
         "Times MPI_Allreduce (the system MPI, called through PMPI) and each multilane\n"
         "algorithm of libmlallreduce side by side, size by size, and checks the results.\n"
         "\n"
         "  -b, --minbytes SIZE      smallest message (default 4K)\n"
         "  -e, --maxbytes SIZE      largest message (default 64M)\n"
         "  -f, --stepfactor N       multiply the size by N (>= 2) between steps (default 2)\n"
         "                           SIZE: bytes, optional K, M, G or T suffix (powers of 1024)\n"
         "  -t, --datatype TYPE      float, double, int32 or int64 (default float)\n"
         "  -o, --op OP              sum, prod, min or max (default sum)\n"
         "  -a, --algos LIST         comma list of algorithms (default " +
         kDefaultAlgos +
         ")\n"
         "                           (device memory default: " +
         kDefaultDeviceAlgos +
         ")\n"
         "                           mpi: PMPI_Allreduce directly (the baseline of vs_mpi); for\n"
         "                           device memory staged by hand through pinned host memory\n"
         "                           mpi:NAME: the system MPI with its own algorithm NAME\n"
         "                           forced (Open MPI coll/tuned: ring, rabenseifner, ...;\n"
         "                           MPICH: ring, recursive_doubling, ...)\n"
         "                           mpi-best: per size the fastest of mpi and every mpi:NAME\n"
         "                           (the baseline of vs_best)\n"
         "                           mpi-1pg, nccl: the system MPI (staged) and NCCL with one\n"
         "                           rank per GPU (device memory; other ranks wait); nccl\n"
         "                           queues calls back to back as nccl-tests does, nccl-sync\n"
         "                           waits for each (blocking, like MPI_Allreduce)\n"
         "                           auto: mla_allreduce, as the profile/environment decides\n"
         "                           " +
         library_algo_names().substr(2) +
         ": mla_allreduce_with; ALGO:mpi or ALGO:nccl picks the\n"
         "                           transport between nodes/GPUs for device memory,\n"
         "                           lane:shm and hier:shm the node steps through shared\n"
         "                           memory for host memory\n"
         "  -l, --lanes N            lanes passed in mla_choice (default 0 = all ranks of a node)\n"
         "  -c, --chunk SIZE         chunk_bytes passed in mla_choice (default 0 = library default)\n"
         "  -w, --warmup_iters N     untimed calls before each timed batch (default: iters/10, >= 2)\n"
         "  -n, --iters N            timed calls per size and algorithm (default: scaled to the\n"
         "                           size, 256 MiB per batch, between 20 and 1000)\n"
         "  -z, --check 0|1          validate the results (default 1); the exit status is 1\n"
         "                           when any value is wrong\n"
         "  -J, --json FILE          also write the run and its results as JSON (rank 0)\n"
         "  --overhead               after the table, the library's own cost per call at each size:\n"
         "                           ns beyond PMPI_Allreduce of passthrough and auto, on\n"
         "                           MPI_COMM_SELF with host buffers (no other rank waited for)\n"
         "  -m, --memory KIND        where the buffers live: " +
         memkind_list() +
         " (default host)\n"
         "  -T, --batch_seconds S    cap each timed batch at about S seconds (iterations from the\n"
         "                           checked call's time, at least 3); default off\n"
         "  -h, --help               print this help\n"
         "\n"
         "Columns: size (bytes), count (elements), type, redop, algo, time_us (max over ranks\n"
         "of the mean time per call), algbw = size/time (GB/s), busbw = algbw*2(n-1)/n,\n"
         "#wrong (wrong or rank-divergent elements, all ranks), vs_mpi = busbw / busbw of mpi,\n"
         "vs_best = busbw / busbw of mpi-best, vs_bound = the node's memory bound / time_us\n"
         "(host memory).\n"
         "See docs/mlallreduce_bench.md.\n";
}

ParseStatus parse_options(int argc, char** argv, Options* opt, std::string* error) {
  std::string algos, refusal;
  bool help = false;
  *error = read_command_line(argc, argv, opt, &algos, &help, &refusal);
  if (error->empty() && help) return ParseStatus::kHelp;  // whatever the values
  if (error->empty()) *error = refusal;
  opt->algos_default = algos.empty();
  if (algos.empty()) algos = opt->memory == "host" ? kDefaultAlgos : kDefaultDeviceAlgos;
  if (error->empty()) *error = parse_algos(algos, &opt->algos);
  if (error->empty()) *error = check_together(*opt);
  return error->empty() ? ParseStatus::kRun : ParseStatus::kError;
}

int iters_for(const Options& opt, uint64_t bytes) {
  // 256 MiB moved per timed batch, between 20 and 1000 calls
  return opt.iters > 0
             ? opt.iters
             : static_cast<int>(std::clamp<uint64_t>((256ull << 20) / std::max<uint64_t>(bytes, 1), 20, 1000));
}

int warmup_for(const Options& opt, int iters) { return opt.warmup >= 0 ? opt.warmup : std::max(2, iters / 10); }

}  // namespace mlabench
