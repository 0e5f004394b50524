// options.cc: parsing of `--multilane[=ITEM,...]` (grammar in options.h).
#include "options.h"

#include <cerrno>
#include <cstdlib>

namespace multilane_spank {
namespace {

constexpr int kMaxRanksPerGpu = 64;

bool ParsePositive(const std::string& text, int* out) {
  if (text.empty() || text.size() > 6) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  const long v = std::strtol(text.c_str(), nullptr, 10);
  if (v < 1 || v > kMaxRanksPerGpu) return false;
  *out = static_cast<int>(v);
  return true;
}

}  // namespace

const char* UserOptionsHelp() {
  return "multilane: --multilane[=ITEM,ITEM...] runs the job's MPI_Allreduce through multilane\n"
         "  (no value), auto   the tuned layout and profile of the node type\n"
         "  off                no multilane for this job or step\n"
         "  ranks-per-gpu:N    N tasks per GPU (1-64) instead of the tuned number\n"
         "  verbose            say what multilane did; the library prints its settings and counters\n"
         "  report[:DIR]       write the job report (JSON) into DIR (default: the submit directory);\n"
         "                     read it with `multilane report FILE`\n"
         "  help               print this text\n"
         "  e.g. sbatch --multilane --gpus=2 job.sh; srun --multilane=ranks-per-gpu:2,verbose ./app\n";
}

bool ParseUserOptions(const char* value, UserOptions* out, std::string* error) {
  UserOptions o;
  o.given = true;
  o.enabled = true;
  // A bare --multilane given to sbatch reaches the job's sruns through the
  // environment as the text "(null)" (Slurm 22.05).
  std::string text = value ? value : "";
  if (text == "(null)") text.clear();
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(start, end - start);
    start = end + 1;
    const size_t colon = item.find(':');
    const std::string word = item.substr(0, colon);
    const std::string arg = colon == std::string::npos ? "" : item.substr(colon + 1);
    const bool has_arg = colon != std::string::npos;
    if (item.empty() && text.empty()) break;  // bare --multilane
    if (word == "auto" && !has_arg) {
      o.enabled = true;
    } else if (word == "off" && !has_arg) {
      o.enabled = false;
    } else if (word == "help" && !has_arg) {
      o.help = true;
    } else if (word == "verbose" && !has_arg) {
      o.verbose = true;
    } else if (word == "report") {
      o.report = true;
      o.report_dir = arg;
      if (has_arg && arg.empty()) {
        *error = "--multilane: 'report:' needs a directory after the colon, or write plain 'report'";
        return false;
      }
    } else if (word == "ranks-per-gpu") {
      if (!ParsePositive(arg, &o.ranks_per_gpu)) {
        *error = "--multilane: '" + item + "' is not valid: write ranks-per-gpu:N with N from 1 to " +
                 std::to_string(kMaxRanksPerGpu);
        return false;
      }
    } else {
      *error = "--multilane: unknown item '" + item +
               "': use auto, off, ranks-per-gpu:N, verbose, report[:DIR] or help (comma-separated)";
      return false;
    }
    if (end == text.size()) break;
  }
  *out = o;
  return true;
}

}  // namespace multilane_spank
