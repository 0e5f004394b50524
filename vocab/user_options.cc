// user_options.cc: parsing of `--multilane[=ITEM,...]` (grammar in user_options.h).
#include "vocab/user_options.h"

#include "vocab/mpi_families.h"
#include "vocab/ranks_per_gpu.h"
#include "vocab/refuse.h"
#include "vocab/terminal_text.h"

namespace mla {

const char* UserOptionsHelp() {
  // The limits and names come from their owners (the ranks-per-GPU rule, the family table).
  static const std::string help =
      "multilane: --multilane[=ITEM,ITEM...] runs the job's MPI_Allreduce through multilane\n"
      "  (no value), auto   the tuned layout and profile of the node type\n"
      "  off                no multilane for this job or step\n"
      "  ranks-per-gpu:N    N tasks per GPU (1-" +
      std::to_string(kMaxRanksPerGpu) +
      ") instead of the tuned number\n"
      "  mpi:FAMILY         the job's MPI (" +
      MpiFamilyChoices() +
      "), when multilane cannot tell it from the\n"
      "                     program (a script, python); it picks that MPI's profile\n"
      "  verbose            say what multilane did; the library prints its settings and counters\n"
      "  report[:DIR]       write the job report (JSON) into DIR (default: the submit directory),\n"
      "                     which must exist (mkdir -p DIR first); read it with `multilane report FILE`\n"
      "  help               print this text\n"
      "  e.g. sbatch --multilane --gpus=2 job.sh; srun --multilane=ranks-per-gpu:2,verbose ./app\n";
  return help.c_str();
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
      if (has_arg && arg.empty())
        return mla::Refuse(error, "--multilane: 'report:' needs a directory after the colon, or write plain 'report'");
    } else if (word == "ranks-per-gpu") {
      if (!ParseRanksPerGpu(arg, &o.ranks_per_gpu))
        return mla::Refuse(error, "--multilane: '" + Excerpt(item) + "' is not valid: write ranks-per-gpu:N with N " +
                                      RanksPerGpuRule());
    } else if (word == "mpi") {
      if (FindMpiFamily(arg) == nullptr) {
        *error =
            "--multilane: '" + Excerpt(item) + "' is not valid: write mpi:FAMILY with FAMILY " + MpiFamilyChoices();
        return false;
      }
      o.mpi = arg;
    } else {
      *error = "--multilane: unknown item '" + Excerpt(item) +
               "': use auto, off, ranks-per-gpu:N, mpi:FAMILY, verbose, report[:DIR] or help (comma-separated)";
      return false;
    }
    if (end == text.size()) break;
  }
  *out = o;
  return true;
}

}  // namespace mla
