// process.h: running other programs from the launcher without a shell
// (posix_spawn only), and noticing the signals that would end it (SIGINT,
// SIGTERM, SIGHUP, ...) so that a command can clean up (cancel its Slurm
// jobs, stop its MPS daemon, remove its folders) before it ends.
#ifndef MULTILANE_LAUNCHER_PROCESS_H_
#define MULTILANE_LAUNCHER_PROCESS_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
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

// What /proc/PID/stat says of a process: its state letter and its start
// time (clock ticks after boot), which with the pid names one process even
// after the pid is reused.
struct ProcessStat {
  char state = '?';    // R, S, D, Z (a zombie: it has ended), ...
  uint64_t start = 0;  // field 22, starttime
};

// Pure: parses the text of /proc/PID/stat (the command name in parentheses
// may hold spaces and parentheses); false when it does not have the fields.
bool ParseProcessStat(std::string_view text, ProcessStat* out);

// Reads /proc/`pid`/stat (bounded); false when there is no such process (or
// no /proc).
bool ReadProcessStat(pid_t pid, ProcessStat* out);

// Whether the process `pid` that started at `start` (ProcessStat::start; 0:
// any) still runs: a zombie has ended, and a pid reused by a later process
// is not the same process.  Without /proc, kill(pid, 0) decides.
bool ProcessRuns(pid_t pid, uint64_t start);

// Pure: the effective uid in the text of /proc/PID/status (its "Uid:"
// line); false when there is none.
bool ParseProcessUid(std::string_view status, uid_t* uid);

// The effective uid of process `pid` (/proc/PID/status: the owner of
// /proc/PID is root for a process that changed its uid); false when there
// is no such process (or no /proc).
bool ProcessOwner(pid_t pid, uid_t* uid);

// The path of the running executable (/proc/self/exe); "multilane" when
// unknown.
std::string SelfPath();

// While one exists, no signal that can be caught ends the process: SIGHUP
// (a closed terminal, a dropped ssh session), SIGINT, SIGQUIT, SIGTERM,
// SIGPIPE, SIGUSR1/2, SIGALRM, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF, SIGPOLL,
// SIGPWR and the real-time signals are recorded (InterruptSignal) and
// interrupt blocking calls (no SA_RESTART), so that the command can clean up
// and then end with 128 + the signal.  A signal the process was started with
// ignored (nohup) stays ignored.  The previous actions come back when it is
// destroyed.  (SIGKILL cannot be caught: what it leaves, the next run finds;
// mps_leftover.h.)
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
