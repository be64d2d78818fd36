// lint check 5 (check_connection_acquisition): the hold time that delaying
// held-tx's connection acquisition saves for the given work before its first SQL.
#include <gtest/gtest.h>

#include "report/lint.hpp"

namespace lockbench::report {
namespace {

using namespace std::chrono_literals;

// held-tx, one 200 ms call, 200 ms of work before the first SQL, a pool of 4
// at 15 requests/s: 0.4 s x 15 = 6 busy connections from the transaction's
// start (above the pool), 0.2 s x 15 = 3 from the first statement.
LintInput held_tx_with_pre_sql_work(bool delayed) {
  LintInput in;
  in.read_timeout = 2s;
  in.calls_in_critical_section = 1;
  in.strategy = "held-tx";
  in.pool_size = 4;
  in.rate_per_s = 15;
  in.partner_mean = 200ms;
  in.partner_p99 = 200ms;
  in.pre_sql_work = 200ms;
  in.delay_connection_acquisition = delayed;
  return in;
}

const LintFinding* acquisition(const LintReport& r) {
  for (const auto& f : r.findings)
    if (f.check == "acquisition") return &f;
  return nullptr;
}

TEST(LintAcquisition, FlagsAConnectionHeldThroughPreSqlWorkThatTheSettingWouldFitInThePool) {
  const LintReport r = lint(held_tx_with_pre_sql_work(false));
  const LintFinding* f = acquisition(r);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->level, LintFinding::Level::flag) << f->message;
  EXPECT_NE(f->message.find("hold 400ms from the transaction's start, 200ms from the first statement"), std::string::npos)
      << f->message;
  EXPECT_NE(f->message.find("saves 200ms = 50 %"), std::string::npos) << f->message;
  EXPECT_NE(f->message.find("ceiling 10.00 vs 20.00 requests/s"), std::string::npos) << f->message;
  EXPECT_NE(f->message.find("provider_disables_autocommit=true"), std::string::npos) << f->message;
}

TEST(LintAcquisition, WarnsOnlyWhenBothHoldsFitOrNeitherDoes) {
  LintInput in = held_tx_with_pre_sql_work(false);
  in.rate_per_s = 2;  // 0.8 and 0.4 busy connections: both fit
  const LintFinding* f = acquisition(lint(in));
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->level, LintFinding::Level::warn) << f->message;
}

TEST(LintAcquisition, IsOkWithTheSettingOn) {
  const LintReport r = lint(held_tx_with_pre_sql_work(true));
  const LintFinding* f = acquisition(r);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->level, LintFinding::Level::ok) << f->message;
  EXPECT_NE(f->message.find("taken at the first SQL"), std::string::npos) << f->message;
}

TEST(LintAcquisition, SaysNothingWithoutPreSqlWorkOrForAnotherStrategy) {
  LintInput none = held_tx_with_pre_sql_work(false);
  none.pre_sql_work = 0s;
  EXPECT_EQ(acquisition(lint(none)), nullptr);
  LintInput lease = held_tx_with_pre_sql_work(false);
  lease.strategy = "row-lease";
  EXPECT_EQ(acquisition(lint(lease)), nullptr);
  LintInput unknown = held_tx_with_pre_sql_work(false);
  unknown.strategy.clear();  // not known: the check runs, as the pool check does
  EXPECT_NE(acquisition(lint(unknown)), nullptr);
}

}  // namespace
}  // namespace lockbench::report
