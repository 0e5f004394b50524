#include "libmlallreduce/startup/config.h"

#include <cstdlib>
#include <sstream>

#include "libmlallreduce/startup/profile_file.h"
#include "vocab/job_key.h"
#include "vocab/ranks_per_gpu.h"
#include "vocab/terminal_text.h"
#include "vocab/verbose_level.h"
#include "vocab/algo_names.h"

namespace mla::lib {
namespace {

constexpr char kOff[] = "; multilane is off for this job and every MPI_Allreduce goes to the system MPI";

// FNV-1a, 64 bit: a stable hash that is the same in every process.
void Mix(uint64_t* h, std::string_view s) {
  for (unsigned char c : s) {
    *h ^= c;
    *h *= 1099511628211ull;
  }
  *h ^= 0xff;
  *h *= 1099511628211ull;
}

// The largest count a variable takes (ranks, lanes, a sampling period).
constexpr int kMaxCount = 9999999;

enum class Count { kOk, kNotANumber, kZero, kTooLarge };

// Decimal digits only: no sign, no space, no 0x.
Count ParseCount(const std::string& s, int* out) {
  if (s.empty()) return Count::kNotANumber;
  for (char c : s)
    if (c < '0' || c > '9') return Count::kNotANumber;
  const size_t first = s.find_first_not_of('0');
  if (first == std::string::npos) return Count::kZero;
  if (s.size() - first > 7) return Count::kTooLarge;
  const int v = std::stoi(s.substr(first));
  if (v > kMaxCount) return Count::kTooLarge;
  *out = v;
  return Count::kOk;
}

bool ParsePositive(const std::string& s, int* out) { return ParseCount(s, out) == Count::kOk; }

// "NAME='VALUE' must be a positive integer (WHAT)", or "is too large" when it
// is one.
std::string CountMessage(const char* name, const std::string& value, const char* what) {
  int ignored = 0;
  const std::string head = std::string(name) + "=" + Quoted(value) + " ";
  if (ParseCount(value, &ignored) == Count::kTooLarge)
    return head + "is too large (at most " + std::to_string(kMaxCount) + "; " + what + ")";
  return head + "must be a positive integer (" + what + ")";
}

// Seconds as a plain decimal number in [0.01, 3600]: digits with at most one
// '.', like every other variable (no sign, space, exponent or 0x).
bool ParseSeconds(const std::string& s, double* out) {
  if (s.empty() || s.size() > 16) return false;
  int dots = 0, digits = 0;
  for (char c : s) {
    if (c == '.')
      ++dots;
    else if (c >= '0' && c <= '9')
      ++digits;
    else
      return false;
  }
  if (dots > 1 || digits == 0) return false;
  const double v = std::strtod(s.c_str(), nullptr);
  if (!(v >= 0.01 && v <= 3600)) return false;
  *out = v;
  return true;
}

// Reads LoadConfig's variables: every name and value read is mixed into the
// settings hash, in the order read; a problem turns multilane off for the
// job, a warning (c->warnings) keeps it on.
struct EnvReader {
  const EnvLookup& env;
  Config* c;
  uint64_t hash = 1469598103934665603ull;

