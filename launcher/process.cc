// process.cc: posix_spawn helpers and the interrupt guard (process.h).
#include "process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

#include "vocab/outside_input.h"

extern char** environ;

namespace multilane {
namespace {

// What a child may print before the rest is dropped (probes print KiB).
constexpr size_t kMaxChildOutputBytes = size_t{64} << 20;

volatile sig_atomic_t g_signal = 0;
struct sigaction g_old_int, g_old_term;

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
  if (stdin_fd >= 0) posix_spawn_file_actions_adddup2(&actions, stdin_fd, STDIN_FILENO);
  else posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
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
  if (rc != 0) {
    close(in[1]);
    *output = "cannot start " + argv[0] + ": " + std::strerror(rc);
    return 127;
  }
  // The input is a line or two: it fits in the pipe, so no deadlock with
  // the output read below.
  size_t done = 0;
  while (done < input.size()) {
    const ssize_t n = write(in[1], input.data() + done, input.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  close(in[1]);
  mldb::ReadFdBounded(fd, kMaxChildOutputBytes, output);
  close(fd);
  return WaitChild(pid, false);
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
  if (rc != 0) {
    *output = "cannot start " + (argv.empty() ? std::string("(nothing)") : argv[0]) + ": " + std::strerror(rc);
    return 127;
  }
  mldb::ReadFdBounded(fd, kMaxChildOutputBytes, output);
  close(fd);
  return WaitChild(pid, false);
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
  sigaction(SIGINT, &sa, &g_old_int);
  sigaction(SIGTERM, &sa, &g_old_term);
}

InterruptGuard::~InterruptGuard() {
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
}

int InterruptSignal() { return g_signal; }

}  // namespace multilane
