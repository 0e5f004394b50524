// command_line.h: how `multilane run` hands the library and its profile to
// the ranks of a launch command.
#ifndef MULTILANE_LAUNCHER_COMMAND_LINE_H_
#define MULTILANE_LAUNCHER_COMMAND_LINE_H_

#include <string>
#include <vector>

namespace multilane {

enum class LauncherKind { kOpenMpi, kSrun, kOther };

// What runs the ranks: mpirun/mpiexec/orterun (Open MPI: the environment
// reaches remote ranks only through -x), srun (exports the environment by
// default) or anything else (a single process, a wrapper script).
LauncherKind ClassifyLauncher(const std::string& argv0);

// Returns the command with what the ranks need to see of `variables` (names
// of environment variables the caller has set): for Open MPI "-x NAME" after
// the launcher's own name, for the others the command unchanged.
std::vector<std::string> ForwardVariables(const std::vector<std::string>& command,
                                          const std::vector<std::string>& variables);

}  // namespace multilane

#endif  // MULTILANE_LAUNCHER_COMMAND_LINE_H_
