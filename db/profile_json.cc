// profile_json.cc: the export document of a profile store (profile_json.h).
#include "db/profile_json.h"

#include <utility>
#include <vector>

#include "db/node_type.h"
#include "db/record_check.h"
#include "db/sql.h"
#include "vocab/utc_time.h"
#include "vocab/refuse.h"

namespace mldb {

using sql::ClearError;
using sql::SetError;

namespace {

const char kImportPrefix[] = "import: ";

nlohmann::json EntryToJson(const ProfileEntryRow& e) {
  nlohmann::json j = {{"mem_kind", e.mem_kind},
                      {"min_bytes", e.min_bytes},
                      {"max_bytes", nullptr},
                      {"algo", e.algo},
                      {"ppg", e.ppg},
                      {"lanes", e.lanes},
                      {"chunk_bytes", e.chunk_bytes},
                      {"transport", e.transport},
                      {"mpi", e.system_algorithm},
                      {"time_us", e.time_us},
                      {"mpi_time_us", e.mpi_time_us}};
  if (e.max_bytes) j["max_bytes"] = *e.max_bytes;
  return j;
}

nlohmann::json ProfileToJson(const ProfileRecord& r) {
  nlohmann::json entries = nlohmann::json::array();
  for (const ProfileEntryRow& e : r.entries) entries.push_back(EntryToJson(e));
  return {{"node_type_key", r.node_type_key},
          {"partition", r.partition},
          {"nodes", r.nodes},
          {"ranks_per_gpu", r.ranks_per_gpu},
          {"library_version", r.library_version},
          {"mpi_version", r.mpi_version},
          {"tuned_by", r.tuned_by},
          {"tuned_at", r.tuned_at},
          {"duration_s", r.duration_s},
          {"profile_text", r.profile_text},
          {"entries", entries}};
}

// Field readers for Import: each names the field on failure.
bool JString(const nlohmann::json& o, const char* k, const std::string& where, std::string* out, std::string* error,
             bool allow_empty = true) {
  auto it = o.find(k);
  if (it == o.end() || !it->is_string() || (!allow_empty && it->get_ref<const std::string&>().empty()))
    return mla::Refuse(error,
                       where + k + (allow_empty ? ": missing or not a string" : ": missing, empty or not a string"));
  *out = it->get<std::string>();
  return true;
}

bool JInt(const nlohmann::json& o, const char* k, const std::string& where, int64_t* out, std::string* error) {
  auto it = o.find(k);
  if (it == o.end() || !it->is_number_integer() || it->get<int64_t>() < 0)
    return mla::Refuse(error, where + k + ": missing or not a non-negative integer");
  *out = it->get<int64_t>();
  return true;
}

bool JSmallInt(const nlohmann::json& o, const char* k, const std::string& where, int* out, std::string* error) {
  int64_t v = 0;
  if (!JInt(o, k, where, &v, error)) return false;
  if (v > 1000000000) return mla::Refuse(error, where + k + ": too large");
  *out = static_cast<int>(v);
  return true;
}

bool JDouble(const nlohmann::json& o, const char* k, const std::string& where, double* out, std::string* error) {
  auto it = o.find(k);
  if (it == o.end() || !it->is_number()) return mla::Refuse(error, where + k + ": missing or not a number");
  *out = it->get<double>();
  return true;
}

bool ParseEntry(const nlohmann::json& j, const std::string& where, ProfileEntryRow* e, std::string* error) {
  if (!j.is_object()) return mla::Refuse(error, where.substr(0, where.size() - 1) + ": not an object");
  if (!JString(j, "mem_kind", where, &e->mem_kind, error) || !JInt(j, "min_bytes", where, &e->min_bytes, error) ||
      !JString(j, "algo", where, &e->algo, error) || !JSmallInt(j, "ppg", where, &e->ppg, error) ||
      !JSmallInt(j, "lanes", where, &e->lanes, error) || !JInt(j, "chunk_bytes", where, &e->chunk_bytes, error) ||
      !JString(j, "transport", where, &e->transport, error) || !JDouble(j, "time_us", where, &e->time_us, error) ||
      !JDouble(j, "mpi_time_us", where, &e->mpi_time_us, error)) {
    return false;
  }
  // "mpi" (passthrough mpi=NAME) came with schema 2: older exports lack it.
  if (j.contains("mpi") && !JString(j, "mpi", where, &e->system_algorithm, error)) return false;
  auto max = j.find("max_bytes");
  if (max == j.end() || !(max->is_null() || (max->is_number_integer() && max->get<int64_t>() >= 0)))
    return mla::Refuse(error, where + "max_bytes: missing, or neither null nor a non-negative integer");
  if (!max->is_null()) e->max_bytes = max->get<int64_t>();
  return ValidEntry(*e, where, error);
}

bool ParseProfile(const nlohmann::json& j, const std::string& where, ProfileRecord* r, std::string* error) {
  if (!j.is_object()) return mla::Refuse(error, where.substr(0, where.size() - 1) + ": not an object");
  if (!JString(j, "node_type_key", where, &r->node_type_key, error, false) ||
      !JString(j, "partition", where, &r->partition, error) || !JSmallInt(j, "nodes", where, &r->nodes, error) ||
      !JSmallInt(j, "ranks_per_gpu", where, &r->ranks_per_gpu, error) ||
      !JString(j, "library_version", where, &r->library_version, error) ||
      !JString(j, "mpi_version", where, &r->mpi_version, error) ||
      !JString(j, "tuned_by", where, &r->tuned_by, error) ||
      !JString(j, "tuned_at", where, &r->tuned_at, error, false) ||
      !JDouble(j, "duration_s", where, &r->duration_s, error) ||
      !JString(j, "profile_text", where, &r->profile_text, error, false)) {
    return false;
  }
  auto entries = j.find("entries");
  if (entries == j.end() || !entries->is_array()) return mla::Refuse(error, where + "entries: missing or not an array");
  for (size_t i = 0; i < entries->size(); ++i) {
    ProfileEntryRow e;
    if (!ParseEntry((*entries)[i], where + "entries[" + std::to_string(i) + "].", &e, error)) {
      return false;
    }
    r->entries.push_back(std::move(e));
  }
  return ValidRecord(*r, where, error);
}

// Node type number `i` of a document; its fingerprint must give its key.
// On failure sets *problem (naming the field) and returns false.
bool ParseNodeType(const nlohmann::json& n, size_t i, NodeTypeRow* row, std::string* problem) {
  const std::string where = "node_types[" + std::to_string(i) + "].";
  if (!n.is_object()) return mla::Refuse(problem, "node_types[" + std::to_string(i) + "]: not an object");
  if (!JString(n, "key", where, &row->key, problem, false) ||
      !JString(n, "description", where, &row->description, problem) ||
      !JString(n, "first_seen", where, &row->first_seen, problem, false)) {
    return false;
  }
  NodeFingerprint fp;
  auto f = n.find("fingerprint");
  if (f == n.end()) {
    *problem = where + "fingerprint: missing";
  } else if (!NodeFingerprint::FromJson(*f, &fp, problem)) {
    *problem = where + *problem;
  } else if (fp.Key() != row->key) {
    *problem = where + "key: " + row->key + " does not match its fingerprint (" + fp.Key() + ")";
  } else {
    row->fingerprint_json = fp.ToJson().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return true;
  }
  return false;
}

// The document's frame: an object of format "multilane-profiles" and version
// 1 with the arrays node_types and profiles.  "" when so, else the message.
std::string FrameProblem(const nlohmann::json& doc) {
  const std::string prefix = kImportPrefix;
  if (!doc.is_object()) {
    return prefix + "the document is not a JSON object; give a file written by `multilane export`";
  }
  auto format = doc.find("format");
  if (format == doc.end() || *format != "multilane-profiles") {
    return prefix +
           "format: not \"multilane-profiles\", so this is not a multilane "
           "profile export; give a file written by `multilane export`";
  }
  auto version = doc.find("version");
  if (version == doc.end() || !version->is_number_integer()) return prefix + "version: missing or not an integer";
  if (*version != 1) {
    return prefix + "version: " + version->dump() +
           " is not supported (this multilane reads version 1); import it with "
           "the multilane that exported it";
  }
  auto node_list = doc.find("node_types");
  if (node_list == doc.end() || !node_list->is_array()) return prefix + "node_types: missing or not an array";
  auto profile_list = doc.find("profiles");
  if (profile_list == doc.end() || !profile_list->is_array()) return prefix + "profiles: missing or not an array";
  return "";
}

// Reads the node types and profiles of a document whose frame is right.
// On failure returns false with *error set; may throw nlohmann exceptions.
bool ParseDocument(const nlohmann::json& doc, std::vector<NodeTypeRow>* nodes, std::vector<ProfileRecord>* profiles,
                   std::string* error) {
  const nlohmann::json& node_list = doc.at("node_types");
  const nlohmann::json& profile_list = doc.at("profiles");
  std::string problem;
  for (size_t i = 0; problem.empty() && i < node_list.size(); ++i) {
    NodeTypeRow row;
    if (ParseNodeType(node_list[i], i, &row, &problem)) nodes->push_back(std::move(row));
  }
  for (size_t i = 0; problem.empty() && i < profile_list.size(); ++i) {
    ProfileRecord r;
    if (ParseProfile(profile_list[i], "profiles[" + std::to_string(i) + "].", &r, &problem)) {
      profiles->push_back(std::move(r));
    }
  }
  if (problem.empty()) return true;
  SetError(error, kImportPrefix + problem + "; fix the document (nothing was imported)");
  return false;
}

}  // namespace

nlohmann::json ExportProfiles(ProfileStore& store, std::string* error) {
  ClearError(error);
  std::vector<NodeTypeRow> nodes;
  std::vector<ProfileRecord> profiles;
  if (!store.ReadForExport(&nodes, &profiles, error)) return nullptr;
  nlohmann::json doc = {{"format", "multilane-profiles"},
                        {"version", 1},
                        {"exported_at", mla::UtcNow()},
                        {"node_types", nlohmann::json::array()},
                        {"profiles", nlohmann::json::array()}};
  for (const NodeTypeRow& n : nodes) {
    nlohmann::json fingerprint = nlohmann::json::parse(n.fingerprint_json, nullptr, false);
    if (fingerprint.is_discarded()) {
      SetError(error, sql::Prefix(store.path()) + "node type " + n.key + " has a damaged fingerprint_json; " +
                          sql::kDamagedFix);
      return nullptr;
    }
    doc["node_types"].push_back(
        {{"key", n.key}, {"description", n.description}, {"fingerprint", fingerprint}, {"first_seen", n.first_seen}});
  }
  for (const ProfileRecord& r : profiles) doc["profiles"].push_back(ProfileToJson(r));
  return doc;
}

bool ImportProfiles(ProfileStore& store, const nlohmann::json& doc, int* imported, std::string* error) {
  if (imported != nullptr) *imported = 0;
  ClearError(error);
  std::vector<NodeTypeRow> nodes;
  std::vector<ProfileRecord> profiles;
  try {
    const std::string frame = FrameProblem(doc);
    if (!frame.empty()) return SetError(error, frame);
    if (!ParseDocument(doc, &nodes, &profiles, error)) return false;
  } catch (const std::exception& e) {
    SetError(error, std::string(kImportPrefix) + "malformed document (" + e.what() + "); nothing was imported");
    return false;
  }
  return store.Import(nodes, std::move(profiles), imported, error);
}

}  // namespace mldb
