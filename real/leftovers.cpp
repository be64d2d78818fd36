#include "real/leftovers.hpp"

#include <signal.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <thread>

#include "base/redact.hpp"
#include "real/pg_conn.hpp"

namespace lockbench::real {

namespace {

constexpr std::size_t kNameBytesMax = 63;  // NAMEDATALEN - 1

std::string run_pattern(const std::string& run_id) { return std::string(kApplicationPrefix) + run_id + "/%"; }


}  // namespace

std::string application_name(const std::string& run_id, const std::string& part) {
  std::string name = std::string(kApplicationPrefix) + run_id + "/" + part;
  if (name.size() > kNameBytesMax) name.resize(kNameBytesMax);
  return name;
}

std::string url_with_application_name(const std::string& url, const std::string& name) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string escaped;
  for (const char ch : name) {
    const auto u = static_cast<unsigned char>(ch);
    if (std::isalnum(u) || ch == '-' || ch == '_' || ch == '.') {
      escaped.push_back(ch);
    } else {
      escaped.push_back('%');
      escaped.push_back(kHex[u >> 4]);
      escaped.push_back(kHex[u & 15]);
    }
  }
  // A fragment would swallow the parameter; lockbench URLs have none.
  const std::string base = url.substr(0, url.find('#'));
  return base + (base.find('?') == std::string::npos ? "?" : "&") + "application_name=" + escaped;
}

Leftovers leftovers_at_start(pqxx::connection& c, const std::string& run_id) {
  Leftovers out;
  pqxx::nontransaction tx(c);
  out.advisory_locks =
      tx.exec_params1("SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
                      "WHERE l.locktype = 'advisory' AND l.granted AND a.datname = current_database() "
                      "AND a.application_name LIKE $1 AND a.application_name NOT LIKE $2 AND l.pid <> pg_backend_pid()",
                      std::string(kApplicationPrefix) + "%", run_pattern(run_id))[0]
          .as<std::int64_t>();
  const bool table = tx.exec1("SELECT to_regclass('lockbench.rows') IS NOT NULL")[0].as<bool>();
  if (table) out.leases = tx.exec1("SELECT count(*) FROM lockbench.rows WHERE locked_at IS NOT NULL")[0].as<std::int64_t>();
  return out;
}

std::int64_t advisory_locks_held_by(pqxx::connection& c, const std::vector<int>& pids) {
  if (pids.empty()) return 0;
  std::string array = "{";
  for (std::size_t i = 0; i < pids.size(); ++i) array += (i ? "," : "") + std::to_string(pids[i]);
  array += "}";
  pqxx::nontransaction tx(c);
  return tx.exec_params1("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid = ANY($1::int[])",
                         array)[0]
      .as<std::int64_t>();
}

std::int64_t advisory_locks_of_run(pqxx::connection& c, std::int64_t run) {
  pqxx::nontransaction tx(c);
  const pqxx::result r = tx.exec(
      "SELECT (l.classid::bigint << 32) | l.objid::bigint FROM pg_locks l JOIN pg_database d ON d.oid = l.database "
      "WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 AND d.datname = current_database()");
  std::int64_t n = 0;
  for (const auto& row : r) n += is_run_advisory_key(run, row[0].as<std::int64_t>()) ? 1 : 0;
  return n;
}

std::int64_t leases_held(pqxx::connection& c, std::int64_t run) {
  pqxx::nontransaction tx(c);
  return tx.exec_params1("SELECT count(*) FROM lockbench.rows WHERE run = $1 AND locked_at IS NOT NULL", run)[0]
      .as<std::int64_t>();
}

std::int64_t release_leases(pqxx::connection& c, std::int64_t run) {
  pqxx::nontransaction tx(c);
  return tx.exec_params0("UPDATE lockbench.rows SET locked_at = NULL, lock_owner = NULL "
                         "WHERE run = $1 AND locked_at IS NOT NULL",
                         run)
      .affected_rows();
}

