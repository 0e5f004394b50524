// cmd_withdraw.cc: `multilane withdraw ID`: take a bad profile out of a
// database, so that no job gets it again; says which profile is in force
// for its node type and partition afterwards.
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "launcher/commands.h"
#include "launcher/context.h"
#include "db/profile_store.h"
#include "launcher/store_target.h"

namespace multilane {
namespace {

struct WithdrawOptions {
  int64_t id = 0;
  std::string database;
  bool system = false;
};

// "node type K, partition P", for the lines below.
std::string Group(const mldb::ProfileRecord& p) {
  return "node type " + p.node_type_key + (p.partition.empty() ? "" : ", partition " + p.partition);
}

// What jobs of `gone`'s node type, partition and versions get now: the
// store's own lookup (ProfileStore::Find), the one `multilane resolve` uses.
std::string InForceAfter(mldb::ProfileStore* store, const mldb::ProfileRecord& gone) {
  std::string error;
  const auto next = store->Find(gone.node_type_key, gone.partition, gone.library_version, gone.mpi_version, &error);
  if (next)
    return "profile " + std::to_string(next->id) + " (tuned " + next->tuned_at +
           (next->partition.empty() ? ", for any partition" : "") + ") is now in force there";
  return "no profile is left there for libmlallreduce " + gone.library_version +
         ": its jobs run without multilane until you tune again (`multilane tune" +
         (gone.partition.empty() ? std::string() : " --partition " + gone.partition) + "`)";
}

int Withdraw(const WithdrawOptions& opt) {
  const StoreTarget target = ChooseStoreTarget(opt.database, opt.system);
  if (target.path.empty() || access(target.path.c_str(), F_OK) != 0)
    return Fail("no database at " + (target.path.empty() ? std::string("the user's (no HOME)") : target.path) +
                ", so no profile to withdraw; name the database with --db FILE or --system");
  std::string error;
  auto store = OpenStoreTarget(target, &error);
  if (!store) return Fail(error);
  const std::vector<mldb::ProfileRecord> all = store->List(&error);
  if (!error.empty()) return Fail(error);
  mldb::ProfileRecord gone;
  for (const mldb::ProfileRecord& p : all)
    if (p.id == opt.id) gone = p;
  if (!store->Withdraw(opt.id, &error)) return Fail(error);
  if (!FinishStoreTarget(store.get(), target, &error)) return Fail(error);
  std::fprintf(stderr, "multilane: withdrew profile %lld (%s, tuned %s by %s) from %s; %s\n",
               static_cast<long long>(opt.id), Group(gone).c_str(), gone.tuned_at.c_str(), gone.tuned_by.c_str(),
               target.path.c_str(), InForceAfter(store.get(), gone).c_str());
  return 0;
}

}  // namespace

void AddWithdrawCommand(CLI::App& app, int* status) {
  auto* opt = new WithdrawOptions();
  CLI::App* cmd = app.add_subcommand(
      "withdraw", "Withdraw a profile (a bad tune) from a database: no job gets it again; `show` prints the ids");
  cmd->add_option("id", opt->id, "The profile's id, as `multilane show` prints it")->required();
  cmd->add_flag("--system", opt->system, "Withdraw from the system database (the admin's)");
  cmd->add_option("--db", opt->database, "Withdraw from this database file");
  cmd->footer(
      "Deletes the profile with its entries and measurements (`multilane export` first keeps a copy); its node "
      "type's next newest profile of the same partition and versions, if any, is then in force, and the command "
      "says which. `multilane show` marks the profile in force for each node type and partition. The system "
      "database is written through its working copy and published again, so withdrawing from it needs the rights "
      "of its admin (root for the packages' /var/lib/multilane), like every write to it.");
  cmd->callback([opt, status] { *status = Withdraw(*opt); });
}

}  // namespace multilane