  std::string Get(const char* name) {
    const char* v = env(name);
    std::string s = v ? v : "";
    Mix(&hash, name);
    Mix(&hash, s);
    return s;
  }
  void Problem(const std::string& msg) { c->problems.push_back(msg + kOff); }
};

// MULTILANE_ALGO, _LANES, _CHUNK and _TRANSPORT: the choice forced on every call.
void ReadForcedChoice(EnvReader* r) {
  Config* c = r->c;
  const std::string algo = r->Get("MULTILANE_ALGO");
  const std::string lanes = r->Get("MULTILANE_LANES");
  const std::string chunk = r->Get("MULTILANE_CHUNK");
  const std::string transport = r->Get("MULTILANE_TRANSPORT");
  if (!transport.empty() && !mla::TransportFromName(transport.c_str(), &c->forced.transport)) {
    r->Problem("MULTILANE_TRANSPORT=" + Quoted(transport) + " is not a transport: use " + mla::TransportNames());
  }
  if (!algo.empty() && algo != "auto") {
    if (mla::AlgoFromName(algo.c_str(), &c->forced.algo)) {
      c->has_forced = true;
    } else {
      r->Problem("MULTILANE_ALGO=" + Quoted(algo) + " is not an algorithm: use passthrough, lane, hier, split or auto");
    }
  }
  if (!lanes.empty() && !ParsePositive(lanes, &c->forced.lanes)) {
    r->Problem(CountMessage("MULTILANE_LANES", lanes, "ranks per node that drive lanes"));
  }
  if (!chunk.empty() && !ParseByteSize(chunk, &c->forced.chunk_bytes)) {
    r->Problem("MULTILANE_CHUNK=" + Quoted(chunk) + " must be a byte size such as 4M or 65536");
  } else if (!chunk.empty() && c->forced.chunk_bytes == 0) {
    r->Problem("MULTILANE_CHUNK=" + Quoted(chunk) +
               " must be above 0 (a byte size such as 4M); unset it for the default");
  }
}

// MULTILANE_RANKS_PER_NODE, _RANKS_PER_GPU and the device paths' variables.
void ReadLayoutAndDevice(EnvReader* r) {
  Config* c = r->c;
  const std::string rpn = r->Get("MULTILANE_RANKS_PER_NODE");
  if (!rpn.empty() && !ParsePositive(rpn, &c->ranks_per_node)) {
    r->Problem(CountMessage("MULTILANE_RANKS_PER_NODE", rpn, "ranks per virtual node"));
  }
  std::string bad_rpg;
  if (!ParseRanksPerGpuVariable(r->Get("MULTILANE_RANKS_PER_GPU"), &c->ranks_per_gpu, &bad_rpg)) r->Problem(bad_rpg);
  const std::string node_step = r->Get("MULTILANE_NODE_STEP");
  if (node_step == "shm" || node_step == "shm-cma") {
    c->shm_node_step = true;
    c->shm_single_copy = node_step == "shm-cma";
  } else if (!node_step.empty() && node_step != "mpi") {
    r->Problem("MULTILANE_NODE_STEP=" + Quoted(node_step) +
               " is not a node step: use mpi (the system MPI's collectives), shm (a shared-memory segment) or "
               "shm-cma (the segment, reading peers directly where the kernel allows)");
  }
  const std::string step_tasks = r->Get("MULTILANE_STEP_TASKS");
  if (!step_tasks.empty() && !ParsePositive(step_tasks, &c->step_tasks))
    c->warnings.push_back(CountMessage("MULTILANE_STEP_TASKS", step_tasks, "the Slurm step's tasks") + "; ignored");

  const std::string sync = r->Get("MULTILANE_DEVICE_SYNC");
  if (sync == "stream") {
    c->device_sync_stream = true;
  } else if (!sync.empty() && sync != "device") {
    r->Problem("MULTILANE_DEVICE_SYNC=" + Quoted(sync) +
               " is not a rule: use device (wait for every stream) or stream (the legacy default stream and "
               "blocking streams)");
  }
  const std::string flag_max = r->Get("MULTILANE_DEVICE_FLAG_MAX");
  if (!flag_max.empty() && (!ParseByteSize(flag_max, &c->device_flag_max) || c->device_flag_max > kMaxDeviceFlagMax)) {
    r->Problem("MULTILANE_DEVICE_FLAG_MAX=" + Quoted(flag_max) + " must be a byte size from 0 (off) to " +
               FormatByteSize(kMaxDeviceFlagMax) + ", such as 1M");
  }
}

// MULTILANE_STATS, _VERBOSE and the report's variables (a bad report value
// keeps its default and multilane on).
void ReadOutputs(EnvReader* r) {
  Config* c = r->c;
  const std::string stats = r->Get("MULTILANE_STATS");
  if (stats == "1" || stats == "yes" || stats == "on")
    c->stats = true;
  else if (!stats.empty() && stats != "0" && stats != "no" && stats != "off")
    r->Problem("MULTILANE_STATS=" + Quoted(stats) + " must be 1 or 0");
  const std::string verbose = r->Get("MULTILANE_VERBOSE");
  c->verbose = VerboseLevel(verbose);
  if (c->verbose < 0) {
    c->verbose = 0;
    r->Problem("MULTILANE_VERBOSE=" + Quoted(verbose) + " must be 0, 1 or 2");
  } else if (c->verbose > 2) {
    // Only 0, 1 and 2 exist; a larger level prints what 2 prints.
    c->verbose = 2;
    c->warnings.push_back("MULTILANE_VERBOSE=" + Quoted(verbose) + ": only 0, 1 and 2 exist; using 2");
  }

  c->report_dir = r->Get("MULTILANE_REPORT");
  c->history_dir = r->Get("MULTILANE_HISTORY");
  c->job_key = r->Get("MULTILANE_JOB_KEY");
  if (!c->job_key.empty() && !ValidJobKey(c->job_key)) {
    c->warnings.push_back("MULTILANE_JOB_KEY=" + Quoted(c->job_key) + " must be " + JobKeyRule() +
                          "; the history keeps this job under its program's name and command line instead");
    c->job_key.clear();
  }
  const std::string sample = r->Get("MULTILANE_REPORT_SAMPLE");
  if (!sample.empty() && !ParsePositive(sample, &c->report_sample)) {
    c->warnings.push_back(CountMessage("MULTILANE_REPORT_SAMPLE", sample, "sample about one call in N") + "; using 64");
  }
  const std::string interval = r->Get("MULTILANE_REPORT_INTERVAL");
  if (interval == "0") {
    c->report_interval_s = 0;  // no GPU sampling
  } else if (!interval.empty() && !ParseSeconds(interval, &c->report_interval_s)) {
    c->warnings.push_back("MULTILANE_REPORT_INTERVAL=" + Quoted(interval) +
                          " must be 0 (no GPU sampling) or seconds between 0.01 and 3600 (e.g. 1 or 0.5); using 1");
  }
}

// MULTILANE_PROFILE or MULTILANE_PROFILE_FILE (one of them), parsed; a
// file's text is mixed into the settings hash too.
void ReadProfile(EnvReader* r) {
  Config* c = r->c;
  const std::string text = r->Get("MULTILANE_PROFILE");
  const std::string file = r->Get("MULTILANE_PROFILE_FILE");
  std::string profile_text;
  if (!text.empty() && !file.empty()) {
    r->Problem("both MULTILANE_PROFILE and MULTILANE_PROFILE_FILE are set: set only one");
  } else if (!text.empty()) {
    profile_text = text;
    c->profile_source = "MULTILANE_PROFILE";
  } else if (!file.empty()) {
    std::string why;
    if (!ReadProfileFile(file, &profile_text, &why)) {
      r->Problem("MULTILANE_PROFILE_FILE=" + Quoted(file) + " " + why);
    } else {
      Mix(&r->hash, profile_text);
      c->profile_source = "MULTILANE_PROFILE_FILE=" + Excerpt(file);
    }
  }
  if (!c->profile_source.empty()) {
    std::string error;
    if (!c->profile.Parse(profile_text, &error)) {
      r->Problem(c->profile_source.substr(0, c->profile_source.find('=')) +
                 (c->profile_source.find('=') != std::string::npos ? " (" + Quoted(file) + ")" : "") + ": " + error +
                 " (docs/profile-format.md describes the format)");
      c->profile = Profile();
    }
  }
}

}  // namespace

bool Config::MayUseNodeShm() const {
  if (shm_node_step || (has_forced && forced.transport == MLA_TRANSPORT_SHM)) return true;
  for (const ProfileEntry& e : profile.entries())
    if (e.choice.transport == MLA_TRANSPORT_SHM) return true;
  return false;
}

std::string Config::Summary() const {
  std::ostringstream out;
  out << "version " << MLA_VERSION_STRING << (enabled ? ", on" : ", off (bad settings)");
  if (has_forced) {
    out << ", algorithm " << mla::AlgoName(forced.algo);
    if (forced.lanes > 0) out << " lanes=" << forced.lanes;
    if (forced.chunk_bytes > 0) out << " chunk=" << FormatByteSize(forced.chunk_bytes);
    if (forced.transport != MLA_TRANSPORT_AUTO) out << " transport=" << mla::TransportName(forced.transport);
  } else if (!profile_source.empty()) {
    out << ", profile from " << profile_source << " (" << CountOf(profile.entries().size(), "entry", "entries") << ")";
  } else {
    out << ", no profile: every call goes to the system MPI";
  }
  if (ranks_per_node > 0) out << ", virtual nodes of " << CountOf(ranks_per_node, "rank");
  if (ranks_per_gpu > 0) out << ", " << CountOf(ranks_per_gpu, "rank") << " per GPU";
  if (shm_node_step) out << ", node steps on shared memory" << (shm_single_copy ? " (single copy where allowed)" : "");
  if (device_sync_stream) out << ", device calls wait for the legacy stream only";
  if (device_flag_max == 0)
    out << ", device flag path off";
  else if (device_flag_max != kDefaultDeviceFlagMax)
    out << ", device flag path up to " << FormatByteSize(device_flag_max);
  if (!report_dir.empty()) out << ", job report into " << report_dir;
  return out.str();
}

Config LoadConfig(const EnvLookup& env) {
  Config c;
  EnvReader r{env, &c};
  // The launcher's reason, which the library repeats in its one line: whole
  // as the Slurm plugin writes it, an excerpt when something else set more
  // (the settings hash still covers every byte).
  c.launcher_off = Excerpt(r.Get("MULTILANE_OFF"), kRelayedReasonBytes);
  ReadForcedChoice(&r);
  ReadLayoutAndDevice(&r);
  ReadOutputs(&r);
  ReadProfile(&r);
  c.enabled = c.problems.empty();
  c.fingerprint = r.hash;
  return c;
}

Config LoadConfigFromEnvironment() {
  return LoadConfig([](const char* name) { return std::getenv(name); });
}

}  // namespace mla::lib
