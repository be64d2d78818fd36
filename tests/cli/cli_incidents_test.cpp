// The advisory-lock article's incidents, end to end through `lockbench run
// --world sim` (no servers): the double payout, the reward claim on a missing
// row (with and without a unique key), and synchronized on one pod and on two.
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "run_command.hpp"

using lockbench::testing::run_command;
using nlohmann::json;

namespace cli_incidents_test {
const std::string kBin = LOCKBENCH_BIN;

// Every webhook (or claim) delivered twice, 5 ms apart; 2 per second over a
// minute on 1,000 accounts (customers): ~120 pairs.
const std::string kTwice =
    " --duplicate-share 1 --duplicate-gap 5ms --rate 2 --duration 60s --keys 1000 --partner-latency fixed:300ms";

json run_all(const std::string& args) {
  const auto r = run_command(kBin + " run --world sim --quiet --json " + args);
  EXPECT_EQ(r.status, 0) << r.err;
  return json::parse(r.out);
}
std::int64_t violation(const json& r, const char* kind) { return r["partner"]["violations"].value(kind, 0); }

TEST(CliIncidents, APayoutDeliveredTwiceToTwoPodsOverspendsUnderNoneAndNotUnderTheLocks) {
  const auto results =
      run_all("--scenario payout --pods 2 --strategy none,advisory-xact:try,advisory-xact:wait,held-tx,row-lease" + kTwice);
  ASSERT_EQ(results.size(), 5u);
  EXPECT_EQ(results[0]["strategy"], "none");
  EXPECT_GT(violation(results[0], "overdrawn"), 50);  // most of ~120 webhooks paid out twice
  EXPECT_EQ(violation(results[0], "overdrawn"), violation(results[0], "balance_divergence"));
  for (std::size_t i = 1; i < results.size(); ++i) {
    EXPECT_EQ(violation(results[i], "overdrawn"), 0) << results[i]["strategy"];
    EXPECT_EQ(violation(results[i], "balance_divergence"), 0) << results[i]["strategy"];
    EXPECT_GT(results[i]["requests"]["ok"].get<int>(), 100) << results[i]["strategy"];
  }
}

TEST(CliIncidents, RewardClaimsDuplicateUnderNoneAndHeldTxWhoseForUpdateLocksNothing) {
  const auto results = run_all("--scenario reward-claim --pods 2 --strategy none,held-tx,advisory-xact:try,advisory-xact:wait" + kTwice);
  ASSERT_EQ(results.size(), 4u);
  EXPECT_GT(violation(results[0], "duplicate_reward"), 50);
  EXPECT_GT(violation(results[1], "duplicate_reward"), 50);
  // FOR UPDATE found no row on every first claim: nothing was locked.
  EXPECT_GT(results[1]["locks"]["nothing_locked"].get<int>(), 100);
  for (std::size_t i : {2u, 3u}) {
    EXPECT_EQ(violation(results[i], "duplicate_reward"), 0) << results[i]["strategy"];
    EXPECT_EQ(violation(results[i], "claim_divergence"), 0) << results[i]["strategy"];
  }
  // Without a unique key the service's table holds the duplicates too: it agrees with the partner.
  EXPECT_EQ(violation(results[0], "claim_divergence"), 0);
}

TEST(CliIncidents, AUniqueKeyCatchesTheSecondInsertButNotTheSecondCredit) {
  const auto r = run_all("--scenario reward-claim:unique --strategy none" + kTwice).at(0);
  const auto dups = violation(r, "duplicate_reward");
  EXPECT_GT(dups, 50);  // the partner granted the credit twice
  // The service's table holds one claim where the partner holds two credits,
  // and each second INSERT failed (unique_violation) after its credit.
  EXPECT_EQ(violation(r, "claim_divergence"), dups);
  EXPECT_EQ(r["requests"]["error"].get<std::int64_t>(), dups);
}

TEST(CliIncidents, RowLeaseIsRefusedOnAClaimThatHasNoRowWithOneLine) {
  const auto r = run_command(kBin + " run --world sim --quiet --scenario reward-claim --strategy row-lease --duration 5s");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("row-lease does not apply to scenario reward-claim"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(CliIncidents, SynchronizedIsCleanOnOnePodAndRacesOnTwo) {
  const auto one = run_all("--scenario payout --pods 1 --strategy synchronized" + kTwice).at(0);
  const auto two = run_all("--scenario payout --pods 2 --strategy synchronized" + kTwice).at(0);
  EXPECT_EQ(violation(one, "overdrawn"), 0);
  // The twin of a webhook is the next request, so it lands on the other pod:
  // almost every pair races (the rest had another request arrive in between).
  EXPECT_GT(violation(two, "overdrawn"), 50);
  EXPECT_EQ(two["strategy_info"]["exclusion"], "one-pod");
}

TEST(CliIncidents, ExplainCoversTheTwoScenariosAndSynchronized) {
  for (const char* name : {"payout", "reward-claim", "reward-claim:unique", "synchronized"}) {
    const auto r = run_command(kBin + " explain " + name);
    EXPECT_EQ(r.status, 0) << name << r.err;
    EXPECT_GT(r.out.size(), 200u) << name;
  }
  EXPECT_NE(run_command(kBin + " explain synchronized").out.find("ReentrantLock"), std::string::npos);
  EXPECT_NE(run_command(kBin + " explain reward-claim:unique").out.find("unique_violation"), std::string::npos);
}

}  // namespace cli_incidents_test
