// main.cc: `multilane`, the command of the multilane project: git-style
// subcommands, each in its own file (commands.h).
#include <CLI/CLI.hpp>

#include <iterator>
#include <string>
#include <vector>

#include "launcher/commands.h"
#include "launcher/context.h"

int main(int argc, char** argv) {
  CLI::App app{
      "multilane: tuned multi-lane MPI_Allreduce.\n"
      "Tune a node type once (multilane tune), then run jobs with the tuned profile (multilane run)."};
  app.require_subcommand(1, 1);
  app.set_version_flag("--version", multilane::LibraryVersion());
  int status = 0;
  multilane::AddTuneCommand(app, &status);
  multilane::AddRunCommand(app, &status);
  multilane::AddShowCommand(app, &status);
  multilane::AddTransferCommands(app, &status);
  multilane::AddWithdrawCommand(app, &status);
  multilane::AddDoctorCommand(app, &status);
  multilane::AddReportCommand(app, &status);
  multilane::AddHistoryCommand(app, &status);
  multilane::AddResolveCommand(app, &status);
  // Everything after the first "--" is the command `multilane run` starts,
  // untouched by the parser (CLI11 would take its words as options).
  std::vector<std::string> args;
  for (int i = argc - 1; i > 0; --i) args.push_back(argv[i]);  // CLI11 wants them reversed
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--") {
      multilane::TrailingCommand().assign(argv + i + 1, argv + argc);
      args.assign(std::make_reverse_iterator(argv + i), std::make_reverse_iterator(argv + 1));
      break;
    }
  }
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  return status;
}
