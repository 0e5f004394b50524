// report_reader.cc: reads and checks a job report file (job_report.h).
#include "report/report_reader.h"

#include <climits>
#include <cmath>
#include <cstring>
#include <set>
#include <stdexcept>
#include <vector>

#include <nlohmann/json.hpp>

#include "vocab/job_key.h"
#include "vocab/outside_input.h"
#include "vocab/refuse.h"
#include "vocab/terminal_text.h"

namespace mlreport {
namespace {

using nlohmann::json;

// A field that is missing or of the wrong type; the message names it.
struct FieldError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string Join(const std::string& where, const std::string& key) { return where.empty() ? key : where + "." + key; }

const char* TypeName(const json& v) { return v.type_name(); }

// The member `key` of `obj`; nullptr when absent (or null) and not required.
const json* Member(const json& obj, const std::string& where, const std::string& key, bool required) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) {
    if (required) throw FieldError("field '" + Join(where, key) + "' is missing");
    return nullptr;
  }
  return &*it;
}

// The member `key` of `obj`, which must be an object (or an array); nullptr
// when absent and not required.  A pointer, not a reference: callers pass
// temporaries for `where` and `key`, and g++ 14's -Wdangling-reference cannot
// tell that the result does not point into them.
const json* Object(const json& obj, const std::string& where, const std::string& key, bool required = true,
                   bool array = false) {
  const json* v = Member(obj, where, key, required);
  if (v != nullptr && (array ? !v->is_array() : !v->is_object()))
    throw FieldError("field '" + Join(where, key) + "' must be " + (array ? "an array" : "an object") + ", not " +
                     TypeName(*v));
  return v;
}

// A finite number >= 0 (every figure of the format is one).
double Number(const json& v, const std::string& name) {
  if (!v.is_number()) throw FieldError("field '" + name + "' must be a number, not " + TypeName(v));
  double d = v.get<double>();
  if (!std::isfinite(d) || d < 0) throw FieldError("field '" + name + "' must be a finite number >= 0");
  return d;
}

double NumberField(const json& obj, const std::string& where, const std::string& key) {
  return Number(*Member(obj, where, key, true), Join(where, key));
}

std::optional<double> OptionalNumber(const json& obj, const std::string& where, const std::string& key) {
  const json* v = Member(obj, where, key, false);
  if (!v) return std::nullopt;
  return Number(*v, Join(where, key));
}

// An integer from 0 to `max` (a count beyond INT64_MAX would wrap negative).
int64_t Integer(const json& v, const std::string& name, int64_t max = INT64_MAX) {
  if (!v.is_number_integer() && !v.is_number_unsigned())
    throw FieldError("field '" + name + "' must be an integer, not " + TypeName(v));
  if (v.is_number_unsigned() ? v.get<uint64_t>() > static_cast<uint64_t>(max) : v.get<int64_t>() > max)
    throw FieldError("field '" + name + "' must be at most " + std::to_string(max));
  if (v.get<int64_t>() < 0) throw FieldError("field '" + name + "' must be >= 0");
  return v.get<int64_t>();
}

int64_t IntegerField(const json& obj, const std::string& where, const std::string& key, bool required = true,
                     int64_t fallback = 0, int64_t max = INT64_MAX) {
  const json* v = Member(obj, where, key, required);
  return v ? Integer(*v, Join(where, key), max) : fallback;
}

// A count that the report keeps as an int (ranks, nodes, GPUs).
int IntField(const json& obj, const std::string& where, const std::string& key, bool required = true,
             int fallback = 0) {
  return static_cast<int>(IntegerField(obj, where, key, required, fallback, INT_MAX));
}

// A text field as every renderer shows it: its control bytes (a NUL, an
// ESC) written out (vocab/terminal_text.h), so that no renderer meets a raw
// one and none stops at a NUL.
std::string Shown(const std::string& text) { return mla::EscapeControlBytes(text); }

std::string String(const json& obj, const std::string& where, const std::string& key, bool required = true) {
  const json* v = Member(obj, where, key, required);
  if (!v) return "";
  if (!v->is_string()) throw FieldError("field '" + Join(where, key) + "' must be a string, not " + TypeName(*v));
  return Shown(v->get<std::string>());
}

