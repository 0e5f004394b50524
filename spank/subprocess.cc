// subprocess.cc: fork/exec with a clean environment, dropped ids and a time
// limit (subprocess.h).
#include "spank/subprocess.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace multilane_spank {
namespace {

constexpr size_t kMaxOutput = 1 << 20;
constexpr size_t kMaxErrors = 4096;

// The first non-empty line of `text`, without control characters, at most
// 300 bytes.
std::string FirstLine(const std::string& text) {
  std::string line;
  for (char c : text) {
    if (c == '\n') {
      if (!line.empty()) break;
      continue;
    }
    if (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f) line += c;
    if (line.size() >= 300) break;
  }
  return line;
}

double Now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

// The pipes of one run: the program's input (only when there is some), its
// output, its standard error (the start kept, to explain a failure such as
// the loader's "error while loading shared libraries" before main()), and
// exec's own failure (errno; the pipe closes on success).  Every end still
// open is closed when the object goes: one cleanup path.
struct Pipes {
  int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1}, exec_errno[2] = {-1, -1};
  Pipes() = default;
  Pipes(const Pipes&) = delete;
  Pipes& operator=(const Pipes&) = delete;
  ~Pipes() {
    for (int* fd : {&in[0], &in[1], &out[0], &out[1], &err[0], &err[1], &exec_errno[0], &exec_errno[1]}) Close(fd);
  }
  static void Close(int* fd) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
  }
  // Opens them; small inputs (a command word) fit in the pipe's buffer and
  // are written now.  "" on success, else what failed.
  std::string Open(const std::string& input) {
    if (!input.empty()) {
      if (pipe2(in, O_CLOEXEC) != 0 || input.size() > 4096 ||
          write(in[1], input.data(), input.size()) != static_cast<ssize_t>(input.size()))
        return "cannot prepare the program's input";
      Close(&in[1]);
    }
    for (int* p : {out, err, exec_errno})
      if (pipe2(p, O_CLOEXEC) != 0) return std::string("pipe: ") + std::strerror(errno);
    return "";
  }
};

// Slurm may run us with standard descriptors closed: keep the pipes off 0-2,
// so that the child's dup2 onto them cannot be a no-op that leaves
// close-on-exec set.
void OccupyStandardDescriptors() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (fcntl(fd, F_GETFD) == -1) {
      const int opened = open("/dev/null", O_RDWR);
      if (opened >= 0 && opened != fd) close(opened);
    }
  }
}

// In the child, after fork: async-signal-safe calls only.  Never returns.
[[noreturn]] void BecomeProgram(const Pipes& p, char* const* args, char* const* envp, uid_t uid, gid_t gid) {
  setpgid(0, 0);
  const int devnull = open("/dev/null", O_RDWR);
  if (devnull >= 0) dup2(p.in[0] >= 0 ? p.in[0] : devnull, STDIN_FILENO);
  dup2(p.err[1], STDERR_FILENO);
  dup2(p.out[1], STDOUT_FILENO);
  if (gid != static_cast<gid_t>(-1)) {
    setgroups(0, nullptr);  // allowed only with privilege; harmless otherwise
    if (setresgid(gid, gid, gid) != 0) _exit(126);
  }
  if (uid != static_cast<uid_t>(-1)) {
    if (setresuid(uid, uid, uid) != 0) _exit(126);
  }
  execve(args[0], args, envp);
  const int e = errno;
  if (write(p.exec_errno[1], &e, sizeof e) < 0) {
  }
  _exit(127);
}

// Reads the child's output and errors (each up to its bound) until both
// close or `timeout_s` passes; true when the time ran out.
bool Collect(const Pipes& pipes, int timeout_s, std::string* output, std::string* errors) {
  const double deadline = Now() + timeout_s;
  char buf[4096];
  bool open_[2] = {true, true};
  while (open_[0] || open_[1]) {
    const double left = deadline - Now();
    if (left <= 0) return true;
    pollfd p[2] = {{open_[0] ? pipes.out[0] : -1, POLLIN, 0}, {open_[1] ? pipes.err[0] : -1, POLLIN, 0}};
    const int n = poll(p, 2, static_cast<int>(left * 1000) + 1);
    if (n <= 0) continue;  // EINTR or nothing yet
    for (int i = 0; i < 2; ++i) {
      if (p[i].fd < 0 || p[i].revents == 0) continue;
      const ssize_t got = read(p[i].fd, buf, sizeof buf);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        open_[i] = false;
        continue;
      }
      std::string& into = i == 0 ? *output : *errors;
      if (into.size() < (i == 0 ? kMaxOutput : kMaxErrors)) into.append(buf, static_cast<size_t>(got));
    }
  }
  return false;
}

// How the run ended, from its wait status, exec's errno (when exec failed)
// and the start of its standard error.
void Judge(int status, bool timed_out, int timeout_s, bool exec_failed, int exec_error, const std::string& errors,
           SubprocessResult* r) {
  r->error_line = FirstLine(errors);
  if (timed_out) {
    r->error = "timed out after " + std::to_string(timeout_s) + " s";
  } else if (WIFSIGNALED(status)) {
    r->error = std::string("killed by signal ") + std::to_string(WTERMSIG(status));
  } else if (exec_failed) {
    r->error = std::string("could not be started: ") + std::strerror(exec_error);
  } else if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
    // It was executed, and the loader (or it) gave up before running.
    r->error =
        "could not be started (exit status 127" + (r->error_line.empty() ? std::string(")") : "): " + r->error_line);
  } else if (WIFEXITED(status)) {
    r->ran = true;
    r->exit_status = WEXITSTATUS(status);
  }
}

}  // namespace

SubprocessResult RunCapture(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
                            uid_t uid, gid_t gid, int timeout_s, const std::string& input) {
  SubprocessResult r;
  if (argv.empty() || argv[0].empty() || argv[0][0] != '/') {
    r.error = "not an absolute program path";
    return r;
  }
  OccupyStandardDescriptors();
  // Everything the child needs is built before fork.
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (std::string& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  Pipes pipes;
  r.error = pipes.Open(input);
  if (!r.error.empty()) return r;
  const pid_t pid = fork();
  if (pid < 0) {
    r.error = std::string("fork: ") + std::strerror(errno);
    return r;
  }
  if (pid == 0) BecomeProgram(pipes, args.data(), envp.data(), uid, gid);
  for (int* fd : {&pipes.out[1], &pipes.err[1], &pipes.exec_errno[1], &pipes.in[0]}) Pipes::Close(fd);
  std::string errors;
  const bool timed_out = Collect(pipes, timeout_s, &r.output, &errors);
  Pipes::Close(&pipes.out[0]);
  Pipes::Close(&pipes.err[0]);
  if (timed_out) {
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  int exec_error = 0;  // read after the child ended: never blocks
  const bool exec_failed = read(pipes.exec_errno[0], &exec_error, sizeof exec_error) == sizeof exec_error;
  Judge(status, timed_out, timeout_s, exec_failed, exec_error, errors, &r);
  return r;
}

std::map<std::string, std::string> ParseKeyValueLines(const std::string& text) {
  std::map<std::string, std::string> kv;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    const size_t eq = line.find('=');
    if (eq != std::string::npos && eq > 0) kv[line.substr(0, eq)] = line.substr(eq + 1);
    start = end + 1;
  }
  return kv;
}

}  // namespace multilane_spank
