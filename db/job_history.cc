// job_history.cc: the job history's rows in the profile store
// (job_history.h, ProfileStore::RecordJobRun / JobRuns / ForgetJobRuns).
#include "db/job_history.h"

#include <cmath>

#include "db/profile_store.h"
#include "db/sql.h"
#include "vocab/job_key.h"
#include "vocab/utc_time.h"

namespace mldb {

using sql::Stmt;

namespace {

// The job_history columns after id, in the table's order, each with its field
// of `r`: the one list that the query, the insert and the reader follow.
template <typename Run, typename Visit>
void EachColumn(Run& r, Visit visit) {
  visit("job_key", r.job_key);
  visit("run_id", r.run_id);
  visit("job_name", r.job_name);
  visit("job_id", r.job_id);
  visit("started_utc", r.started_utc);
  visit("recorded_utc", r.recorded_utc);
  visit("node_type", r.node_type);
  visit("profile_digest", r.profile_digest);
  visit("nodes", r.nodes);
  visit("ranks", r.ranks);
  visit("gpus", r.gpus);
  visit("ranks_per_gpu", r.ranks_per_gpu);
  visit("algorithms", r.algorithms);
  visit("wall_s", r.wall_s);
  visit("compute_s", r.compute_s);
  visit("allreduce_s", r.allreduce_s);
  visit("wait_s", r.wait_s);
  visit("energy_j", r.energy_j);
  visit("histogram_json", r.histogram_json);
}

// "job_key, run_id, ...": the names of EachColumn, each after `before`
// (":" makes them the insert's named parameters, numbered in this order).
std::string ColumnList(const char* before) {
  std::string list;
  mla::JobRun r;
  EachColumn(r, [&](const char* name, auto&) { list += std::string(list.empty() ? "" : ", ") + before + name; });
  return list;
}

// The start of every query of runs: id, then the columns ReadRun reads.
std::string RunQuery() { return "SELECT id, " + ColumnList("") + " FROM job_history"; }

mla::JobRun ReadRun(Stmt& s) {
  mla::JobRun r;
  r.id = s.Int(0);
  int c = 1;
  EachColumn(r, [&](const char*, auto& field) { s.Read(c++, &field); });
  return r;
}

int InsertRun(sqlite3* db, const mla::JobRun& r, bool* added) {
  const std::string insert =
      "INSERT OR IGNORE INTO job_history(" + ColumnList("") + ") VALUES (" + ColumnList(":") + ")";
  Stmt s(db, insert.c_str());
  if (s.prepare_rc() != SQLITE_OK) return s.prepare_rc();
  int i = 1;
  EachColumn(r, [&](const char*, const auto& field) { s.Put(i++, field); });
  const int rc = s.Step();
  if (rc != SQLITE_DONE) return rc;
  *added = sqlite3_changes(db) > 0;
  return SQLITE_OK;
}

// Drops the oldest runs of `key` beyond kHistoryRunsPerKey, then the oldest
// of all beyond kHistoryRunsInAll.
int Trim(sqlite3* db, const std::string& key) {
  Stmt per_key(db,
               "DELETE FROM job_history WHERE job_key = ?1 AND id NOT IN (SELECT id FROM job_history WHERE job_key = ?1"
               " ORDER BY started_utc DESC, id DESC LIMIT ?2)");
  if (per_key.prepare_rc() != SQLITE_OK) return per_key.prepare_rc();
  per_key.Bind(1, key);
  per_key.Bind(2, static_cast<int64_t>(kHistoryRunsPerKey));
  int rc = per_key.Step();
  if (rc != SQLITE_DONE) return rc;
  Stmt all(db,
           "DELETE FROM job_history WHERE id NOT IN (SELECT id FROM job_history ORDER BY started_utc DESC, id DESC"
           " LIMIT ?1)");
  if (all.prepare_rc() != SQLITE_OK) return all.prepare_rc();
  all.Bind(1, static_cast<int64_t>(kHistoryRunsInAll));
  rc = all.Step();
  return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

bool Finite(double v) { return std::isfinite(v) && v >= 0; }

}  // namespace

std::string InvalidJobRun(const mla::JobRun& r) {
  if (!mla::ValidJobKey(r.job_key)) return "job_key must be " + mla::JobKeyRule();
  if (r.started_utc.empty()) return "started_utc is empty";
  if (r.run_id.empty()) return "run_id is empty";
  if (r.ranks < 1 || r.nodes < 1 || r.gpus < 0 || r.ranks_per_gpu < 0) return "ranks and nodes must be at least 1";
  if (!Finite(r.wall_s) || !Finite(r.compute_s) || !Finite(r.allreduce_s) || !Finite(r.wait_s))
    return "the times must be finite and not negative";
  if (r.energy_j && !Finite(*r.energy_j)) return "energy_j must be finite and not negative";
  if (r.histogram_json.empty() || r.histogram_json[0] != '[') return "histogram_json must be a JSON array";
  return "";
}

bool ProfileStore::RecordJobRun(const mla::JobRun& run, bool* added, std::string* error) {
  std::lock_guard<std::mutex> lock(mu_);
  sql::ClearError(error);
  *added = false;
  if (access_ != Access::kReadWrite) {
    sql::SetError(error, sql::Prefix(path_) + "opened read-only, cannot record a job run; open it read-write");
    return false;
  }
  if (const std::string invalid = InvalidJobRun(run); !invalid.empty())
    return sql::SetError(error, sql::Prefix(path_) + "cannot record an invalid job run: " + invalid);
  mla::JobRun copy = run;
  if (copy.recorded_utc.empty()) copy.recorded_utc = mla::UtcNow();
  return sql::WriteTransaction(
      db_, path_, "recording a job run",
      [&](std::string*) {
        int rc = InsertRun(db_, copy, added);
        if (rc == SQLITE_OK) rc = Trim(db_, copy.job_key);
        if (rc == SQLITE_OK && *added) {  // a run older than the kept ones goes at once
          Stmt kept(db_, "SELECT 1 FROM job_history WHERE job_key = ?1 AND run_id = ?2");
          kept.Bind(1, copy.job_key);
          kept.Bind(2, copy.run_id);
          rc = kept.Step();
          *added = rc == SQLITE_ROW;
          rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_OK : rc;
        }
        return rc;
      },
      error);
}

std::vector<mla::JobRun> ProfileStore::JobRuns(const std::string& job_key, std::string* error) {
  std::lock_guard<std::mutex> lock(mu_);
  sql::ClearError(error);
  std::vector<mla::JobRun> out;
  {  // a database of schema 2 or older (opened read-only) has no history yet
    Stmt t(db_, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'job_history'");
    if (t.prepare_rc() == SQLITE_OK && t.Step() == SQLITE_DONE) return out;
  }
  const std::string query =
      RunQuery() + (job_key.empty() ? "" : " WHERE job_key = ?1") + " ORDER BY job_key, started_utc, id";
  Stmt s(db_, query.c_str());
  int rc = s.prepare_rc();
  if (rc == SQLITE_OK) {
    if (!job_key.empty()) s.Bind(1, job_key);
    while ((rc = s.Step()) == SQLITE_ROW) out.push_back(ReadRun(s));
    if (rc == SQLITE_DONE) rc = SQLITE_OK;
  }
  if (rc != SQLITE_OK) {
    sql::SetError(error, sql::DbError(path_, db_, rc, "reading the job history"));
    return {};
  }
  return out;
}

bool ProfileStore::ForgetJobRuns(const std::string& job_key, int* forgotten, std::string* error) {
  std::lock_guard<std::mutex> lock(mu_);
  sql::ClearError(error);
  *forgotten = 0;
  if (access_ != Access::kReadWrite) {
    sql::SetError(error, sql::Prefix(path_) + "opened read-only, cannot forget job runs; open it read-write");
    return false;
  }
  return sql::WriteTransaction(
      db_, path_, "forgetting job runs",
      [&](std::string*) {
        Stmt s(db_, job_key.empty() ? "DELETE FROM job_history" : "DELETE FROM job_history WHERE job_key = ?1");
        if (s.prepare_rc() != SQLITE_OK) return s.prepare_rc();
        if (!job_key.empty()) s.Bind(1, job_key);
        const int rc = s.Step();
        if (rc != SQLITE_DONE) return rc;
        *forgotten = sqlite3_changes(db_);
        return SQLITE_OK;
      },
      error);
}

}  // namespace mldb
