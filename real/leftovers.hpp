// What a real run leaves in a database, and how lockbench finds it again.
//
//  - Every session lockbench opens is named (application_name)
//    "lockbench/<run-id>/<part>": a run's own backends are found by that
//    prefix, in the target database only, and nothing else is ever terminated.
//  - Leftovers are counted with the same meaning as the simulator's
//    locks.leaked: session advisory locks still granted to lockbench sessions,
//    and leases never released (a lease row whose locked_at is still set).
//
// The SQL lives here. Leases live in lockbench.rows (real/pg_conn.hpp), in
// the rows of the run that took them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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

}  // namespace lockbench::real
