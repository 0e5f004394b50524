// Test support for the MPS unit tests (mps_daemon_test.cc,
// mps_leftover_test.cc): a scratch folder of the test's own holding a
// stand-in for nvidia-cuda-mps-control, a shell script that logs what it was
// told (no NVIDIA driver here).
#ifndef MULTILANE_LAUNCHER_MPS_STAND_IN_TEST_SUPPORT_H_
#define MULTILANE_LAUNCHER_MPS_STAND_IN_TEST_SUPPORT_H_

#include <string>

namespace multilane {

// A fresh folder under /tmp, made for this test alone and removed with
// everything in it when the object goes.  `script` is the stand-in's body
// after "#!/bin/sh"; every "@LOG@" in it becomes the log file's path.
class MpsStandIn {
 public:
  MpsStandIn(const char* prefix, const std::string& script);
  ~MpsStandIn();
  MpsStandIn(const MpsStandIn&) = delete;
  MpsStandIn& operator=(const MpsStandIn&) = delete;

  const std::string& dir() const { return dir_; }          // the scratch folder
  const std::string& control() const { return control_; }  // the stand-in's path
  const std::string& log() const { return log_; }          // what it wrote
  // The log's whole text ("" before the stand-in wrote any).
  std::string LogText() const;

 private:
  std::string dir_, control_, log_;
};

}  // namespace multilane

#endif  // MULTILANE_LAUNCHER_MPS_STAND_IN_TEST_SUPPORT_H_
