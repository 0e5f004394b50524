// profile_json.h: a profile store's export document, the JSON that
// `multilane export` writes and `multilane import` reads (docs/admin.md):
// {"format": "multilane-profiles", "version": 1, "exported_at": ...,
//  "node_types": [...], "profiles": [...]}.  Kept apart from the store so
// that only the users of the document depend on nlohmann/json.
#ifndef MLDB_PROFILE_JSON_H_
#define MLDB_PROFILE_JSON_H_

#include <string>

#include <nlohmann/json.hpp>

#include "db/profile_store.h"

namespace mldb {

// All node types and complete profiles of `store` with their entries (no
// measurements) as an export document.  On failure returns null JSON and
// sets *error (when not null; cleared on success).
nlohmann::json ExportProfiles(ProfileStore& store, std::string* error);

// Adds the node types and profiles of a document written by ExportProfiles
// to `store`.  Validates the whole document first (errors name the field,
// e.g. "profiles[2].entries[0].mem_kind: ..."), then writes everything in
// one transaction, or nothing (ProfileStore::Import).  Profiles already
// present (same node type, partition, versions, tuned_at and text) are
// skipped, so importing twice adds nothing.  *imported (when not null) =
// profiles added (0 on failure).  Never throws.
bool ImportProfiles(ProfileStore& store, const nlohmann::json& document, int* imported, std::string* error);

}  // namespace mldb

#endif  // MLDB_PROFILE_JSON_H_
