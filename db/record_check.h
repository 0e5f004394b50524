// record_check.h: what a profile record must satisfy before the store keeps
// it, whether it comes from a tune (ProfileStore::Publish) or from an export
// document (profile_json.h ImportProfiles).  Pure: no I/O.
#ifndef MLDB_RECORD_CHECK_H_
#define MLDB_RECORD_CHECK_H_

#include <string>

#include "db/profile_store.h"

namespace mldb {

// True when entry `e` is one the store keeps: mem_kind "host" or "device",
// min_bytes >= 0, max_bytes (when set) above min_bytes, an algorithm, and no
// negative ppg, lanes or chunk_bytes.  Otherwise false, with *error set to
// `where` + the field + what is wrong, e.g. "entries[0].mem_kind: ...".
bool ValidEntry(const ProfileEntryRow& e, const std::string& where, std::string* error);

// True when record `r` is one the store keeps: no negative nodes or
// ranks_per_gpu, a profile text, valid entries (ValidEntry, as
// where + "entries[i]."), and a text that says what the entries say
// (CheckProfileText).  Otherwise false with *error set as for ValidEntry.
bool ValidRecord(const ProfileRecord& r, const std::string& where, std::string* error);

}  // namespace mldb

#endif  // MLDB_RECORD_CHECK_H_
