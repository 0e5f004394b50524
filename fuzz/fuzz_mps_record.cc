// fuzz_mps_record.cc: the readers of `run --mps`'s leftover search
// (launcher/mps_leftover.h, launcher/process.h): the record in a private
// MPS folder, and /proc/PID/stat and /proc/PID/status.  A record that parses
// writes back to the same text; nothing crashes on any input.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "launcher/mps_leftover.h"
#include "launcher/process.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  multilane::MpsOwnerRecord r;
  if (multilane::ParseMpsOwnerRecord(text, &r)) {
    if (r.run_pid <= 0 || r.job_pid < 0) std::abort();
    // Leading zeros are the only other spelling of a number it takes.
    multilane::MpsOwnerRecord again;
    if (!multilane::ParseMpsOwnerRecord(multilane::FormatMpsOwnerRecord(r), &again)) std::abort();
    if (again.run_pid != r.run_pid || again.run_start != r.run_start || again.job_pid != r.job_pid ||
        again.job_start != r.job_start)
      std::abort();
  }
  multilane::ProcessStat st;
  (void)multilane::ParseProcessStat(text, &st);
  uid_t uid = 0;
  (void)multilane::ParseProcessUid(text, &uid);
  return 0;
}
