// mps_daemon.h: a private NVIDIA MPS control daemon for the probe launches of
// `multilane tune` that put several ranks on one GPU.  Without MPS their
// kernels are time-sliced and small calls cost ~10x more, so a profile
// measured without it would recommend one rank per GPU for the wrong reason.
#ifndef MULTILANE_LAUNCHER_MPS_DAEMON_H_
#define MULTILANE_LAUNCHER_MPS_DAEMON_H_

#include <string>

namespace multilane {

// The MPS control program: MULTILANE_MPS_CONTROL when set (tests use a
// stand-in), else nvidia-cuda-mps-control from PATH; "" when there is none.
std::string MpsControlProgram();

// One daemon, pipes in DIR/pipe and logs in DIR/log (0700).  Start() also
// sets CUDA_MPS_PIPE_DIRECTORY and CUDA_MPS_LOG_DIRECTORY in this process's
// environment, so that the probe launches it starts (and forwards them to)
// use the daemon; Stop() (and the destructor, on every way out) sends it
// `quit` and removes them again.
class MpsDaemon {
 public:
  MpsDaemon() = default;
  ~MpsDaemon() { Stop(); }
  MpsDaemon(const MpsDaemon&) = delete;
  MpsDaemon& operator=(const MpsDaemon&) = delete;

  // Starts the daemon with `program` and waits (up to 5 s) until it answers.
  // False with *error (naming the log to read) when it did not come up;
  // nothing is left running then.
  bool Start(const std::string& program, const std::string& dir, std::string* error);
  // Idempotent.
  void Stop();
  bool running() const { return running_; }

 private:
  std::string program_;
  bool running_ = false;
};

}  // namespace multilane

#endif  // MULTILANE_LAUNCHER_MPS_DAEMON_H_
