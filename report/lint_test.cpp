// lint: the lease-vs-retry-window check and the Little's-law pool check.
#include <gtest/gtest.h>

#include "report/lint.hpp"

namespace lockbench::report {
namespace {

using namespace std::chrono_literals;

// 3 attempts of (1 s connect + 2 s read), backoffs 100 ms and 200 ms (cap 250 ms):
// 9.3 s per call, 18.6 s for unlink + link.
LintInput seed_client() {
  LintInput in;
  in.connect_timeout = 1s;
  in.read_timeout = 2s;
  in.max_attempts = 3;
  in.backoff_base = 100ms;
  in.backoff_cap = 250ms;
  in.calls_in_critical_section = 2;
  in.strategy = "row-lease";
  in.pool_size = 10;
  in.rate_per_s = 5;
  in.partner_mean = 600ms;
  in.partner_p99 = 1500ms;
  return in;
}

TEST(Lint, WorstCaseCallSumsEveryAttemptsTimeoutsAndCappedBackoffs) {
  EXPECT_EQ(worst_case_call(seed_client().retry()), 9300ms);
  LintInput in = seed_client();
  in.max_attempts = 5;  // backoffs 100, 200, 250 (cap), 250
  EXPECT_EQ(worst_case_call(in.retry()), 15s + 800ms);
  in.max_attempts = 1;
  EXPECT_EQ(worst_case_call(in.retry()), 3s);
}

// One arithmetic for the client's sleeps and their bound: past 30 retries the
// client's backoff stops doubling (call_partner's exponent is capped at 30), so
// the worst case adds base x 2^30 per retry, not the cap.
TEST(Lint, WorstCaseCallStopsDoublingWhereTheClientsBackoffDoes) {
  LintInput in;
  in.read_timeout = 1ms;
  in.backoff_base = 1ms;
  in.backoff_cap = std::chrono::hours(100000);  // above 2^30 ms (about 12 days): never reached
  in.max_attempts = 33;                          // retries 0..31: 2^0 .. 2^30 ms, then 2^30 ms again
  const Duration backoffs = std::chrono::milliseconds((1LL << 31) - 1) + std::chrono::milliseconds(1LL << 30);
  EXPECT_EQ(worst_case_call(in.retry()), 33ms + backoffs);
  EXPECT_EQ(backoff_ceiling_ms(in.retry(), 31), backoff_ceiling_ms(in.retry(), 30));
  // The lint's window is that bound.
  in.calls_in_critical_section = 1;
  EXPECT_EQ(lint(in).call_window, worst_case_call(in.retry()));
}

TEST(Lint, FlagsALeaseTtlBelowTheWorstCaseRetryWindow) {
  LintInput in = seed_client();
  in.lease_ttl = 10s;  // above one call, below two: still stealable
  const LintReport r = lint(in);
  EXPECT_TRUE(r.flagged());
  EXPECT_EQ(r.exit_code(), 1);
  EXPECT_EQ(r.critical_window, 18600ms);
  const std::string text = render(r);
  EXPECT_NE(text.find("FLAG lease: lease TTL 10s <= worst-case critical section 18.6s"), std::string::npos) << text;
  EXPECT_NE(text.find("verdict: flagged"), std::string::npos);
}

TEST(Lint, PassesALeaseTtlAboveTheWorstCaseRetryWindow) {
  LintInput in = seed_client();
  in.lease_ttl = 30s;
  const LintReport r = lint(in);
  EXPECT_FALSE(r.flagged()) << render(r);
  EXPECT_EQ(r.exit_code(), 0);
  EXPECT_NE(render(r).find("OK   lease: lease TTL 30s > worst-case critical section 18.6s"), std::string::npos);
}

TEST(Lint, FlagsPoolExhaustionForAStrategyThatHoldsTheConnection) {
  LintInput in = seed_client();
  in.strategy = "held-tx:wait";
  in.partner_mean = 750ms;  // 1.5 s hold for two calls: ceiling 6.67/s
  in.rate_per_s = 10;
  const LintReport r = lint(in);
  EXPECT_TRUE(r.flagged());
  EXPECT_NEAR(r.ceiling_per_s, 10 / 1.5, 1e-9);
  EXPECT_NEAR(r.busy_connections, 15, 1e-9);
  EXPECT_NE(render(r).find("will exhaust the pool"), std::string::npos);
  in.rate_per_s = 2;  // 3 busy connections of 10
  EXPECT_FALSE(lint(in).flagged()) << render(lint(in));
}

TEST(Lint, DoesNotCountPartnerTimeAgainstThePoolForRowLease) {
  LintInput in = seed_client();
  in.lease_ttl = 30s;
  in.rate_per_s = 1000;
  in.db_time = 2ms;
  const LintReport r = lint(in);
  EXPECT_FALSE(r.holds_connection);
  EXPECT_NEAR(r.busy_connections, 2, 1e-9);
  EXPECT_FALSE(r.flagged());
}

TEST(Lint, RefusesImpossibleInputAndUnknownStrategies) {
  LintInput in = seed_client();
  in.max_attempts = 0;
  EXPECT_THROW(lint(in), SettingError);
  in = seed_client();
  in.strategy = "mutex";
  EXPECT_THROW(lint(in), SettingError);
  in = seed_client();
  in.read_timeout = 0s;
  EXPECT_THROW(lint(in), SettingError);
}

TEST(Lint, KnowsWhichStrategiesHoldAConnectionThroughThePartnerCall) {
  EXPECT_TRUE(strategy_holds_connection("held-tx"));
  EXPECT_TRUE(strategy_holds_connection("advisory-xact:try"));
  EXPECT_TRUE(strategy_holds_connection("advisory-session:pinned"));
  EXPECT_FALSE(strategy_holds_connection("advisory-session:pooled"));
  EXPECT_FALSE(strategy_holds_connection("row-lease"));
  EXPECT_FALSE(strategy_holds_connection("optimistic"));
  EXPECT_FALSE(strategy_holds_connection("none"));
}

const LintFinding* finding(const LintReport& r, const std::string& check) {
  for (const auto& f : r.findings)
    if (f.check == check) return &f;
  return nullptr;
}

TEST(Lint, FlagsStrategiesThatDoNotExcludeNamingTheEvidence) {
  for (const char* st : {"none", "optimistic", "advisory-session:pooled", "row-lease:article"}) {
    LintInput in = seed_client();
    in.strategy = st;
    in.lease_ttl = 60s;
    const auto r = lint(in);
    const auto* f = finding(r, "exclusion");
    ASSERT_NE(f, nullptr) << st;
    EXPECT_EQ(f->level, LintFinding::Level::flag) << st;
    EXPECT_NE(f->message.find("does not exclude"), std::string::npos) << f->message;
    EXPECT_TRUE(r.flagged());
  }
}

TEST(Lint, PassesTheExclusionOfStrategiesThatExcludeAcrossPods) {
  for (const char* st : {"held-tx", "advisory-xact:try", "advisory-session:pinned", "row-lease"}) {
    LintInput in = seed_client();
    in.strategy = st;
    in.lease_ttl = 60s;
    in.pods = 3;
    const auto* f = finding(lint(in), "exclusion");
    ASSERT_NE(f, nullptr) << st;
    EXPECT_EQ(f->level, LintFinding::Level::ok) << st << ": " << f->message;
  }
}

TEST(Lint, FlagsARowLockOnARecordThatDoesNotExistYet) {
  LintInput in = seed_client();
  in.strategy = "held-tx";
  in.scenario = "checkout";
  const auto* f = finding(lint(in), "exclusion");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->level, LintFinding::Level::flag);
  EXPECT_NE(f->message.find("does not exist before the first request"), std::string::npos) << f->message;
}

TEST(Lint, NamesOnlyFlagsThatExist) {
  LintInput in = seed_client();
  in.read_timeout = 0s;
  try {
    lint(in);
    FAIL();
  } catch (const SettingError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--partner-read-timeout:", 0), 0u) << e.what();
  }
  in = seed_client();
  in.rate_per_s = 0;
  in.strategy = "held-tx";
  const auto* f = finding(lint(in), "pool");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->message.find("--partner-mean"), std::string::npos) << f->message;
}

