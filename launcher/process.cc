// process.cc: posix_spawn helpers and the interrupt guard (process.h).
#include "launcher/process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>

#include "vocab/outside_input.h"

extern char** environ;

namespace multilane {
namespace {

// What a child may print before the rest is dropped (probes print KiB).
constexpr size_t kMaxChildOutputBytes = size_t{64} << 20;

volatile sig_atomic_t g_signal = 0;

// The signals InterruptGuard catches: every one whose default action ends
// the process and that comes from outside it (a key, a closed terminal or
// ssh session, kill, a batch system, a write to a closed pipe) rather than
// from a fault of its own code (SEGV, BUS, ...), plus the real-time ones.
// SIGKILL and SIGSTOP cannot be caught.
std::vector<int> EndingSignals() {
  std::vector<int> sigs = {SIGHUP,  SIGINT,    SIGQUIT, SIGPIPE, SIGALRM, SIGTERM, SIGUSR1,
                           SIGUSR2, SIGVTALRM, SIGPROF, SIGXCPU, SIGXFSZ, SIGPOLL, SIGPWR};
#ifdef SIGSTKFLT
  sigs.push_back(SIGSTKFLT);
#endif
  for (int s = SIGRTMIN; s <= SIGRTMAX; ++s) sigs.push_back(s);
  return sigs;
}

// The actions InterruptGuard replaced, per signal (NSIG entries).
struct sigaction g_old[NSIG];

void OnSignal(int sig) { g_signal = sig; }

std::vector<char*> Argv(const std::vector<std::string>& argv) {
  std::vector<char*> out;
  for (const std::string& a : argv) out.push_back(const_cast<char*>(a.c_str()));
  out.push_back(nullptr);
  return out;
}

}  // namespace

int ExitStatusOf(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 128;
}

namespace {

// SpawnWithPipe; standard input from `stdin_fd` when >= 0, else /dev/null.
int Spawn(const std::vector<std::string>& argv, bool merge_stderr, int stdin_fd, pid_t* pid, int* read_fd) {
  if (argv.empty()) return EINVAL;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return errno;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (stdin_fd >= 0)
    posix_spawn_file_actions_adddup2(&actions, stdin_fd, STDIN_FILENO);
  else
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  if (merge_stderr) posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
  std::vector<char*> args = Argv(argv);
  const int rc = posix_spawnp(pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    return rc;
  }
  *read_fd = fds[0];
  return 0;
}

// The end of RunAndCapture and RunWithInput: the output of child `pid`
// (started with errno `rc`, 0: it runs) from `fd` into *output, then its
// exit status; 127 with *output saying why when it did not start.
int Collect(const std::vector<std::string>& argv, int rc, pid_t pid, int fd, std::string* output) {
  if (rc != 0) {
    *output = "cannot start " + (argv.empty() ? std::string("(nothing)") : argv[0]) + ": " + std::strerror(rc);
    return 127;
  }
  mla::ReadFdBounded(fd, kMaxChildOutputBytes, output);
  close(fd);
  return WaitChild(pid, false);
}

}  // namespace

int SpawnWithPipe(const std::vector<std::string>& argv, bool merge_stderr, pid_t* pid, int* read_fd) {
  return Spawn(argv, merge_stderr, -1, pid, read_fd);
}

int SpawnInheriting(const std::vector<std::string>& argv, pid_t* pid) {
  if (argv.empty()) return EINVAL;
  std::vector<char*> args = Argv(argv);
  return posix_spawnp(pid, args[0], nullptr, nullptr, args.data(), environ);
}

int RunWithInput(const std::vector<std::string>& argv, const std::string& input, std::string* output) {
  output->clear();
  int in[2];
  if (pipe2(in, O_CLOEXEC) != 0) {
    *output = std::string("cannot make a pipe: ") + std::strerror(errno);
    return 127;
  }
  pid_t pid = 0;
  int fd = -1;
  const int rc = Spawn(argv, true, in[0], &pid, &fd);
  close(in[0]);
  // The input is a line or two: it fits in the pipe, so no deadlock with
  // the output read in Collect.
  for (size_t done = 0; rc == 0 && done < input.size();) {
    const ssize_t n = write(in[1], input.data() + done, input.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  close(in[1]);
  return Collect(argv, rc, pid, fd, output);
}

int WaitChild(pid_t pid, bool stop_on_interrupt) {
  int status = 0;
  for (;;) {
    if (stop_on_interrupt && g_signal != 0) return -1;
    const pid_t got = waitpid(pid, &status, 0);
    if (got == pid) return ExitStatusOf(status);
    if (got < 0 && errno != EINTR) return 128;
  }
}

int RunAndCapture(const std::vector<std::string>& argv, std::string* output) {
  output->clear();
  pid_t pid = 0;
  int fd = -1;
  const int rc = SpawnWithPipe(argv, true, &pid, &fd);
  return Collect(argv, rc, pid, fd, output);
}

bool ParseProcessStat(std::string_view text, ProcessStat* out) {
  // "PID (COMM) STATE PPID ..." : COMM may hold ") ", so the last ')' ends it.
  const size_t close = text.rfind(')');
  if (close == std::string_view::npos) return false;
  std::string_view rest = text.substr(close + 1);
  // Fields from 3 (state) on, separated by single spaces; starttime is 22.
  ProcessStat got;
  int field = 2;
  while (!rest.empty()) {
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    size_t end = rest.find_first_of(" \n");
    if (end == std::string_view::npos) end = rest.size();
    const std::string_view word = rest.substr(0, end);
    rest.remove_prefix(end);
    if (word.empty()) break;
    ++field;
    if (field == 3) {
      if (word.size() != 1) return false;
      got.state = word[0];
    } else if (field == 22) {
      uint64_t v = 0;
      for (const char c : word) {
        if (c < '0' || c > '9' || v > (UINT64_MAX - 9) / 10) return false;
        v = v * 10 + static_cast<uint64_t>(c - '0');
      }
      got.start = v;
      *out = got;
      return true;
    }
  }
  return false;
}

bool ReadProcessStat(pid_t pid, ProcessStat* out) {
  if (pid <= 0) return false;
  std::string text;
  const mla::FileRead r =
      mla::ReadFileBounded("/proc/" + std::to_string(pid) + "/stat", 4096, /*refuse_links=*/true, &text);
  return r.outcome == mla::FileRead::Outcome::kRead && ParseProcessStat(text, out);
}

bool ProcessRuns(pid_t pid, uint64_t start) {
  if (pid <= 0) return false;
  ProcessStat st;
  if (ReadProcessStat(pid, &st)) return st.state != 'Z' && st.state != 'X' && (start == 0 || st.start == start);
  if (access("/proc/self/stat", R_OK) == 0) return false;  // /proc is there: no such process
  return kill(pid, 0) == 0 || errno == EPERM;
}

bool ParseProcessUid(std::string_view status, uid_t* uid) {
  // "Uid:\tREAL\tEFFECTIVE\tSAVED\tFS\n": the second number.
  const size_t at = status.find("\nUid:");
  if (at == std::string_view::npos) return false;
  std::string_view rest = status.substr(at + 5);
  for (int field = 0; field < 2; ++field) {
    while (!rest.empty() && (rest.front() == '\t' || rest.front() == ' ')) rest.remove_prefix(1);
    uint64_t v = 0;
    size_t n = 0;
    while (n < rest.size() && rest[n] >= '0' && rest[n] <= '9' && n < 10) v = v * 10 + (rest[n++] - '0');
    if (n == 0 || v > 0xffffffffu) return false;
    rest.remove_prefix(n);
    if (field == 1) *uid = static_cast<uid_t>(v);
  }
  return true;
}

bool ProcessOwner(pid_t pid, uid_t* uid) {
  std::string text;
  if (pid <= 0 ||
      mla::ReadFileBounded("/proc/" + std::to_string(pid) + "/status", 64 << 10, /*refuse_links=*/true, &text)
              .outcome != mla::FileRead::Outcome::kRead)
    return false;
  return ParseProcessUid(text, uid);
}

std::string SelfPath() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "multilane";
  return std::string(buf, static_cast<size_t>(n));
}

InterruptGuard::InterruptGuard() {
  g_signal = 0;
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: blocking reads and waits return EINTR
  for (const int sig : EndingSignals()) {
    if (sigaction(sig, nullptr, &g_old[sig]) != 0) continue;
    // A signal this process was started with ignored (nohup, a shell's
    // background job) stays ignored, and so it does for the children.
    if (g_old[sig].sa_handler == SIG_IGN && !(g_old[sig].sa_flags & SA_SIGINFO)) continue;
    sigaction(sig, &sa, nullptr);
  }
}

InterruptGuard::~InterruptGuard() {
  for (const int sig : EndingSignals()) sigaction(sig, &g_old[sig], nullptr);
}

int InterruptSignal() { return g_signal; }

}  // namespace multilane
