// fuzz_job_report.cc: the job report reader of `multilane report`
// (report/job_report.h): never throws, a refusal names the file.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "job_report.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  multilane::JobReport r;
  std::string error;
  if (!multilane::ParseJobReport(text, "fuzz.json", &r, &error)) {
    if (error.rfind("fuzz.json: ", 0) != 0) std::abort();
    return 0;
  }
  if (r.ranks < 1 || r.path != "fuzz.json") std::abort();
  return 0;
}
