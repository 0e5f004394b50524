#include "command_line.h"

namespace multilane {

LauncherKind ClassifyLauncher(const std::string& argv0) {
  const size_t slash = argv0.rfind('/');
  const std::string name = slash == std::string::npos ? argv0 : argv0.substr(slash + 1);
  if (name == "mpirun" || name == "mpiexec" || name == "orterun" || name == "mpirun.openmpi" ||
      name == "mpiexec.openmpi")
    return LauncherKind::kOpenMpi;
  if (name == "srun") return LauncherKind::kSrun;
  return LauncherKind::kOther;
}

std::vector<std::string> ForwardVariables(const std::vector<std::string>& command,
                                          const std::vector<std::string>& variables) {
  if (command.empty() || ClassifyLauncher(command[0]) != LauncherKind::kOpenMpi) return command;
  std::vector<std::string> out{command[0]};
  for (const std::string& name : variables) {
    out.push_back("-x");
    out.push_back(name);
  }
  out.insert(out.end(), command.begin() + 1, command.end());
  return out;
}

}  // namespace multilane
