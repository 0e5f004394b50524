// fuzz_import.cc: `multilane import` (db/profile_json.h ImportProfiles, with the
// profile check of db/profile_check.h) into a real SQLite file.  A document
// that is accepted must export again and import a second time as a no-op.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "db/profile_json.h"
#include "db/profile_store.h"

namespace {
mldb::ProfileStore* Store() {
  static std::unique_ptr<mldb::ProfileStore> store = [] {
    const std::string path = "/tmp/multilane-fuzz-import-" + std::to_string(getpid()) + ".db";
    unlink(path.c_str());
    std::string error;
    auto s = mldb::ProfileStore::Open(path, mldb::ProfileStore::Access::kReadWrite, &error);
    if (!s) std::abort();
    return s;
  }();
  return store.get();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const nlohmann::json doc = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return 0;
  int imported = -1;
  std::string error;
  if (!mldb::ImportProfiles(*Store(), doc, &imported, &error)) {
    if (error.empty() || imported != 0) std::abort();
    return 0;
  }
  int again = -1;
  if (!mldb::ImportProfiles(*Store(), doc, &again, &error) || again != 0) std::abort();  // importing twice adds nothing
  return 0;
}
