// user_options.h: the grammar of the user's option `--multilane[=ITEM,ITEM...]`,
// the one parser of it: the Slurm plugin parses it, and its cli_filter gets
// the same answer from `multilane resolve --options VALUE`.
//
//   (no value) | auto     the tuned layout and profile of the node type
//   off                   no multilane for this job or step
//   ranks-per-gpu:N       N tasks per GPU instead of the tuned number
//   mpi:FAMILY            the job's MPI (openmpi, mpich): whose profile to use,
//                         when the program does not say so itself
//   verbose               the plugin says what it did; the library prints its
//                         settings at MPI_Init and its counters at MPI_Finalize
//   report[:DIR]          the library writes the job report into DIR
//                         (default: the job's submit directory)
//   help                  prints this grammar and exits
//
// Pure logic: no Slurm calls, so the unit tests run without Slurm.
#ifndef MLVOCAB_USER_OPTIONS_H_
#define MLVOCAB_USER_OPTIONS_H_

#include <string>

namespace mla {

struct UserOptions {
  bool given = false;    // the option was on the command line or in the environment
  bool enabled = false;  // multilane runs for this job (after `off` and defaults)
  bool help = false;
  int ranks_per_gpu = 0;  // 0: the tuned number
  std::string mpi;        // "": found from the program (or the one family tuned); else a family name
  bool verbose = false;
  bool report = false;
  std::string report_dir;  // "" with report: the submit directory
};

// Parses the option's value (nullptr or "" for a bare `--multilane`) into
// *out and returns true, or returns false and sets *error to one line naming
// the bad item and the accepted forms.  Later items override earlier ones.
bool ParseUserOptions(const char* value, UserOptions* out, std::string* error);

// The text `--multilane=help` prints.
const char* UserOptionsHelp();

}  // namespace mla

#endif  // MLVOCAB_USER_OPTIONS_H_