MinMeanMax Spread(const json& obj, const std::string& where, const std::string& key) {
  const json& v = *Object(obj, where, key);
  const std::string name = Join(where, key);
  return {NumberField(v, name, "min"), NumberField(v, name, "mean"), NumberField(v, name, "max")};
}

// "{mean, max}" objects of gpus[]; the mean alone is kept unless asked.
std::optional<double> SpreadPart(const json& obj, const std::string& where, const std::string& key, const char* part) {
  const json* v = Object(obj, where, key, false);
  return v ? OptionalNumber(*v, Join(where, key), part) : std::nullopt;
}

// The optional object `key` of counts by name ({"lane": 12, ...}) into *out.
void Counts(const json& obj, const std::string& where, const std::string& key, std::map<std::string, int64_t>* out) {
  const json* counts = Member(obj, where, key, false);
  if (!counts) return;
  if (!counts->is_object()) throw FieldError("field '" + Join(where, key) + "' must be an object");
  for (auto it = counts->begin(); it != counts->end(); ++it)
    (*out)[Shown(it.key())] = Integer(it.value(), Join(Join(where, key), mla::Excerpt(it.key())));
}

ReportBin ParseBin(const json& b, const std::string& where) {
  if (!b.is_object()) throw FieldError("'" + where + "' must be an object, not " + TypeName(b));
  ReportBin bin;
  bin.memory = String(b, where, "memory");
  if (bin.memory != "host" && bin.memory != "device")
    throw FieldError("field '" + Join(where, "memory") + "' must be \"host\" or \"device\", not \"" +
                     mla::Excerpt(bin.memory) + "\"");
  bin.from = static_cast<uint64_t>(IntegerField(b, where, "from"));
  if (const json* to = Member(b, where, "to", false)) bin.to = static_cast<uint64_t>(Integer(*to, Join(where, "to")));
  if (bin.to && *bin.to <= bin.from)
    throw FieldError("field '" + Join(where, "to") + "' must be larger than 'from' (or absent: no upper bound)");
  bin.calls = IntegerField(b, where, "calls");
  bin.bytes = static_cast<uint64_t>(IntegerField(b, where, "bytes"));
  bin.time_s = Spread(b, where, "time_s");
  bin.wait_s = NumberField(b, where, "wait_s");
  bin.comm_ranks = IntField(b, where, "comm_ranks", false, 0);
  bin.algbw_gbs = OptionalNumber(b, where, "algbw_gbs").value_or(0);
  bin.busbw_gbs = OptionalNumber(b, where, "busbw_gbs").value_or(0);
  Counts(b, where, "algos", &bin.algos);
  Counts(b, where, "transports", &bin.transports);  // device bins of reports written since the transport counters
  bin.nccl_fallbacks = IntegerField(b, where, "nccl_fallbacks", false, 0);
  Counts(b, where, "system_algos", &bin.system_algos);
  if (const json* p = Object(b, where, "profile", false)) {
    const std::string pw = Join(where, "profile");
    bin.profile = BinProfile{String(*p, pw, "algo", false), OptionalNumber(*p, pw, "time_us"),
                             OptionalNumber(*p, pw, "mpi_time_us")};
  }
  return bin;
}

ReportGpu ParseGpu(const json& g, const std::string& where) {
  if (!g.is_object()) throw FieldError("'" + where + "' must be an object, not " + TypeName(g));
  ReportGpu gpu;
  gpu.host = String(g, where, "host", false);
  gpu.index = IntField(g, where, "index", false);
  gpu.uuid = String(g, where, "uuid", false);
  gpu.name = String(g, where, "name", false);
  gpu.samples = IntegerField(g, where, "samples", false);
  gpu.interval_s = OptionalNumber(g, where, "interval_s").value_or(0);
  gpu.utilization_mean_pct = SpreadPart(g, where, "utilization_pct", "mean");
  gpu.memory_activity_mean_pct = SpreadPart(g, where, "memory_activity_pct", "mean");
  gpu.power_mean_w = SpreadPart(g, where, "power_w", "mean");
  gpu.power_max_w = SpreadPart(g, where, "power_w", "max");
  gpu.energy_j = OptionalNumber(g, where, "energy_j");
  return gpu;
}

