// process.h: running other programs from the launcher without a shell
// (posix_spawn only), and noticing SIGINT/SIGTERM so that a command can clean
// up (cancel its Slurm jobs, remove its folders) before it ends.
#ifndef MULTILANE_LAUNCHER_PROCESS_H_
#define MULTILANE_LAUNCHER_PROCESS_H_

#include <sys/types.h>

#include <string>
#include <vector>

namespace multilane {

// The exit status of a waited-for child: its exit code, 128 + N when signal N
// killed it.
int ExitStatusOf(int wait_status);

// Runs argv (argv[0] is looked up on PATH) with its standard output and
// error together into *output, standard input from /dev/null, and waits for
// it.  Returns its exit status (ExitStatusOf); 127 with *output saying why
// when it could not be started.  Never runs a shell.
int RunAndCapture(const std::vector<std::string>& argv, std::string* output);

// RunAndCapture with `input` written to the program's standard input (then
// closed) instead of /dev/null: `echo quit | nvidia-cuda-mps-control`
// without a shell.
int RunWithInput(const std::vector<std::string>& argv, const std::string& input, std::string* output);

// Starts argv (looked up on PATH) with its standard output into a new pipe
// whose reading end is *read_fd (close-on-exec); standard error is inherited
// unless `merge_stderr`.  Returns 0, or the errno of the failure (nothing
// left open then).
int SpawnWithPipe(const std::vector<std::string>& argv, bool merge_stderr, pid_t* pid, int* read_fd);

// Starts argv (looked up on PATH) with this process's standard input,
// output and error.  Returns 0, or the errno of the failure.
int SpawnInheriting(const std::vector<std::string>& argv, pid_t* pid);

// Waits for child `pid` and returns its exit status (ExitStatusOf).  When
// `stop_on_interrupt` and an interrupt (InterruptSignal) arrives first,
// returns -1 without reaping it.
int WaitChild(pid_t pid, bool stop_on_interrupt);

// The path of the running executable (/proc/self/exe); "multilane" when
// unknown.
std::string SelfPath();

// While one exists, SIGINT and SIGTERM do not end the process: they are
// recorded (InterruptSignal) and interrupt blocking calls (no SA_RESTART),
// so that the command can clean up and then end with 128 + the signal.  The
// previous handlers come back when it is destroyed.
class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;
};

// The signal recorded since the InterruptGuard was made; 0 when none.
int InterruptSignal();

}  // namespace multilane

#endif  // MULTILANE_LAUNCHER_PROCESS_H_
