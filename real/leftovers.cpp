#include "real/leftovers.hpp"

#include <cctype>
#include <chrono>
#include <thread>

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

}  // namespace lockbench::real