// entries: {NAME: {calls, not_served}, ...}; names this version does not know
// are kept (a later library may count more entry points).
void ParseEntries(const json& entries, std::vector<ReportEntry>* out) {
  for (auto it = entries.begin(); it != entries.end(); ++it) {
    const std::string where = "entries." + mla::Excerpt(it.key());
    if (!it->is_object()) throw FieldError("field '" + where + "' must be an object");
    const ReportEntry e{Shown(it.key()), IntegerField(*it, where, "calls"),
                        IntegerField(*it, where, "not_served", false, 0)};
    if (e.not_served > e.calls) throw FieldError("field '" + where + ".not_served' is larger than its calls");
    out->push_back(e);
  }
}

// Fills *r from a document already known to be a version-1 job report.
void ParseFields(const json& doc, JobReport* r) {
  r->library_version = String(doc, "", "library_version", false);
  const json& job = *Object(doc, "", "job");
  r->job_id = String(job, "job", "id", false);
  r->job_name = String(job, "job", "name");
  r->job_key = String(job, "job", "key", false);  // absent in files written before the history
  if (!r->job_key.empty() && !mla::ValidJobKey(r->job_key))
    throw FieldError("field 'job.key' must be " + mla::JobKeyRule());
  r->started_utc = String(job, "job", "started_utc", false);
  r->ranks = IntField(job, "job", "ranks");
  if (r->ranks < 1) throw FieldError("field 'job.ranks' must be at least 1");
  r->nodes = IntField(job, "job", "nodes", false, 1);
  if (r->nodes < 1) throw FieldError("field 'job.nodes' must be at least 1");
  r->ranks_per_node = IntField(job, "job", "ranks_per_node", false, 0);
  r->ranks_per_gpu = IntField(job, "job", "ranks_per_gpu", false, 0);
  r->gpus = IntField(job, "job", "gpus", false, 0);
  if (const json* hosts = Member(job, "job", "hosts", false)) {
    if (!hosts->is_array()) throw FieldError("field 'job.hosts' must be an array");
    for (const json& h : *hosts)
      if (h.is_string()) r->hosts.push_back(Shown(h.get<std::string>()));
  }
  if (const json* regular = Member(job, "job", "regular", false)) {
    if (!regular->is_boolean()) throw FieldError("field 'job.regular' must be true or false");
    r->regular = regular->get<bool>();
  }
  if (const json* settings = Member(doc, "", "settings", false)) {
    if (!settings->is_object()) throw FieldError("field 'settings' must be an object");
    r->settings_algo = String(*settings, "settings", "algo", false);
    if (const json* p = Member(*settings, "settings", "profile", false)) {
      if (!p->is_string()) throw FieldError("field 'settings.profile' must be a string or null");
      r->profile_text = p->get<std::string>();
    }
  }
  const json& time = *Object(doc, "", "time");
  r->wall_s = Spread(time, "time", "wall_s");
  r->allreduce_s = Spread(time, "time", "allreduce_s");
  r->wait_s = Spread(time, "time", "wait_s");
  r->wait_sampled_calls = IntegerField(time, "time", "wait_sampled_calls", false);
  if (Member(time, "time", "setup_s", false)) r->setup_s = Spread(time, "time", "setup_s");
  const json& bins = *Object(doc, "", "bins", true, true);
  for (size_t i = 0; i < bins.size(); ++i) r->bins.push_back(ParseBin(bins[i], "bins[" + std::to_string(i) + "]"));
  if (const json* entries = Object(doc, "", "entries", false)) ParseEntries(*entries, &r->entries);
  Counts(doc, "", "unsupported", &r->unsupported);
  if (const json* gpus = Object(doc, "", "gpus", false, true))
    for (size_t i = 0; i < gpus->size(); ++i)
      r->gpus_sampled.push_back(ParseGpu((*gpus)[i], "gpus[" + std::to_string(i) + "]"));
}

