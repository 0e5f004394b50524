// cmd_transfer.cc: `multilane export FILE` and `multilane import FILE`: move
// profiles between clusters as JSON.
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "launcher/commands.h"
#include "launcher/context.h"
#include "vocab/outside_input.h"
#include "db/paths.h"
#include "db/profile_json.h"
#include "db/profile_store.h"
#include "launcher/output_file.h"
#include "launcher/store_target.h"

namespace multilane {
namespace {

struct TransferOptions {
  std::string file;
  std::string database;
  bool system = false;
};

std::string Target(const TransferOptions& opt) {
  if (!opt.database.empty()) return opt.database;
  return opt.system ? mldb::SystemDatabasePath() : mldb::UserDatabasePath();
}

int Export(const TransferOptions& opt) {
  const std::string path = Target(opt);
  std::string error;
  auto store = mldb::ProfileStore::Open(path, mldb::ProfileStore::Access::kReadOnly, &error);
  if (!store) return Fail(error);
  nlohmann::json doc = mldb::ExportProfiles(*store, &error);
  if (!error.empty()) return Fail(path + ": " + error);
  const std::string text = doc.dump(2) + "\n";
  if (opt.file == "-") {
    std::fputs(text.c_str(), stdout);
    return 0;
  }
  if (!WriteOutputFile(opt.file, text, &error)) return Fail(error);
  std::fprintf(stderr, "multilane: exported %zu profile(s) of %s to %s\n",
               doc.contains("profiles") ? doc["profiles"].size() : size_t{0}, path.c_str(), opt.file.c_str());
  return 0;
}

int Import(const TransferOptions& opt) {
  std::string text, error;
  if (!mla::ReadInputFile(opt.file, &text, &error)) return Fail(opt.file + ": " + error);
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Fail(opt.file + " is not JSON: give a file written by `multilane export`");
  // The system database (or any published snapshot) is written through its
  // working copy and published again (db/snapshot.h).
  const StoreTarget target = ChooseStoreTarget(opt.database, opt.system);
  const std::string path = target.path;
  auto store = OpenStoreTarget(target, &error);
  if (!store) return Fail(error);
  int imported = 0;
  if (!mldb::ImportProfiles(*store, doc, &imported, &error)) return Fail(opt.file + ": " + error);
  if (!FinishStoreTarget(store.get(), target, &error)) return Fail(error);
  std::fprintf(stderr, "multilane: imported %d profile(s) into %s\n", imported, path.c_str());
  return 0;
}

}  // namespace

void AddTransferCommands(CLI::App& app, int* status) {
  auto* exp = new TransferOptions();
  CLI::App* e = app.add_subcommand("export", "Write the profiles of a database as JSON (FILE, or - for stdout)");
  e->add_option("file", exp->file, "The JSON file to write")->required();
  e->add_option("--db", exp->database, "Database to read (default: the user's)");
  e->add_flag("--system", exp->system, "Read the system database");
  e->callback([exp, status] { *status = Export(*exp); });

  auto* imp = new TransferOptions();
  CLI::App* i = app.add_subcommand("import", "Add the profiles of a JSON file written by `multilane export`");
  i->add_option("file", imp->file, "The JSON file to read")->required()->check(CLI::ExistingFile);
  i->add_option("--db", imp->database, "Database to write (default: the user's)");
  i->add_flag("--system", imp->system, "Write the system database (the admin's)");
  i->callback([imp, status] { *status = Import(*imp); });
}

}  // namespace multilane
