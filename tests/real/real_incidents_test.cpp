// The advisory-lock article's incidents in the real world (PostgreSQL and the
// fake partner): two deliveries of one payout webhook, two claims of one
// welcome reward, synchronized on one pod and on two. Each run is a burst of
// two requests for one key, one per pod (requests alternate pods by number),
// both inside a 300 ms partner call: counts and partner verdicts only.
#include <string>

#include "real/run_real.hpp"
#include "real/pg_conn.hpp"
#include "test_env.hpp"

namespace lockbench {
namespace real_incidents_test {

using namespace std::chrono_literals;
using nlohmann::json;

Settings twice(const std::string& scenario, const std::string& strategy, int pods = 2) {
  Settings s;
  s.world = "real";
  s.db_url = test::test_db();
  s.partner_url = test::test_partner();
  s.scenario = scenario;
  s.strategy = strategy;
  s.pods = pods;
  s.seed = 11;
  s.arrival = Arrival::burst;
  s.burst = 2;
  s.keys = 1;
  s.key_dist = KeyDist::hot;
  s.duration = 1s;
  s.partner_latency = Distribution::fixed(300);
  s.probe_interval = 0ms;
  s.connection_timeout = 5s;
  s.lock_timeout = 5s;
  s.lease_ttl = 30s;
  return s;
}

std::int64_t violation(const json& r, const char* kind) { return r["partner"]["violations"].value(kind, 0); }
std::int64_t req(const json& r, const char* what) { return r["requests"][what].get<std::int64_t>(); }

TEST(RealIncidents, APayoutDeliveredToTwoPodsAtOnceOverspendsUnderNone) {
  LOCKBENCH_NEED_PARTNER();
  const json r = run_real(twice("payout", "none"));
  EXPECT_EQ(req(r, "ok"), 2);
  EXPECT_EQ(violation(r, "overdrawn"), 1) << r["partner"].dump();
  EXPECT_EQ(violation(r, "balance_divergence"), 1);
}

TEST(RealIncidents, APayoutStaysWithinTheBalanceUnderAdvisoryXactHeldTxAndRowLease) {
  LOCKBENCH_NEED_PARTNER();
  for (const char* st : {"advisory-xact:try", "advisory-xact:wait", "held-tx", "row-lease"}) {
    const json r = run_real(twice("payout", st));
    EXPECT_EQ(violation(r, "overdrawn"), 0) << st << r["partner"].dump();
    EXPECT_EQ(violation(r, "balance_divergence"), 0) << st;
    EXPECT_EQ(r["partner"]["calls"], 1) << st;  // one payout; the other was refused or found the balance spent
    EXPECT_EQ(req(r, "error"), 0) << st;
  }
}

TEST(RealIncidents, TwoClaimsOfOneRewardDuplicateUnderNoneAndHeldTx) {
  LOCKBENCH_NEED_PARTNER();
  const json none = run_real(twice("reward-claim", "none"));
  EXPECT_EQ(violation(none, "duplicate_reward"), 1) << none["partner"].dump();
  // No unique key: the service's table holds both claims, as the partner holds both credits.
  EXPECT_EQ(violation(none, "claim_divergence"), 0) << none["partner"].dump();
  const json held = run_real(twice("reward-claim", "held-tx"));
  EXPECT_EQ(violation(held, "duplicate_reward"), 1) << held["partner"].dump();
  EXPECT_EQ(held["locks"]["nothing_locked"], 2);  // FOR UPDATE found no row, twice
}

TEST(RealIncidents, AdvisoryXactOnTheHashedBusinessKeyGrantsTheRewardOnce) {
  LOCKBENCH_NEED_PARTNER();
  for (const char* st : {"advisory-xact:try", "advisory-xact:wait"}) {
    const json r = run_real(twice("reward-claim", st));
    EXPECT_EQ(violation(r, "duplicate_reward"), 0) << st << r["partner"].dump();
    EXPECT_EQ(violation(r, "claim_divergence"), 0) << st;
    EXPECT_EQ(r["partner"]["calls"], 1) << st;
  }
}

TEST(RealIncidents, AUniqueKeyKeepsOneClaimRowWhileThePartnerHoldsTwoCredits) {
  LOCKBENCH_NEED_PARTNER();
  const json r = run_real(twice("reward-claim:unique", "none"));
  EXPECT_EQ(violation(r, "duplicate_reward"), 1) << r["partner"].dump();
  EXPECT_EQ(violation(r, "claim_divergence"), 1) << r["partner"].dump();  // 1 row, 2 credits
  EXPECT_EQ(req(r, "error"), 1);  // the second INSERT: unique_violation, after its credit
}

TEST(RealIncidents, SynchronizedIsCleanOnOnePodAndRacesOnTwo) {
  LOCKBENCH_NEED_PARTNER();
  const json one = run_real(twice("payout", "synchronized", 1));
  EXPECT_EQ(violation(one, "overdrawn"), 0) << one["partner"].dump();
  EXPECT_EQ(req(one, "ok"), 2);  // the second waited in the pod's lock, then found the balance spent
  const json two = run_real(twice("payout", "synchronized", 2));
  EXPECT_EQ(violation(two, "overdrawn"), 1) << two["partner"].dump();
}

TEST(RealIncidents, ALockbenchRowsTableOfAnEarlierVersionGainsSeqInItsKeyAndKeepsItsRows) {
  LOCKBENCH_NEED_DB();
  auto c = real::open_session(test::test_db());
  real::create_schema(*c);  // the schema exists (and is lockbench's) before the table is replaced
  {
    pqxx::work tx(*c);
    tx.exec("DROP TABLE lockbench.rows");
    tx.exec("CREATE TABLE lockbench.rows (run bigint NOT NULL, tbl smallint NOT NULL, id bigint NOT NULL, "
            "text text NOT NULL DEFAULT '', ref text NOT NULL DEFAULT '', num bigint NOT NULL DEFAULT 0, "
            "version bigint NOT NULL DEFAULT 0, locked_at timestamptz, lock_owner text, lease_taken_over text, "
            "lease_token bigint NOT NULL DEFAULT 0, PRIMARY KEY (run, tbl, id))");
    tx.exec("INSERT INTO lockbench.rows (run, tbl, id, text) VALUES (-5, 0, 1, 'kept')");
    tx.commit();
  }
  real::create_schema(*c);
  pqxx::nontransaction tx(*c);
  const auto key = tx.exec1(
      "SELECT string_agg(a.attname, ',' ORDER BY array_position(c.conkey, a.attnum)) FROM pg_constraint c "
      "JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY (c.conkey) "
      "WHERE c.conrelid = 'lockbench.rows'::regclass AND c.contype = 'p'")[0].as<std::string>();
  EXPECT_EQ(key, "run,tbl,id,seq");
  EXPECT_EQ(tx.exec1("SELECT text FROM lockbench.rows WHERE run = -5")[0].as<std::string>(), "kept");
  tx.exec("DELETE FROM lockbench.rows WHERE run = -5");
}

}  // namespace real_incidents_test
}  // namespace lockbench
