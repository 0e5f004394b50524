// cmd_show.cc: `multilane show`: node types, profiles and their per-size
// decision tables with the gain over the system MPI; --json for machines.
#include <unistd.h>

#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "vocab/profile.h"
#include "launcher/commands.h"
#include "launcher/context.h"
#include "db/node_type.h"
#include "db/profile_store.h"
#include "vocab/terminal_text.h"
#include "tuner/candidates.h"

namespace multilane {
namespace {

struct ShowOptions {
  std::vector<std::string> databases;
  bool node_types_only = false;
  bool json = false;
  std::string partition;
};

// Database fields on the terminal: control bytes escaped.
std::string Safe(const std::string& s) { return mla::EscapeControlBytes(s); }

std::string Size(int64_t bytes) { return mltuner::FormatByteSize(static_cast<uint64_t>(bytes)); }

nlohmann::json EntryJson(const mldb::ProfileEntryRow& e) {
  nlohmann::json j = {{"memory", e.mem_kind}, {"from", e.min_bytes}, {"choice", e.ChoiceWords()}, {"algo", e.algo}};
  j["to"] = e.max_bytes ? nlohmann::json(*e.max_bytes) : nlohmann::json(nullptr);
  j["time_us"] = e.time_us >= 0 ? nlohmann::json(e.time_us) : nlohmann::json(nullptr);
  j["mpi_time_us"] = e.mpi_time_us >= 0 ? nlohmann::json(e.mpi_time_us) : nlohmann::json(nullptr);
  j["gain"] = e.time_us > 0 && e.mpi_time_us > 0 ? nlohmann::json(e.mpi_time_us / e.time_us) : nlohmann::json(nullptr);
  return j;
}

// Per (memory, size): the best measured time at each ranks-per-GPU value
// (the fastest valid candidate, the system MPI included).  Empty unless the
// measurements hold two or more values.
struct PpgRow {
  std::string memory;
  int64_t bytes = 0;
  std::map<int, double> best_us;  // ranks per GPU -> time
};
std::vector<PpgRow> RanksPerGpuTable(const std::vector<mldb::Measurement>& ms) {
  std::map<std::pair<std::string, int64_t>, PpgRow> rows;
  std::set<int> values;
  for (const auto& m : ms) {
    if (m.candidate.find("(wrong result)") != std::string::npos || m.time_us <= 0) continue;
    PpgRow& r = rows[{m.mem_kind, m.bytes}];
    r.memory = m.mem_kind;
    r.bytes = m.bytes;
    auto it = r.best_us.find(m.ppg);
    if (it == r.best_us.end() || m.time_us < it->second) r.best_us[m.ppg] = m.time_us;
    values.insert(m.ppg);
  }
  std::vector<PpgRow> out;
  if (values.size() < 2) return out;
  for (auto& kv : rows) out.push_back(kv.second);
  return out;
}

// One profile in --json: its facts, whether it is in force (`in_force`; the
// id of the one that is, `in_force_id`), its entries, the disagreement of
// its text and rows (`problem`) and the best times per ranks-per-GPU value.
nlohmann::json ProfileJson(const mldb::ProfileRecord& p, const std::string& disagreement,
                           const std::vector<PpgRow>& ppg_rows, int64_t in_force) {
  nlohmann::json pj = {{"id", p.id},
                       {"in_force", in_force == p.id},
                       {"in_force_id", in_force > 0 ? nlohmann::json(in_force) : nlohmann::json(nullptr)},
                       {"node_type", p.node_type_key},
                       {"partition", p.partition},
                       {"nodes", p.nodes},
                       {"nodes_virtual", mla::ProfileHeaderValue(p.profile_text, "nodes_virtual")},
                       {"ranks_per_gpu", p.ranks_per_gpu},
                       {"library_version", p.library_version},
                       {"mpi_version", p.mpi_version},
                       {"tuned_by", p.tuned_by},
                       {"tuned_at", p.tuned_at},
                       {"duration_s", p.duration_s},
                       {"entries", nlohmann::json::array()}};
  for (const auto& e : p.entries) pj["entries"].push_back(EntryJson(e));
  if (!disagreement.empty()) pj["problem"] = disagreement;
  if (!ppg_rows.empty()) {
    pj["recommended_ranks_per_gpu"] = p.ranks_per_gpu;
    pj["ranks_per_gpu_by_size"] = nlohmann::json::array();
    for (const PpgRow& r : ppg_rows) {
      nlohmann::json times = nlohmann::json::object();
      for (const auto& [v, t] : r.best_us) times[std::to_string(v)] = t;
      pj["ranks_per_gpu_by_size"].push_back({{"memory", r.memory}, {"bytes", r.bytes}, {"best_time_us", times}});
    }
  }
  return pj;
}

// The best time at each ranks-per-GPU value, a row per (memory, size); the
// recommended value is starred.
void PrintRanksPerGpuTable(const std::vector<PpgRow>& ppg_rows, int recommended) {
  std::printf(
      "    best time_us at each ranks per GPU (* recommended; the profile's entries follow the job's own "
      "value):\n");
  std::printf("    %-7s %8s", "memory", "size");
  for (const auto& [v, t] : ppg_rows.front().best_us)
    std::printf(" %11s", (std::to_string(v) + (v == recommended ? "*" : " ")).c_str());
  std::printf("\n");
  for (const PpgRow& r : ppg_rows) {
    std::printf("    %-7s %8s", Safe(r.memory).c_str(), Size(r.bytes).c_str());
    for (const auto& [v, t] : ppg_rows.front().best_us) {
      auto it = r.best_us.find(v);
      if (it == r.best_us.end())
        std::printf(" %11s", "-");
      else
        std::printf(" %11.1f", it->second);
    }
    std::printf("\n");
  }
}

// Whether `p` is in force: "in force" when it is the profile the store's
// lookup (ProfileStore::Find, what `multilane resolve` uses) returns for its
// node type, partition and versions, else which one is.
std::string InForceText(const mldb::ProfileRecord& p, int64_t in_force) {
  if (in_force == p.id) return "in force";
  return "not in force: profile " + std::to_string(in_force) + " is (`multilane withdraw ID` removes a bad one)";
}

// The keys of the node types whose fingerprint has no GPU (a fingerprint
// that does not read counts as having GPUs: the profile's value is shown).
std::set<std::string> NodeTypesWithoutGpus(const std::vector<mldb::NodeTypeRow>& types) {
  std::set<std::string> keys;
  for (const auto& t : types) {
    mldb::NodeFingerprint f;
    std::string error;
    const auto json = nlohmann::json::parse(t.fingerprint_json, nullptr, /*allow_exceptions=*/false);
    if (mldb::NodeFingerprint::FromJson(json, &f, &error) && f.gpus.empty()) keys.insert(t.key);
  }
  return keys;
}

// One profile on the terminal: its facts, whether it is in force, its
// decision table with the gain over the system MPI, and the ranks-per-GPU
// table when there is one.  NO_GPU: its node type has no GPU, so the
// ranks per GPU it stores (1) means nothing and is not shown.
void PrintProfile(const mldb::ProfileRecord& p, const std::string& disagreement, const std::vector<PpgRow>& ppg_rows,
                  int64_t in_force, bool no_gpu) {
  const std::string virt = mla::ProfileHeaderValue(p.profile_text, "nodes_virtual");
  const char* kind = virt == "yes" ? " virtual" : virt == "no" && p.nodes > 1 ? " real" : "";
  const std::string per_gpu = no_gpu ? "no GPU" : std::to_string(p.ranks_per_gpu) + " rank(s)/GPU";
  std::printf("\n  profile %lld: node type %s%s, measured on %d%s node(s), %s, libmlallreduce %s, %s\n",
              static_cast<long long>(p.id), Safe(p.node_type_key).c_str(),
              p.partition.empty() ? "" : (", partition " + Safe(p.partition)).c_str(), p.nodes, kind, per_gpu.c_str(),
              Safe(p.library_version).c_str(), Safe(p.mpi_version).c_str());
  std::printf("  tuned %s by %s in %.0f s; %s\n", Safe(p.tuned_at).c_str(), Safe(p.tuned_by).c_str(), p.duration_s,
              p.library_version != LibraryVersion() ? "another library version: not used by this one"
                                                    : InForceText(p, in_force).c_str());
  if (!disagreement.empty()) std::printf("  warning: %s\n", Safe(disagreement).c_str());
  std::printf("    %-7s %8s %8s  %-32s %12s %12s %7s\n", "memory", "from", "to", "choice", "time_us", "mpi_us", "gain");
  for (const auto& e : p.entries) {
    char gain[16] = "-";
    if (e.time_us > 0 && e.mpi_time_us > 0) std::snprintf(gain, sizeof gain, "%.2fx", e.mpi_time_us / e.time_us);
    std::printf("    %-7s %8s %8s  %-32s %12.1f %12.1f %7s\n", Safe(e.mem_kind).c_str(), Size(e.min_bytes).c_str(),
                e.max_bytes ? Size(*e.max_bytes).c_str() : "inf", Safe(e.ChoiceWords()).c_str(), e.time_us,
                e.mpi_time_us, gain);
  }
  if (!ppg_rows.empty()) PrintRanksPerGpuTable(ppg_rows, p.ranks_per_gpu);
}

// One database's node types and profiles: printed (unless --json) and put
// into *db.  Returns 0, or the status of a failure to read it.
int ShowDatabase(const ShowOptions& opt, const std::string& path, mldb::ProfileStore& store, const std::string& here,
                 nlohmann::json* db) {
  std::string error;
  auto types = store.NodeTypes(&error);
  auto profiles = opt.node_types_only ? std::vector<mldb::ProfileRecord>{} : store.List(&error);
  if (!error.empty()) return Fail(path + ": " + error);
  (*db)["node_types"] = nlohmann::json::array();
  for (const auto& t : types)
    (*db)["node_types"].push_back(
        {{"key", t.key}, {"description", t.description}, {"first_seen", t.first_seen}, {"this_node", t.key == here}});
  (*db)["profiles"] = nlohmann::json::array();
  if (!opt.json) {
    std::printf("%s: %zu node type(s), %zu profile(s)\n", path.c_str(), types.size(), profiles.size());
    for (const auto& t : types)
      std::printf("  node type %s%s  %s\n", Safe(t.key).c_str(), t.key == here ? " (this node)" : "",
                  Safe(t.description).c_str());
  }
  const std::set<std::string> without_gpus = NodeTypesWithoutGpus(types);
  for (const auto& p : profiles) {
    if (!opt.partition.empty() && p.partition != opt.partition) continue;
    // The table lists the entries; `run` hands the library the text.
    std::string disagreement = p.disagreement;
    if (!disagreement.empty())
      disagreement += "; `run` uses the text, not this table: re-tune or re-import this profile";
    // A tune of several ranks-per-GPU values: their best times per size.
    std::string merror;
    const std::vector<PpgRow> ppg_rows = RanksPerGpuTable(store.Measurements(p.id, &merror));
    // The one jobs of its node type, partition and versions get.
    const auto in_force = store.Find(p.node_type_key, p.partition, p.library_version, p.mpi_version, &merror);
    const int64_t in_force_id = in_force ? in_force->id : 0;
    (*db)["profiles"].push_back(ProfileJson(p, disagreement, ppg_rows, in_force_id));
    if (!opt.json) PrintProfile(p, disagreement, ppg_rows, in_force_id, without_gpus.count(p.node_type_key) != 0);
  }
  if (!opt.json) std::printf("\n");
  return 0;
}

int Show(const ShowOptions& opt) {
  const std::string mpi = MpiLibraryVersion();
  const std::string here = mldb::CollectNodeFingerprint(mpi).Key();
  nlohmann::json out = {
      {"this_node_type", here}, {"library_version", LibraryVersion()}, {"databases", nlohmann::json::array()}};
  int status = 0;
  for (const std::string& path : DatabasesToRead(opt.databases)) {
    nlohmann::json db = {{"path", path}};
    std::string error;
    auto store = mldb::ProfileStore::Open(path, mldb::ProfileStore::Access::kReadOnly, &error);
    if (!store) {
      db["error"] = error;
      out["databases"].push_back(db);
      // A default database that does not exist yet is no error; any other
      // failure is, and says which file and what to do.
      const bool missing_default = opt.databases.empty() && access(path.c_str(), F_OK) != 0;
      if (missing_default) {
        if (!opt.json) std::printf("%s: none yet\n\n", path.c_str());
      } else {
        status = Fail(error);
      }
      continue;
    }
    if (int failed = ShowDatabase(opt, path, *store, here, &db); failed != 0) {
      status = failed;
      continue;
    }
    out["databases"].push_back(db);
  }
  if (opt.json) std::printf("%s\n", out.dump(2).c_str());
  return status;
}

}  // namespace

void AddShowCommand(CLI::App& app, int* status) {
  auto* opt = new ShowOptions();
  CLI::App* cmd = app.add_subcommand("show", "Show node types, profiles and their decision tables");
  cmd->add_option("--db", opt->databases, "Database to read (repeatable; default: the user's, then the system's)");
  cmd->add_flag("--node-type", opt->node_types_only, "Show the node types only");
  cmd->add_option("--partition", opt->partition, "Show the profiles of this partition only");
  cmd->add_flag("--json", opt->json, "Print JSON");
  cmd->callback([opt, status] { *status = Show(*opt); });
}

}  // namespace multilane