TEST(Lint, WarnsThatAnInProcessLockExcludesWithinOnePodOnly) {
  LintInput in;
  in.strategy = "synchronized";
  in.read_timeout = std::chrono::seconds(5);
  const LintReport r = lint(in);
  bool warned = false;
  for (const auto& f : r.findings) warned = warned || (f.check == "exclusion" && f.level == LintFinding::Level::warn);
  EXPECT_TRUE(warned);
  in.pods = 2;  // two instances: flagged
  const auto* f = finding(lint(in), "exclusion");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->level, LintFinding::Level::flag) << f->message;
  in.strategy = "advisory-xact";
  f = finding(lint(in), "exclusion");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->level, LintFinding::Level::ok) << f->message;
}

// ---- PostgreSQL's own limits (check 4)

const LintFinding* postgres_finding(const LintReport& r, const std::string& about) {
  for (const auto& f : r.findings)
    if (f.check == "postgres" && f.message.find(about) != std::string::npos) return &f;
  return nullptr;
}

TEST(Lint, FlagsPoolsThatNeedMoreConnectionsThanMaxConnectionsAllows) {
  LintInput in = seed_client();
  in.strategy = "advisory-xact";
  in.pods = 4;
  in.pool_size = 4 * 30;  // the sum over pods
  const LintReport r = lint(in);  // PostgreSQL's defaults: 100 - 3 reserved
  const auto* f = postgres_finding(r, "connections");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->level, LintFinding::Level::flag) << f->message;
  EXPECT_EQ(r.connections_needed, 121);
  EXPECT_EQ(r.connections_available, 97);
  EXPECT_EQ(r.exit_code(), 1);

  in.server.max_connections = 500;  // the server allows it
  const LintReport roomy = lint(in);
  f = postgres_finding(roomy, "connections");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->level, LintFinding::Level::ok) << f->message;
  in.server.in_use = 400;  // ... unless others already use most of them
  const LintReport crowded = lint(in);
  ASSERT_NE(postgres_finding(crowded, "connections"), nullptr);
  EXPECT_EQ(postgres_finding(crowded, "connections")->level, LintFinding::Level::flag);
}

