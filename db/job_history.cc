// job_history.cc: the job history's rows in the profile store
// (job_history.h, ProfileStore::RecordJobRun / JobRuns / ForgetJobRuns).
#include "db/job_history.h"

#include <cmath>

#include "db/profile_store.h"
#include "db/sql.h"
#include "vocab/job_key.h"
#include "vocab/utc_time.h"

namespace mldb {

using sql::ClearError;
using sql::DbError;
using sql::Prefix;
using sql::SetError;
using sql::Stmt;

namespace {

const char kRunColumns[] =
    "SELECT id, job_key, run_id, job_name, job_id, started_utc, recorded_utc, node_type, profile_digest, nodes, ranks, "
    "gpus,"
    " ranks_per_gpu, algorithms, wall_s, compute_s, allreduce_s, wait_s, energy_j, histogram_json FROM job_history";

mla::JobRun ReadRun(Stmt& s) {
  mla::JobRun r;
  r.id = s.Int(0);
  r.job_key = s.Text(1);
  r.run_id = s.Text(2);
  r.job_name = s.Text(3);
  r.job_id = s.Text(4);
  r.started_utc = s.Text(5);
  r.recorded_utc = s.Text(6);
  r.node_type = s.Text(7);
  r.profile_digest = s.Text(8);
  r.nodes = static_cast<int>(s.Int(9));
  r.ranks = static_cast<int>(s.Int(10));
  r.gpus = static_cast<int>(s.Int(11));
  r.ranks_per_gpu = static_cast<int>(s.Int(12));
  r.algorithms = s.Text(13);
  r.wall_s = s.Double(14);
  r.compute_s = s.Double(15);
  r.allreduce_s = s.Double(16);
  r.wait_s = s.Double(17);
  if (!s.IsNull(18)) r.energy_j = s.Double(18);
  r.histogram_json = s.Text(19);
  return r;
}

int InsertRun(sqlite3* db, const mla::JobRun& r, bool* added) {
  Stmt s(db,
         "INSERT OR IGNORE INTO job_history(job_key, run_id, job_name, job_id, started_utc, recorded_utc, node_type,"
         " profile_digest, nodes, ranks, gpus, ranks_per_gpu, algorithms, wall_s, compute_s, allreduce_s, wait_s,"
         " energy_j, histogram_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,"
         " ?17, ?18, ?19)");
  if (s.prepare_rc() != SQLITE_OK) return s.prepare_rc();
  s.Bind(1, r.job_key);
  s.Bind(2, r.run_id);
  s.Bind(3, r.job_name);
  s.Bind(4, r.job_id);
  s.Bind(5, r.started_utc);
  s.Bind(6, r.recorded_utc);
  s.Bind(7, r.node_type);
  s.Bind(8, r.profile_digest);
  s.Bind(9, static_cast<int64_t>(r.nodes));
  s.Bind(10, static_cast<int64_t>(r.ranks));
  s.Bind(11, static_cast<int64_t>(r.gpus));
  s.Bind(12, static_cast<int64_t>(r.ranks_per_gpu));
  s.Bind(13, r.algorithms);
  s.BindDouble(14, r.wall_s);
  s.BindDouble(15, r.compute_s);
  s.BindDouble(16, r.allreduce_s);
  s.BindDouble(17, r.wait_s);
  if (r.energy_j)
    s.BindDouble(18, *r.energy_j);
  else
    s.BindNull(18);
  s.Bind(19, r.histogram_json);
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
  ClearError(error);
  *added = false;
  if (access_ != Access::kReadWrite) {
    SetError(error, Prefix(path_) + "opened read-only, cannot record a job run; open it read-write");
    return false;
  }
  if (const std::string invalid = InvalidJobRun(run); !invalid.empty()) {
    SetError(error, Prefix(path_) + "cannot record an invalid job run: " + invalid);
    return false;
  }
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
  ClearError(error);
  std::vector<mla::JobRun> out;
  {  // a database of schema 2 or older (opened read-only) has no history yet
    Stmt t(db_, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'job_history'");
    if (t.prepare_rc() == SQLITE_OK && t.Step() == SQLITE_DONE) return out;
  }
  const std::string query =
      std::string(kRunColumns) + (job_key.empty() ? "" : " WHERE job_key = ?1") + " ORDER BY job_key, started_utc, id";
  Stmt s(db_, query.c_str());
  int rc = s.prepare_rc();
  if (rc == SQLITE_OK) {
    if (!job_key.empty()) s.Bind(1, job_key);
    while ((rc = s.Step()) == SQLITE_ROW) out.push_back(ReadRun(s));
    if (rc == SQLITE_DONE) rc = SQLITE_OK;
  }
  if (rc != SQLITE_OK) {
    SetError(error, DbError(path_, db_, rc, "reading the job history"));
    return {};
  }
  return out;
}

bool ProfileStore::ForgetJobRuns(const std::string& job_key, int* forgotten, std::string* error) {
  std::lock_guard<std::mutex> lock(mu_);
  ClearError(error);
  *forgotten = 0;
  if (access_ != Access::kReadWrite) {
    SetError(error, Prefix(path_) + "opened read-only, cannot forget job runs; open it read-write");
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
