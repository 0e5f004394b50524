// fuzz_job_report.cc: the job report reader of `multilane report`
// (report/report_reader.h): never throws, a refusal names the file and echoes
// no outside value whole, and what it accepts keeps the format's rules.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "report/report_reader.h"
#include "vocab/job_key.h"
#include "vocab/terminal_text.h"

namespace {
// The file's text reaches the renderers escaped (report_reader.h): escaping
// it again changes nothing.
void CheckShown(const std::string& text) {
  if (mla::EscapeControlBytes(text) != text) std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  mlreport::JobReport r;
  std::string error;
  if (!mlreport::ParseJobReport(text, "fuzz.json", &r, &error)) {
    if (error.rfind("fuzz.json: ", 0) != 0) std::abort();
    if (error.size() > 1024) std::abort();  // outside values are echoed as excerpts
    return 0;
  }
  if (r.ranks < 1 || r.nodes < 1 || r.path != "fuzz.json") std::abort();
  if (!r.job_key.empty() && !mla::ValidJobKey(r.job_key)) std::abort();  // the history's key rule
  for (const std::string* s : {&r.library_version, &r.job_id, &r.job_name, &r.started_utc, &r.settings_algo})
    CheckShown(*s);
  for (const std::string& h : r.hosts) CheckShown(h);
  for (const mlreport::ReportGpu& g : r.gpus_sampled)
    for (const std::string* s : {&g.host, &g.uuid, &g.name}) CheckShown(*s);
  for (const mlreport::ReportEntry& e : r.entries) CheckShown(e.name);
  for (const mlreport::ReportBin& b : r.bins) {
    if (b.calls < 0 || (b.memory != "host" && b.memory != "device") || (b.to && *b.to <= b.from)) std::abort();
    for (const auto& kv : b.algos) {
      if (kv.second < 0) std::abort();
      CheckShown(kv.first);
    }
  }
  return 0;
}
