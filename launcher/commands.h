// commands.h: the subcommands of `multilane`, one file each.  Each Add*
// registers its subcommand on the app; the callback stores the exit status.
#ifndef MULTILANE_LAUNCHER_COMMANDS_H_
#define MULTILANE_LAUNCHER_COMMANDS_H_

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace multilane {

void AddTuneCommand(CLI::App& app, int* status);       // tune/cmd_tune.cc
void AddRunCommand(CLI::App& app, int* status);        // cmd_run.cc
void AddShowCommand(CLI::App& app, int* status);       // cmd_show.cc
void AddTransferCommands(CLI::App& app, int* status);  // cmd_transfer.cc: export, import
void AddWithdrawCommand(CLI::App& app, int* status);   // cmd_withdraw.cc
void AddDoctorCommand(CLI::App& app, int* status);     // cmd_doctor.cc
void AddReportCommand(CLI::App& app, int* status);     // cmd_report.cc
void AddHistoryCommand(CLI::App& app, int* status);    // cmd_history.cc
void AddResolveCommand(CLI::App& app, int* status);    // cmd_resolve.cc: for the Slurm plugin

// The words after the first "--" of the command line (main.cc sets them).
std::vector<std::string>& TrailingCommand();

}  // namespace multilane

#endif  // MULTILANE_LAUNCHER_COMMANDS_H_