// A key that appears twice in one object: JSON parsers differ on which one
// wins, so a report that has one is refused.
struct DuplicateKey : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// json::parse, throwing DuplicateKey at the first key repeated in its object.
json ParseWithoutDuplicateKeys(const std::string& text) {
  std::vector<std::set<std::string>> open;  // the keys of each object being read
  return json::parse(text, [&open](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) open.emplace_back();
    if (event == json::parse_event_t::object_end) open.pop_back();
    if (event == json::parse_event_t::key && !open.back().insert(parsed.get<std::string>()).second)
      throw DuplicateKey("key '" + mla::Excerpt(parsed.get<std::string>()) +
                         "' appears twice in one object: give the file the library wrote");
    return true;
  });
}

// Checks `format` and `version` by name before anything else is looked at:
// what is wrong with them, or "" when the file is a job report this reads.
std::string IdentityProblem(const json& doc, const std::string& path) {
  if (!doc.is_object())
    return path + ": not a multilane job report (the file holds a JSON " + TypeName(doc) +
           ", expected an object with format '" + kJobReportFormat + "')";
  auto format = doc.find("format");
  if (format == doc.end() || !format->is_string())
    return path + ": not a multilane job report (no 'format' field, expected '" + kJobReportFormat + "')";
  if (format->get<std::string>() != kJobReportFormat)
    return path + ": not a multilane job report (format is '" + mla::Excerpt(format->get<std::string>()) +
           "', expected '" + kJobReportFormat + "')";
  const std::string ours = std::to_string(kJobReportVersion);
  auto version = doc.find("version");
  if (version == doc.end() || !version->is_number_integer())
    return path + ": job report without an integer 'version' (this multilane reads version " + ours + ")";
  const std::string v = std::to_string(version->get<int64_t>());
  if (version->get<int64_t>() > kJobReportVersion)
    return path + ": job report version " + v + " is newer than this multilane reads (version " + ours +
           "): use a newer multilane";
  if (version->get<int64_t>() != kJobReportVersion)
    return path + ": job report version " + v + " is not supported (this multilane reads version " + ours + ")";
  return "";
}

}  // namespace

bool ParseJobReport(const std::string& text, const std::string& path, JobReport* report, std::string* error) {
  const size_t last = text.find_last_not_of(" \t\r\n");
  if (last == std::string::npos)
    return mla::Refuse(error, path + ": not a complete JSON file (truncated?): the file is empty");
  const std::string bad = path + ": bad job report: ";
  json doc;
  try {
    doc = ParseWithoutDuplicateKeys(text);
  } catch (const DuplicateKey& e) {
    return mla::Refuse(error, bad + e.what());
  } catch (const json::parse_error& e) {
    // An error at (or past) the last character: the input stopped early.
    // "expected end of input" without "unexpected": text after a complete
    // document (refused, and not mistaken for a truncated file).
    if (e.byte > last || std::strstr(e.what(), "unexpected end of input") != nullptr)
      return mla::Refuse(error, path + ": not a complete JSON file (truncated?): the text stops after " +
                                    std::to_string(last + 1) + " bytes");
    if (std::strstr(e.what(), "expected end of input") != nullptr)
      return mla::Refuse(error, path + ": not a JSON file (text after the end of the JSON document, at byte " +
                                    std::to_string(e.byte) + "): give the file the library wrote");
    return mla::Refuse(error, path + ": not a JSON file (syntax error at byte " + std::to_string(e.byte) + ")");
  } catch (const json::exception& e) {
    // out_of_range: a number too large for a double (1e999, 400 digits).
    return mla::Refuse(error, path + ": not a usable JSON file (" + mla::Excerpt(e.what()) + ")");
  }
  JobReport r;
  r.path = path;
  try {
    if (const std::string problem = IdentityProblem(doc, path); !problem.empty()) return mla::Refuse(error, problem);
    ParseFields(doc, &r);
  } catch (const FieldError& e) {
    return mla::Refuse(error, bad + e.what());
  } catch (const std::exception& e) {  // every nlohmann exception, and anything else
    return mla::Refuse(error, bad + mla::Excerpt(e.what()));
  }
  *report = std::move(r);
  return true;
}

bool ReadJobReport(const std::string& path, JobReport* report, std::string* error) {
  std::string text;
  if (!mla::ReadInputFile(path, &text, error)) return mla::Refuse(error, path + ": " + *error);
  return ParseJobReport(text, path, report, error);
}

}  // namespace mlreport
