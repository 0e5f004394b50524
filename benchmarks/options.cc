// options.cc: parsing of mlallreduce_bench's command line.
#include "benchmarks/options.h"

// The simulation build's smpicxx makes exit() a macro (smpi_helpers.h);
// CLI11 has a member of that name.
#pragma push_macro("exit")
#undef exit
#include <CLI/CLI.hpp>
#pragma pop_macro("exit")
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <map>

#include "benchmarks/memkind.h"
#include "vocab/byte_size.h"

namespace mlabench {

const char kDefaultAlgos[] = "mpi,mpi-best,passthrough,lane,hier,split";
const char kDefaultDeviceAlgos[] = "mpi,mpi-best,mpi-1pg,nccl,lane,hier,split,lane:mpi,split:mpi";

namespace {

// The options: short letter and long name (nccl-tests spelling where there
// is one), as CLI11 is given them; every one takes a value.
const std::pair<char, const char*> kOptNames[] = {
    {'b', "-b,--minbytes"},     {'e', "-e,--maxbytes"},      {'f', "-f,--stepfactor"}, {'t', "-t,--datatype"},
    {'o', "-o,--op"},           {'a', "-a,--algos"},         {'l', "-l,--lanes"},      {'c', "-c,--chunk"},
    {'w', "-w,--warmup_iters"}, {'n', "-n,--iters"},         {'z', "-z,--check"},      {'J', "-J,--json"},
    {'m', "-m,--memory"},       {'T', "-T,--batch_seconds"},
};

bool parse_int(const std::string& text, long long lo, long long hi, long long* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  long long v = strtoll(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || v < lo || v > hi) return false;
  *out = v;
  return true;
}

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

std::string library_algo_names() {
  std::string names;
  for (int a = 0; a < MLA_ALGO_COUNT; ++a) {
    names += ", ";
    names += mla_algo_name(static_cast<mla_algo>(a));
  }
  return names;
}

bool parse_algos(const std::string& list, std::vector<AlgoSpec>* out, std::string* error) {
  // The entries of -a that are not the library's algorithms (nor mpi:NAME).
  const std::map<std::string, AlgoSpec::Kind> kWords = {
      {"mpi", AlgoSpec::Kind::kMpi},   {"mpi-best", AlgoSpec::Kind::kMpiBest}, {"mpi-1pg", AlgoSpec::Kind::kMpiPerGpu},
      {"nccl", AlgoSpec::Kind::kNccl}, {"nccl-sync", AlgoSpec::Kind::kNccl},   {"auto", AlgoSpec::Kind::kAuto}};
  out->clear();
  size_t pos = 0;
  while (true) {
    size_t comma = list.find(',', pos);
    std::string name = trim(list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
    AlgoSpec spec;
    spec.name = name;
    mla_algo algo;
    const size_t colon = name.find(':');
    const std::string base = name.substr(0, colon);
    mla_transport transport = MLA_TRANSPORT_AUTO;
    if (base == "mpi" && colon != std::string::npos) {
      // mpi:NAME, the system's algorithm NAME (checked against the MPI when the run starts)
      spec.kind = AlgoSpec::Kind::kMpiAlgo;
      spec.system_algo = name.substr(colon + 1);
      if (spec.system_algo.empty() ||
          spec.system_algo.find_first_not_of("abcdefghijklmnopqrstuvwxyz_0123456789") != std::string::npos) {
        *error = "-a: '" + name + "' does not name a system algorithm; write mpi:NAME, e.g. mpi:ring";
        return false;
      }
    } else if (colon != std::string::npos && !mla_transport_from_name(name.substr(colon + 1).c_str(), &transport)) {
      *error = "-a: unknown transport in '" + name + "'; write ALGO:auto, ALGO:mpi or ALGO:nccl";
      return false;
    }
    if (spec.kind == AlgoSpec::Kind::kMpiAlgo) {
      // parsed above
    } else if (kWords.count(name) != 0) {
      spec.kind = kWords.at(name);
      spec.blocking = name == "nccl-sync";
    } else if (!base.empty() && mla_algo_from_name(base.c_str(), &algo)) {
      spec.kind = AlgoSpec::Kind::kLibrary;
      spec.algo = algo;
      spec.transport = transport;
      spec.name = mla_algo_name(algo);  // canonical spelling
      if (transport != MLA_TRANSPORT_AUTO) spec.name += std::string(":") + mla_transport_name(transport);
    } else {
      *error = "-a: " + (name.empty() ? std::string("empty algorithm name") : "unknown algorithm '" + name + "'") +
               " in '" + list + "'; give a comma list of: mpi, mpi:NAME, mpi-best, mpi-1pg, nccl, nccl-sync, auto" +
               library_algo_names() + " (library algorithms take :mpi or :nccl for the transport of device buffers)";
      return false;
    }
    for (const AlgoSpec& s : *out) {
      if (s.name == spec.name) {
        *error = "-a: algorithm '" + spec.name + "' is listed twice in '" + list + "'; list each once";
        return false;
      }
    }
    out->push_back(spec);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return true;
}

}  // namespace

namespace {

// The names of -t and -o, in the order of the enumerations.
const char* const kTypeNames[] = {"float", "double", "int32", "int64"};
const size_t kTypeSizes[] = {sizeof(float), sizeof(double), sizeof(int32_t), sizeof(int64_t)};
const char* const kOpNames[] = {"sum", "prod", "min", "max"};

// The enumerator whose name in `names` is `value`; false when none is.
template <typename Enum, size_t N>
bool from_name(const char* const (&names)[N], const std::string& value, Enum* out) {
  for (size_t i = 0; i < N; ++i)
    if (value == names[i]) {
      *out = static_cast<Enum>(i);
      return true;
    }
  return false;
}

}  // namespace

const char* type_name(DataType t) { return kTypeNames[static_cast<int>(t)]; }

size_t type_size(DataType t) { return kTypeSizes[static_cast<int>(t)]; }

const char* op_name(RedOp op) { return kOpNames[static_cast<int>(op)]; }

std::string usage_text(const char* argv0) {
  std::string s;
  s += "usage: ";
  s += argv0;
  s += " [options]   (run under mpirun/srun; every rank takes the same options)\n"
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
       "  -a, --algos LIST         comma list of algorithms (default ";
  s += kDefaultAlgos;
  s += ")\n"
       "                           (device memory default: ";
  s += kDefaultDeviceAlgos;
  s += ")\n"
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
       "                           ";
  s += library_algo_names().substr(2);
  s += ": mla_allreduce_with; ALGO:mpi or ALGO:nccl picks the\n"
       "                           transport between nodes/GPUs for device memory\n"
       "  -l, --lanes N            lanes passed in mla_choice (default 0 = all ranks of a node)\n"
       "  -c, --chunk SIZE         chunk_bytes passed in mla_choice (default 0 = library default)\n"
       "  -w, --warmup_iters N     untimed calls before each timed batch (default: iters/10, >= 2)\n"
       "  -n, --iters N            timed calls per size and algorithm (default: scaled to the\n"
       "                           size, 256 MiB per batch, between 20 and 1000)\n"
       "  -z, --check 0|1          validate the results (default 1); the exit status is 1\n"
       "                           when any value is wrong\n"
       "  -J, --json FILE          also write the run and its results as JSON (rank 0)\n"
       "  -m, --memory KIND        where the buffers live: ";
  s += memkind_list();
  s += " (default host)\n"
       "  -T, --batch_seconds S    cap each timed batch at about S seconds (iterations from the\n"
       "                           checked call's time, at least 3); default off\n"
       "  -h, --help               print this help\n"
       "\n"
       "Columns: size (bytes), count (elements), type, redop, algo, time_us (max over ranks\n"
       "of the mean time per call), algbw = size/time (GB/s), busbw = algbw*2(n-1)/n,\n"
       "#wrong (wrong or rank-divergent elements, all ranks), vs_mpi = busbw / busbw of mpi.\n"
       "See docs/mlallreduce_bench.md.\n";
  return s;
}

namespace {

// Reads argv with CLI11 ("-b 4K", "-b4K", "--minbytes 4K", "--minbytes=4K";
// an option given twice: the last) into *given, the text of each option
// given by its letter, and *help.  On a bad command line sets *error.
bool read_command_line(int argc, char** argv, std::map<char, std::string>* given, bool* help, std::string* error) {
  CLI::App app{"mlallreduce_bench"};
  app.set_help_flag();  // -h prints usage_text, not CLI11's own
  app.add_flag("-h,--help", *help);
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  std::map<char, CLI::Option*> options;
  for (const auto& [letter, names] : kOptNames) options[letter] = app.add_option(names, (*given)[letter]);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    *error = e.what();  // the caller adds the fix: run with -h
    return false;
  }
  for (const auto& [letter, option] : options)
    if (option->count() == 0) given->erase(letter);
  return true;
}

// -b, -e, -c: a byte size (vocab/byte_size.h, the grammar of every part).
bool apply_size(char letter, const std::string& value, Options* opt, std::string* error) {
  const std::string shown = std::string("-") + letter;
  uint64_t bytes = 0;
  if (!mla::ParseByteSize(value, &bytes)) {
    *error = shown + ": '" + value +
             "' is not a size; write bytes as an integer with an optional K, M, G or T suffix "
             "(powers of 1024), e.g. " +
             shown + " 4K";
    return false;
  }
  if (letter == 'c') {
    opt->chunk_bytes = bytes;
  } else if (bytes == 0) {
    *error = shown + ": the size must be at least one element, not 0; e.g. " + shown + " 4K";
    return false;
  } else {
    (letter == 'b' ? opt->min_bytes : opt->max_bytes) = bytes;
  }
  return true;
}

// -f, -l, -w, -n, -T: numbers.
bool apply_number(char letter, const std::string& value, Options* opt, std::string* error) {
  const std::string shown = std::string("-") + letter;
  long long n = 0;
  switch (letter) {
    case 'f':
      if (!parse_int(value, 2, 1 << 20, &n)) {
        *error = shown + ": '" + value + "' is not a step factor; give an integer >= 2, e.g. " + shown + " 2";
        return false;
      }
      opt->factor = static_cast<uint64_t>(n);
      return true;
    case 'l':
      if (!parse_int(value, 0, INT_MAX, &n)) {
        *error = shown + ": '" + value + "' is not a lane count; give an integer >= 0 (0 = all), e.g. " + shown + " 2";
        return false;
      }
      opt->lanes = static_cast<int>(n);
      return true;
    case 'w':
    case 'n':
      if (!parse_int(value, letter == 'n' ? 1 : 0, INT_MAX, &n)) {
        *error = shown + ": '" + value +
                 "' is not an iteration count; give an integer >= " + (letter == 'n' ? "1" : "0") + ", e.g. " + shown +
                 (letter == 'n' ? " 100" : " 10");
        return false;
      }
      (letter == 'n' ? opt->iters : opt->warmup) = static_cast<int>(n);
      return true;
    default: {  // 'T'
      char* end = nullptr;
      errno = 0;
      const double v = strtod(value.c_str(), &end);
      if (value.empty() || *end != '\0' || errno != 0 || !(v > 0) || v > 3600) {
        *error = shown + ": '" + value + "' is not a number of seconds; give e.g. " + shown + " 0.5";
        return false;
      }
      opt->batch_seconds = v;
      return true;
    }
  }
}

// -t, -o, -z, -J, -m: words.
bool apply_word(char letter, const std::string& value, Options* opt, std::string* error) {
  const std::string shown = std::string("-") + letter;
  std::string why;
  if (letter == 't') {
    if (!from_name(kTypeNames, value, &opt->type))
      why = "unknown type '" + value + "'; use one of float, double, int32, int64";
  } else if (letter == 'o') {
    if (!from_name(kOpNames, value, &opt->op))
      why = "unknown reduction '" + value + "'; use one of sum, prod, min, max";
  } else if (letter == 'z') {
    if (value == "0" || value == "1")
      opt->check = value == "1";
    else
      why = "'" + value + "' is not 0 or 1; use " + shown + " 1 to check the results, " + shown + " 0 not to";
  } else if (letter == 'J') {
    if (!value.empty())
      opt->json_path = value;
    else
      why = "empty file name; give the JSON file to write, e.g. " + shown + " out.json";
  } else if (letter == 'm' && memkind_known(value, &why)) {
    opt->memory = value;
  }
  if (why.empty()) return true;
  *error = shown + ": " + why;
  return false;
}

}  // namespace

ParseStatus parse_options(int argc, char** argv, Options* opt, std::string* error) {
  std::map<char, std::string> given;
  bool help = false;
  if (!read_command_line(argc, argv, &given, &help, error)) return ParseStatus::kError;
  if (help) return ParseStatus::kHelp;
  for (const auto& [letter, value] : given) {
    const bool ok = letter == 'a'                  ? true
                    : std::strchr("bec", letter)   ? apply_size(letter, value, opt, error)
                    : std::strchr("flwnT", letter) ? apply_number(letter, value, opt, error)
                                                   : apply_word(letter, value, opt, error);
    if (!ok) return ParseStatus::kError;
  }
  std::string algos_text = given.count('a') != 0 ? given['a'] : "";
  opt->algos_default = algos_text.empty();
  if (algos_text.empty()) algos_text = opt->memory == "host" ? kDefaultAlgos : kDefaultDeviceAlgos;
  if (!parse_algos(algos_text, &opt->algos, error)) return ParseStatus::kError;
  if (opt->memory == "host") {
    for (const AlgoSpec& a : opt->algos) {
      if (a.kind == AlgoSpec::Kind::kMpiPerGpu || a.kind == AlgoSpec::Kind::kNccl) {
        *error = "-a: '" + a.name + "' needs device buffers; add -m cuda or leave it out";
        return ParseStatus::kError;
      }
    }
  }
  if (opt->min_bytes > opt->max_bytes) {
    *error = "-b " + std::to_string(opt->min_bytes) + " is larger than -e " + std::to_string(opt->max_bytes) +
             "; give -b <= -e";
    return ParseStatus::kError;
  }
  const uint64_t esize = type_size(opt->type);
  if (opt->min_bytes < esize) {
    *error = "-b " + std::to_string(opt->min_bytes) + " is smaller than one " + type_name(opt->type) + " (" +
             std::to_string(esize) + " bytes); give -b " + std::to_string(esize) + " or more";
    return ParseStatus::kError;
  }
  const uint64_t max_ok = static_cast<uint64_t>(INT_MAX) * esize;
  if (opt->max_bytes > max_ok) {
    *error = "-e " + std::to_string(opt->max_bytes) + " needs more than INT_MAX elements of " + type_name(opt->type) +
             " (the MPI count is an int); give -e " + std::to_string(max_ok) + " or less, or a larger -t";
    return ParseStatus::kError;
  }
  return ParseStatus::kRun;
}

int iters_for(const Options& opt, uint64_t bytes) {
  if (opt.iters > 0) return opt.iters;
  const uint64_t kBatchBytes = 256ull << 20;  // data moved per timed batch
  const uint64_t kMin = 20, kMax = 1000;
  uint64_t n = bytes ? kBatchBytes / bytes : kMax;
  if (n < kMin) n = kMin;
  if (n > kMax) n = kMax;
  return static_cast<int>(n);
}

int warmup_for(const Options& opt, int iters) {
  if (opt.warmup >= 0) return opt.warmup;
  int w = iters / 10;
  return w < 2 ? 2 : w;
}

}  // namespace mlabench
