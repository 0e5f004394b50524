#include "launcher/mps_stand_in_test_support.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace multilane {

MpsStandIn::MpsStandIn(const char* prefix, const std::string& script) {
  std::string tmpl = std::string("/tmp/") + prefix + ".XXXXXX";
  EXPECT_NE(mkdtemp(tmpl.data()), nullptr) << tmpl;
  dir_ = tmpl;
  log_ = dir_ + "/calls.log";
  control_ = dir_ + "/mps-control";
  std::string body = script;
  for (size_t at = body.find("@LOG@"); at != std::string::npos; at = body.find("@LOG@", at + log_.size()))
    body.replace(at, 5, log_);
  std::ofstream(control_) << "#!/bin/sh\n" << body;
  EXPECT_EQ(chmod(control_.c_str(), 0755), 0) << control_;
}

MpsStandIn::~MpsStandIn() { std::filesystem::remove_all(dir_); }

std::string MpsStandIn::LogText() const {
  std::ifstream in(log_);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace multilane