TEST(Lint, FlagsLeakedSessionLocksThatCanFillTheSharedLockTable) {
  LintInput in = seed_client();
  in.strategy = "advisory-session:pooled";
  in.keys = 100000;  // one leaked lock per key, against 64 x 100 = 6,400 entries
  LintReport r = lint(in);
  const auto* f = postgres_finding(r, "lock table");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->level, LintFinding::Level::flag) << f->message;
  EXPECT_NE(f->message.find("53200"), std::string::npos);
  EXPECT_EQ(r.lock_table_size, 6400);
  EXPECT_EQ(r.locks_needed, 100000 + 10);

  in.strategy = "advisory-xact";  // one lock per connection in use: 10 of 6,400
  r = lint(in);
  EXPECT_EQ(r.locks_needed, 10);
  ASSERT_NE(postgres_finding(r, "lock table"), nullptr);
  EXPECT_EQ(postgres_finding(r, "lock table")->level, LintFinding::Level::ok);
  for (const char* spec : {"row-lease", "redis-lease", "etcd-lease", "row-lease:renew"}) {  // nothing in the lock table
    in.strategy = spec;
    EXPECT_EQ(lint(in).locks_needed, 0) << spec;
  }
}

TEST(Lint, ARenewedLeasePassesATtlBelowTheCallWindowAndNamesThePauseItCannotSurvive) {
  LintInput in = seed_client();
  in.lease_ttl = 3s;  // far below the 18.6 s worst case
  for (const char* spec : {"row-lease", "redis-lease", "etcd-lease"}) {
    in.strategy = spec;
    const LintReport r = lint(in);
    ASSERT_NE(finding(r, "lease"), nullptr) << spec;
    EXPECT_EQ(finding(r, "lease")->level, LintFinding::Level::flag) << spec;
  }
  in.strategy = "row-lease:renew";
  const LintReport renewed = lint(in);
  const auto* f = finding(renewed, "lease");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->level, LintFinding::Level::ok) << f->message;
  EXPECT_NE(f->message.find("fencing"), std::string::npos) << f->message;
}

}  // namespace
}  // namespace lockbench::report
