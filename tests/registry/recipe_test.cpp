// ARCHITECTURE.md's recipe, checked: a strategy is one file. recipe_strategy.cpp
// is a throw-away strategy written as the recipe says (its class, its run() and
// its registry row, nothing else naming it); linked beside the libraries, it is
// accepted by --strategy, listed, explained, linted from its row, and run by
// the simulator. (strategy_touch_points.py checks that the real strategies are
// named by no more files than their settings and uses need.)
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "report/explain.hpp"
#include "report/lint.hpp"
#include "sim/run_sim.hpp"
#include "strategies/family.hpp"

namespace lockbench {
namespace {

using namespace std::chrono_literals;
using report::lint;
using report::LintFinding;
using report::LintInput;
using report::LintReport;

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(Recipe, TheRunnerAcceptsTheOneFileStrategyAndItsVariant) {
  const std::vector<std::string> specs = strategy_specs();
  EXPECT_TRUE(contains(specs, "recipe-example"));
  EXPECT_TRUE(contains(specs, "recipe-example:held"));
  EXPECT_EQ(strategy_info("recipe-example").spec, "recipe-example");
  EXPECT_EQ(strategy_info("recipe-example:held").family, "recipe-example");
  EXPECT_TRUE(strategy_info("recipe-example:held").props.holds_connection_during_call);
  // --strategy all takes its in_all row, in its teaching order: after every family of strategies/.
  const std::vector<std::string> all = all_strategies();
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all.back(), "recipe-example");
  EXPECT_GT(all.size(), 5u);
  EXPECT_EQ(strategy_families().back()->name, "recipe-example");
  EXPECT_EQ(&strategy_family("recipe-example"), strategy_families().back());
}

TEST(Recipe, ExplainPrintsTheWordsOfItsRow) {
  const std::string text = report::explain("recipe-example:held");
  EXPECT_EQ(text.rfind("recipe-example — a throw-away strategy in one file: the recipe's check\n", 0), 0u) << text;
  EXPECT_NE(text.find("  recipe-example:held (this one): the same, holding its connection through the calls\n"),
            std::string::npos);
  EXPECT_NE(text.find("  holds a pooled connection during the partner call: yes\n"), std::string::npos);
  EXPECT_NE(text.find("How it works\n  It reads, calls the partner"), std::string::npos);
  EXPECT_NE(text.find("In Spring/Java\n  ```java\n  public void switchPrimary"), std::string::npos);
  EXPECT_NE(text.find("Do not choose it\n  Always.\n"), std::string::npos);
  const std::string list = report::explain_list();
  EXPECT_NE(list.find("  recipe-example[:held]"), std::string::npos) << list;
  EXPECT_NE(list.find("a throw-away strategy in one file"), std::string::npos);
}

LintInput load(const std::string& strategy) {
  LintInput in;
  in.strategy = strategy;
  in.connect_timeout = 1s;
  in.read_timeout = 2s;
  in.pool_size = 10;
  in.rate_per_s = 5;
  in.partner_mean = 1s;
  in.partner_p99 = 2s;
  in.db_time = 10ms;
  in.pre_sql_work = 200ms;
  return in;
}

const LintFinding* finding(const LintReport& r, const std::string& check) {
  for (const auto& f : r.findings)
    if (f.check == check) return &f;
  return nullptr;
}

TEST(Recipe, LintReadsItsPropertiesAndItsLintFactsFromTheRow) {
  const LintReport free = lint(load("recipe-example"));
  const LintFinding* pool = finding(free, "pool");
  ASSERT_NE(pool, nullptr);
  EXPECT_NE(pool->message.find("recipe-example returns the connection before the partner calls"), std::string::npos)
      << pool->message;
  const LintReport held = lint(load("recipe-example:held"));
  ASSERT_NE(finding(held, "pool"), nullptr);
  EXPECT_EQ(finding(held, "pool")->message.find("returns the connection"), std::string::npos);
  EXPECT_GT(held.busy_connections, free.busy_connections * 10);
  // Its row's lint fact: --pre-sql-work is held time, as for held-tx; none has no such fact.
  EXPECT_NE(finding(free, "acquisition"), nullptr);
  EXPECT_EQ(finding(lint(load("none")), "acquisition"), nullptr);
  // The list of holders in a finding for an unknown strategy comes from the rows too.
  LintInput unknown = load("");
  const LintReport u = lint(unknown);
  ASSERT_NE(finding(u, "pool"), nullptr);
  EXPECT_NE(finding(u, "pool")->message.find("(held-tx, advisory-xact, advisory-session:pinned, recipe-example:held)"),
            std::string::npos)
      << finding(u, "pool")->message;
}

TEST(Recipe, TheSimulatorRunsItsCodeAndTheResultCarriesItsRow) {
  for (const char* spec : {"recipe-example", "recipe-example:held"}) {
    SCOPED_TRACE(spec);
    Settings s;
    s.world = "sim";
    s.strategy = spec;
    s.scenario = "switch-primary";
    s.duration = 2s;
    s.rate_per_s = 10;
    s.keys = 5;
    const nlohmann::json r = run_sim(s);
    EXPECT_EQ(r.value("strategy", ""), spec);
    EXPECT_EQ(r["strategy_info"], strategy_info_json(strategy_info(spec)));
    EXPECT_EQ(r["strategy_info"].value("family", ""), "recipe-example");
    const std::int64_t total = r["requests"].value("total", std::int64_t{0});
    EXPECT_GT(total, 5);
    // Its run() ran: it counts a lock for each request that reached the partner.
    EXPECT_GT(r["locks"].value("acquired", std::int64_t{0}), total / 2);
    EXPECT_LE(r["locks"].value("acquired", std::int64_t{0}), total);
  }
}

}  // namespace
}  // namespace lockbench