std::int64_t terminate_run_backends(pqxx::connection& c, const std::string& run_id) {
  pqxx::nontransaction tx(c);
  // The run's backends first, then the signal: in one statement's WHERE clause
  // PostgreSQL may evaluate pg_terminate_backend before the filters.
  const pqxx::result ended = tx.exec_params(
      "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE $1 "
      "AND pid <> pg_backend_pid()",
      run_pattern(run_id));
  std::string pids = "{";
  for (std::size_t i = 0; i < ended.size(); ++i) pids += (i ? "," : "") + ended[i][0].as<std::string>();
  pids += "}";
  if (ended.empty()) return 0;
  tx.exec_params("SELECT count(pg_terminate_backend(p)) FROM unnest($1::int[]) AS p", pids);
  // pg_terminate_backend only signals: a backend releases its locks as it exits.
  // Wait (bounded) until they are gone, so that what is counted next is what
  // the run really left, not a backend on its way out.
  for (const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
       std::chrono::steady_clock::now() < give_up;) {
    if (tx.exec_params1("SELECT count(*) FROM pg_stat_activity WHERE pid = ANY($1::int[])", pids)[0].as<std::int64_t>() == 0)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return static_cast<std::int64_t>(ended.size());
}

std::string this_host() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

RunRecord::RunRecord(const std::string& url, std::int64_t run, const std::string& run_id)
    : url_(url),
      session_name_(application_name(run_id, "record")),
      conn_(open_session(url_, session_name_)),
      run_(run) {
  pqxx::nontransaction tx(*conn_);
  tx.exec_params0(
      "INSERT INTO lockbench.runs (run, run_id, host, pid) VALUES ($1, $2, $3, $4) "
      "ON CONFLICT (run) DO UPDATE SET run_id = $2, host = $3, pid = $4, heartbeat_at = now()",
      run, run_id, this_host(), static_cast<int>(::getpid()));
  heartbeat_ = std::thread([this] { beat(); });
}

bool RunRecord::beat_once() {
  try {
    if (!conn_) {
      conn_ = open_session(url_, session_name_);
      ++reconnects_;
    }
    pqxx::nontransaction tx(*conn_);
    const pqxx::result r = tx.exec_params("UPDATE lockbench.runs SET heartbeat_at = now() WHERE run = $1", run_);
    if (r.affected_rows() == 0) lost_ = true;  // reclaimed by another runner, or deleted: never written again
    return true;
  } catch (const std::exception&) {
    conn_.reset();  // terminated or broken: a new session, now or at the next beat
    return false;
  }
}

void RunRecord::beat() {
  std::unique_lock lock(mu_);
  while (!stop_cv_.wait_for(lock, kHeartbeatPeriod, [this] { return stop_; })) {
    lock.unlock();
    // A lost session is opened again at once; if the server is down, at the next beat (the pid still proves us alive here).
    if (!lost_.load() && !beat_once()) beat_once();
    lock.lock();
  }
}

RunRecord::~RunRecord() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  heartbeat_.join();
  // The rows go with the record, whatever way the run ended (they are usually gone already);
  // on a new session when the heartbeat's was lost since its last beat.
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      if (!conn_) conn_ = open_session(url_, session_name_);
      pqxx::work tx(*conn_);
      tx.exec_params0("DELETE FROM lockbench.rows WHERE run = $1", run_);
      tx.exec_params0("DELETE FROM lockbench.runs WHERE run = $1", run_);
      tx.commit();
      return;
    } catch (const std::exception& e) {
      conn_.reset();
      if (attempt == 1)
        std::fprintf(stderr, "lockbench: could not remove this run's record from lockbench.runs (run %lld): %s\n",
                     static_cast<long long>(run_), redact_secrets(e.what()).c_str());
    }
  }
}

void report_reclaimed(const Reclaimed& r, const std::string& shown_db) {
  if (r.runs == 0) return;
  std::string runs;
  for (const auto& w : r.what) runs += (runs.empty() ? "" : ", ") + w;
  std::fprintf(stderr, "lockbench: reclaimed %lld rows of %lld runs whose runner is gone, in %s: %s\n",
               static_cast<long long>(r.rows), static_cast<long long>(r.runs), shown_db.c_str(), runs.c_str());
}

nlohmann::json reclaimed_json(const Reclaimed& r) {
  return {{"runs", r.runs}, {"rows", r.rows}, {"what", r.what}, {"unowned_runs_kept", r.unowned_runs}};
}

namespace {
bool pid_alive(int pid) { return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM); }
}  // namespace

Reclaimed reclaim_dead_runs(pqxx::connection& c) {
  Reclaimed out;
  const std::string host = this_host();
  struct Record {
    std::int64_t run;
    std::string run_id, host;
    int pid;
    double age_s;
    std::int64_t sessions;
  };
  std::vector<Record> records;
  {
    pqxx::nontransaction tx(c);
    if (!tx.exec1("SELECT to_regclass('lockbench.runs') IS NOT NULL")[0].as<bool>()) return out;
    // Every record, with the sessions its run still has anywhere in the server.
    for (const auto& r : tx.exec_params(
             "SELECT r.run, r.run_id, r.host, r.pid, extract(epoch FROM now() - r.heartbeat_at)::float8, "
             "(SELECT count(*) FROM pg_stat_activity a WHERE a.application_name LIKE $1 || r.run_id || '/%') "
             "FROM lockbench.runs r ORDER BY r.started_at",
             std::string(kApplicationPrefix)))
      records.push_back({r[0].as<std::int64_t>(), r[1].as<std::string>(), r[2].as<std::string>(), r[3].as<int>(),
                         r[4].as<double>(), r[5].as<std::int64_t>()});
  }
  for (const auto& rec : records) {
    const bool gone = rec.sessions == 0 && (rec.host == host ? !pid_alive(rec.pid)
                                                              : rec.age_s > static_cast<double>(kHeartbeatStale.count()));
    if (!gone) continue;
    pqxx::work w(c);
    const auto rows = w.exec_params0("DELETE FROM lockbench.rows WHERE run = $1", rec.run).affected_rows();
    // Only if the record is still the one judged (a runner reusing the run key registers anew).
    w.exec_params0("DELETE FROM lockbench.runs WHERE run = $1 AND run_id = $2", rec.run, rec.run_id);
    w.commit();
    ++out.runs;
    out.rows += static_cast<std::int64_t>(rows);
    out.what.push_back(rec.run_id + " (" + rec.host + " pid " + std::to_string(rec.pid) + ")");
  }
  pqxx::nontransaction after(c);
  out.unowned_runs = after.exec1(
      "SELECT count(DISTINCT run) FROM lockbench.rows r WHERE NOT EXISTS "
      "(SELECT 1 FROM lockbench.runs x WHERE x.run = r.run)")[0].as<std::int64_t>();
  return out;
}

}  // namespace lockbench::real
