// record_check.cc: the checks of a profile record (record_check.h).
#include "db/record_check.h"

#include "vocab/outside_input.h"
#include "vocab/profile.h"
#include "db/profile_check.h"
#include "vocab/refuse.h"

namespace mldb {

bool ValidEntry(const ProfileEntryRow& e, const std::string& where, std::string* error) {
  if (e.mem_kind != "host" && e.mem_kind != "device") {
    *error = where + "mem_kind: must be \"host\" or \"device\", not \"" + mla::Excerpt(e.mem_kind) + "\"";
  } else if (e.min_bytes < 0) {
    *error = where + "min_bytes: must not be negative";
  } else if (e.max_bytes && *e.max_bytes <= e.min_bytes) {
    *error = where + "max_bytes: must be larger than min_bytes (or null for no upper bound)";
  } else if (e.algo.empty()) {
    *error = where + "algo: must not be empty";
  } else if (e.ppg < 0 || e.lanes < 0 || e.chunk_bytes < 0) {
    *error = where + "ppg, lanes, chunk_bytes: must not be negative (0 = default)";
  } else if (!e.system_algorithm.empty() &&
             (e.algo != "passthrough" || !mla::IsSystemAlgorithmName(e.system_algorithm))) {
    *error = where +
             "mpi: names one of the system MPI's algorithms (lowercase letters, digits and '_'), and only "
             "with algo \"passthrough\", not \"" +
             mla::Excerpt(e.system_algorithm) + "\" with \"" + mla::Excerpt(e.algo) + "\"";
  } else {
    return true;
  }
  return false;
}

bool ValidRecord(const ProfileRecord& r, const std::string& where, std::string* error) {
  if (r.nodes < 0 || r.ranks_per_gpu < 0)
    return mla::Refuse(error, where + "nodes, ranks_per_gpu: must not be negative");
  if (r.profile_text.empty()) return mla::Refuse(error, where + "profile_text: must not be empty");
  for (size_t i = 0; i < r.entries.size(); ++i) {
    if (!ValidEntry(r.entries[i], where + "entries[" + std::to_string(i) + "].", error)) {
      return false;
    }
  }
  // What `run` gives the library (the text) must be what `show` lists (the rows).
  std::string why;
  if (!CheckProfileText(r.profile_text, r.entries, &why)) return mla::Refuse(error, where + why);
  return true;
}

}  // namespace mldb
