// What a real run leaves in a database, and how lockbench finds it again.
//
//  - Every session lockbench opens is named (application_name)
//    "lockbench/<run-id>/<part>": a run's own backends are found by that
//    prefix, in the target database only, and nothing else is ever terminated.
//  - Leftovers are counted with the same meaning as the simulator's
//    locks.leaked: session advisory locks still granted to lockbench sessions,
//    and leases never released (a lease row whose locked_at is still set).
//
//  - A run's rows belong to its runner. Each runner keeps a record in
//    lockbench.runs (host, pid, a heartbeat every kHeartbeatPeriod) on a session
//    of its own, for as long as its rows exist. A runner killed with kill -9
//    leaves its rows and its record; the next run's start reclaims them when
//    the runner is proven gone (reclaim_dead_runs): no session of that run in
//    the server, and on this host its pid no longer exists, on another host its
//    heartbeat is older than kHeartbeatStale. A live run is never touched.
//
// The SQL lives here. Leases live in lockbench.rows (real/pg_conn.hpp), in
// the rows of the run that took them.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

namespace lockbench::real {

// Every lockbench session's application_name starts with this.
inline constexpr const char* kApplicationPrefix = "lockbench/";

// "lockbench/<run_id>/<part>", cut to PostgreSQL's 63 bytes.
std::string application_name(const std::string& run_id, const std::string& part);

// `url` with application_name=<name> added as a URI parameter (escaped), so
// that every session opened from it carries the name.
std::string url_with_application_name(const std::string& url, const std::string& name);

struct Leftovers {
  std::int64_t advisory_locks = 0;  // granted to lockbench sessions (other runs' at start, this run's at the end)
  std::int64_t leases = 0;          // rows of lockbench.rows whose lease was never released
};

// At the start of a run, before its rows are seeded: advisory locks held by
// sessions of OTHER lockbench runs in this database (the current session
// excluded), and leases left set in other runs' rows of lockbench.rows.
Leftovers leftovers_at_start(pqxx::connection& c, const std::string& run_id);

// Session advisory locks still granted to these backends (the run's pool).
std::int64_t advisory_locks_held_by(pqxx::connection& c, const std::vector<int>& pids);
// Advisory locks (bigint keys) granted in this database whose key is one of
// this run's (real/pg_conn.hpp's is_run_advisory_key), whichever backend holds
// them: behind PgBouncer the pools' pids are not the backends'.
std::int64_t advisory_locks_of_run(pqxx::connection& c, std::int64_t run);
// Leases never released in this run's rows.
std::int64_t leases_held(pqxx::connection& c, std::int64_t run);
// Clears every lease still set in this run's rows.
std::int64_t release_leases(pqxx::connection& c, std::int64_t run);
// Terminates the backends of this run (by application_name) in the current
// database, except the calling session, and waits (at most 5 s) until they are
// gone, their locks with them. Returns how many were signalled.
std::int64_t terminate_run_backends(pqxx::connection& c, const std::string& run_id);

inline constexpr std::chrono::seconds kHeartbeatPeriod{2};
inline constexpr std::chrono::seconds kHeartbeatStale{30};

// The run's record in lockbench.runs, from before its rows are seeded until
// after they are deleted: made by the constructor (which throws DbError), its
// heartbeat kept on a session of its own ("lockbench/<run-id>/record"),
// deleted by the destructor together with the run's rows, whatever way the
// run ends. A heartbeat whose session was lost (terminated, a server restart)
// opens it again at once, so that a live run always has its record session
// (reclaim_dead_runs never takes it for gone). A heartbeat that finds the
// record itself gone (another runner reclaimed it, or it was deleted by hand)
// sets lost(): the run stops with an error (RealRun::run).
class RunRecord {
 public:
  RunRecord(const std::string& url, std::int64_t run, const std::string& run_id);
  ~RunRecord();
  RunRecord(const RunRecord&) = delete;
  RunRecord& operator=(const RunRecord&) = delete;

  bool lost() const { return lost_.load(); }
  std::int64_t run() const { return run_; }
  int reconnects() const { return reconnects_.load(); }

 private:
  void beat();
  bool beat_once();  // false when the session failed
  const std::string url_, session_name_;
  std::unique_ptr<pqxx::connection> conn_;  // used by the heartbeat thread only, then by the destructor
  std::int64_t run_;
  std::atomic<bool> lost_{false};
  std::atomic<int> reconnects_{0};
  std::mutex mu_;
  std::condition_variable stop_cv_;
  bool stop_ = false;  // GUARDED_BY(mu_)
  std::thread heartbeat_;
};

// What reclaim_dead_runs removed, and what it left alone.
struct Reclaimed {
  std::int64_t runs = 0;           // records of runners proven gone
  std::int64_t rows = 0;           // their rows deleted from lockbench.rows
  std::vector<std::string> what;   // per run: "run-id (host pid N)"
  std::int64_t unowned_runs = 0;   // runs with rows and no record (older lockbench, calibrate, serve alone): kept
};

// The host name lockbench records (gethostname).
std::string this_host();

// Deletes the rows and records of runs whose runner is proven gone (see the
// top of this file); never a run with a session in the server, a live pid on
// this host, or a fresh heartbeat.
Reclaimed reclaim_dead_runs(pqxx::connection& c);
// One line on stderr naming what was reclaimed (nothing when nothing was).
void report_reclaimed(const Reclaimed& r, const std::string& shown_db);
// The result's reclaimed_at_start: {runs, rows, what, unowned_runs_kept}.
nlohmann::json reclaimed_json(const Reclaimed& r);

}  // namespace lockbench::real
