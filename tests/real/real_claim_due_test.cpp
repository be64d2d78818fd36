// Conn::claim_due against a real PostgreSQL: the outbox poller's
// SELECT ... ORDER BY id LIMIT n FOR UPDATE SKIP LOCKED on lockbench.rows.
#include <algorithm>
#include <vector>

#include "core/task.hpp"
#include "real/pool.hpp"
#include "test_env.hpp"

namespace lockbench::real {
namespace real_claim_due_test {

using namespace std::chrono_literals;

constexpr std::int64_t kRun = 434343;  // this test's rows in lockbench.rows

std::vector<Key> keys_of(const Claim& c) {
  std::vector<Key> out;
  for (const auto& r : c.rows) out.push_back(r.key);
  return out;
}

TEST(RealClaimDue, SkipsRowsAnotherTransactionHoldsAndHandsOutDueRowsInKeyOrder) {
  LOCKBENCH_NEED_DB();
  {
    auto admin = open_session(test::test_db());
    create_schema(*admin);
    const std::vector<TableSpec> tables = {{"jobs", true, TableSpec::Seed{"job", 0}}};
    seed_rows(*admin, kRun, tables, 6);
    pqxx::nontransaction tx(*admin);
    tx.exec_params("UPDATE lockbench.rows SET num = 10000 WHERE run = $1 AND tbl = 0 AND id = 5", kRun);  // not due yet
    tx.exec_params("UPDATE lockbench.rows SET num = -1 WHERE run = $1 AND tbl = 0 AND id = 6", kRun);     // done
  }
  PoolConfig cfg;
  cfg.url = test::test_db();
  cfg.run = kRun;
  cfg.maximum_pool_size = 2;
  cfg.connection_timeout = 5s;
  Pool pool(cfg, std::chrono::steady_clock::now());
  ConnHandle a(pool.borrow());
  ConnHandle b(pool.borrow());
  run_sync(a->begin());
  run_sync(b->begin());
  const Claim first = run_sync(a->claim_due(0, 5000, 2));
  const auto t0 = std::chrono::steady_clock::now();
  const Claim second = run_sync(b->claim_due(0, 5000, 10));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);  // skipped a's rows, did not wait for them
  EXPECT_EQ(keys_of(first), (std::vector<Key>{1, 2}));
  EXPECT_EQ(keys_of(second), (std::vector<Key>{3, 4}));  // 5 is not due, 6 is done
  EXPECT_EQ(first.undone, 5);
  EXPECT_EQ(second.undone, 5);
  EXPECT_EQ(first.rows.front().row.text, "job1");
  run_sync(a->commit());
  // a's rows are free again once its transaction ended; b still holds 3 and 4.
  run_sync(a->begin());
  const Claim third = run_sync(a->claim_due(0, 5000, 10));
  EXPECT_EQ(keys_of(third), (std::vector<Key>{1, 2}));
  run_sync(a->rollback());
  run_sync(b->rollback());
  a.reset();
  b.reset();
  auto admin = open_session(test::test_db());
  drop_rows(*admin, kRun);
}

}  // namespace real_claim_due_test
}  // namespace lockbench::real
