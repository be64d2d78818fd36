// PostgreSQL's own limits against the real server: a run whose pools exceed
// max_connections is refused at start in one line, and a full shared lock
// table (SQLSTATE 53200) is an error naming it, not a hang.
#include <memory>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "real/run_real.hpp"
#include "real/pg_conn.hpp"
#include "real/pg_limits.hpp"
#include "real/pool.hpp"
#include "test_env.hpp"

namespace lockbench {
namespace real_limits_test {

using namespace std::chrono_literals;
using nlohmann::json;

Settings base(const std::string& strategy) {
  Settings s;
  s.world = "real";
  s.db_url = test::test_db();
  s.partner_url = test::test_partner();
  s.strategy = strategy;
  s.scenario = "switch-primary";
  s.max_threads = 16;
  s.probe_interval = 0s;
  s.connection_timeout = 2s;
  s.duration = 1s;
  s.rate_per_s = 5;
  s.partner_latency = Distribution::fixed(50);
  return s;
}

// The figures are the server's own (SHOW), and in_use counts client sessions
// that are open: three held here and one more that asks SHOW.
TEST(RealLimits, ReadsTheServersLimits) {
  LOCKBENCH_NEED_DB();
  pqxx::connection direct(test::test_db());
  std::vector<std::unique_ptr<pqxx::connection>> held;
  for (int i = 0; i < 3; ++i) held.push_back(std::make_unique<pqxx::connection>(test::test_db()));
  const real::PgLimits l = real::read_pg_limits(test::test_db(), "lockbench/test-limits");
  pqxx::nontransaction tx(direct);
  const auto show = [&](const std::string& name) { return tx.exec("SHOW " + name)[0][0].as<int>(); };
  EXPECT_EQ(l.max_connections, show("max_connections"));
  EXPECT_EQ(l.reserved_connections, show("superuser_reserved_connections"));
  EXPECT_EQ(l.max_locks_per_transaction, show("max_locks_per_transaction"));
  EXPECT_EQ(l.max_prepared_transactions, show("max_prepared_transactions"));
  EXPECT_GE(l.in_use, 4);  // `direct` and the three held; the reading session is not counted
  EXPECT_LT(l.in_use, l.max_connections);
}

TEST(RealLimits, RefusesAtStartInOneLineARunWhosePoolsExceedMaxConnections) {
  LOCKBENCH_NEED_PARTNER();
  const real::PgLimits l = real::read_pg_limits(test::test_db(), "lockbench/test-limits");
  Settings s = base("row-lease");
  s.pods = 4;
  s.maximum_pool_size = l.max_connections / 4 + 1;  // 4 pools together one above max_connections
  try {
    run_real(s);
    ADD_FAILURE() << "a run of " << s.pods * s.maximum_pool_size << " connections was accepted";
  } catch (const SettingError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("--maximum-pool-size: ", 0), 0u) << what;
    EXPECT_NE(what.find("max_connections " + std::to_string(l.max_connections)), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
  s.pods = 1;  // within the limit: runs
  s.maximum_pool_size = 5;
  const json r = run_real(s);
  EXPECT_GT(r["requests"]["ok"].get<int>(), 0);
}

// Fills the server's shared lock table from one open transaction: chunks of
// advisory locks under savepoints, a failed chunk rolled back and retried
// smaller, until not even one more lock fits. Rolled back when it ends.
class LockTableFiller {
 public:
  LockTableFiller() : c_(real::open_session(test::test_db(), "lockbench/test-limits-filler")), tx_(*c_) {
    tx_.exec("BEGIN");
    std::int64_t next = 1;
    for (std::int64_t chunk = 4096; chunk >= 1; chunk /= 4) {
      for (;;) {
        tx_.exec("SAVEPOINT chunk");
        try {
          tx_.exec_params("SELECT count(pg_advisory_xact_lock(-1000000000 - g)) FROM generate_series($1::bigint, $2::bigint) g",
                          next, next + chunk - 1);
          tx_.exec("RELEASE SAVEPOINT chunk");
          next += chunk;
          held_ += chunk;
        } catch (const pqxx::sql_error& e) {
          if (e.sqlstate() != "53200") throw;
          tx_.exec("ROLLBACK TO SAVEPOINT chunk");  // this chunk did not fit: try a smaller one
          break;
        }
        if (held_ > 10'000'000) return;  // bound: never loops forever
      }
    }
  }
  ~LockTableFiller() {
    try {
      tx_.exec("ROLLBACK");
    } catch (const std::exception&) {
    }
  }
  std::int64_t held() const { return held_; }

 private:
  std::unique_ptr<pqxx::connection> c_;
  pqxx::nontransaction tx_;  // BEGIN ... ROLLBACK by hand: savepoints survive a failed chunk
  std::int64_t held_ = 0;
};

TEST(RealLimits, AFullLockTableIsOneClearErrorAtStartAndOnAConnectionAlreadyOpen) {
  LOCKBENCH_NEED_PARTNER();
  real::PoolConfig cfg;
  cfg.url = test::test_db();
  cfg.maximum_pool_size = 1;
  cfg.run = 1;
  cfg.application_name = "lockbench/test-limits-pool";
  real::Pool pool(cfg, std::chrono::steady_clock::now());  // connected before the table fills

  LockTableFiller full;
  ASSERT_GT(full.held(), 1000);
  // A request on a connection already open: its advisory lock fails with a
  // DbError naming SQLSTATE 53200 (serve turns it into Outcome::error), at once.
  {
    ConnHandle h(pool.borrow(2s));
    ASSERT_TRUE(h);
    run_sync(h->begin());
    try {
      run_sync(h->advisory_xact_lock(42, LockMode{LockWait::try_lock, {}}));
      ADD_FAILURE() << "an advisory lock was granted with the lock table full";
    } catch (const DbError& e) {
      EXPECT_NE(std::string(e.what()).find("53200 out of shared memory"), std::string::npos) << e.what();
    }
  }
  // A run started now cannot even open its sessions: one line naming --db, exit 2 from the CLI.
  try {
    run_real(base("advisory-xact"));
    ADD_FAILURE() << "a run started with the lock table full";
  } catch (const SettingError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("--db: ", 0), 0u) << what;
    EXPECT_NE(what.find("out of shared memory"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

}  // namespace real_limits_test
}  // namespace lockbench
