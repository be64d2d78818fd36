// The registries against everything that reads them: every registered strategy
// runs on every scenario it applies to in the simulator (short runs) and gives
// a well-formed result naming its row, and every strategy and scenario has its
// explain text. A new row without a file, without explain words, or with a
// result the report cannot read fails here.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "fake_partner/model/check.hpp"
#include "report/explain.hpp"
#include "scenarios/registry.hpp"
#include "sim/run_sim.hpp"
#include "strategies/registry.hpp"

namespace lockbench {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

Settings short_run(const StrategyInfo& st, const ScenarioInfo& sc) {
  Settings s;
  s.world = "sim";
  s.strategy = std::string(st.spec);
  s.scenario = std::string(sc.name);
  s.duration = 2s;
  s.rate_per_s = 10;
  s.keys = 5;  // a few keys: requests meet on one key now and then
  return s;
}

bool applies(const StrategyInfo& st, const ScenarioInfo& sc) {
  try {
    check_applies(st, sc.name);
    return true;
  } catch (const SettingError&) {
    return false;
  }
}

// What every reader of a result (the CLI's table, report, compact, merge) takes for granted.
void expect_well_formed(const json& r, const StrategyInfo& st, const ScenarioInfo& sc) {
  const std::string pair = std::string(st.spec) + " on " + std::string(sc.name);
  EXPECT_EQ(r.value("strategy", ""), st.spec) << pair;
  EXPECT_EQ(r.value("scenario", ""), sc.name) << pair;
  EXPECT_EQ(r.value("world", ""), "sim") << pair;
  EXPECT_TRUE(r.value("complete", false)) << pair;
  EXPECT_FALSE(r.value("interrupted", true)) << pair;
  ASSERT_TRUE(r.contains("requests") && r["requests"].is_object()) << pair;
  const json& q = r["requests"];
  const std::int64_t total = q.value("total", std::int64_t{-1});
  EXPECT_GT(total, 0) << pair;
  std::int64_t outcomes = 0;
  for (const char* o : {"ok", "conflict", "pool_timeout", "rejected", "error"}) {
    ASSERT_TRUE(q.contains(o) && q[o].is_number_integer()) << pair << " lacks requests." << o;
    EXPECT_GE(q[o].get<std::int64_t>(), 0) << pair;
    outcomes += q[o].get<std::int64_t>();
  }
  EXPECT_EQ(outcomes, total) << pair << ": every request has one outcome";
  ASSERT_TRUE(r.contains("strategy_info") && r["strategy_info"].is_object()) << pair;
  EXPECT_EQ(r["strategy_info"], strategy_info_json(st)) << pair << ": the result carries its registry row";
  ASSERT_TRUE(r.contains("partner") && r["partner"].contains("violations")) << pair;
  const json& v = r["partner"]["violations"];
  for (auto kind : partner::kCheckKinds) {
    ASSERT_TRUE(v.contains(std::string(kind)) && v[std::string(kind)].is_number_integer()) << pair << " lacks " << kind;
    EXPECT_GE(v[std::string(kind)].get<std::int64_t>(), 0) << pair;
  }
  for (const char* field : {"latency_ms", "pool", "time_split_ms", "seed", "settings", "schema"})
    EXPECT_TRUE(r.contains(field)) << pair << " lacks " << field;
}

TEST(Registry, EveryStrategyRunsOnEveryScenarioItAppliesToInTheSimulator) {
  int runs = 0;
  for (const auto& st : strategy_registry()) {
    int scenarios = 0;
    for (const auto& sc : scenario_registry()) {
      if (!applies(st, sc)) continue;
      ++scenarios;
      ++runs;
      SCOPED_TRACE(std::string(st.spec) + " on " + std::string(sc.name));
      const json r = run_sim(short_run(st, sc));
      expect_well_formed(r, st, sc);
    }
    EXPECT_GT(scenarios, 0) << st.spec << " applies to no scenario";
  }
  // Every pair runs but those check_applies refuses, and it refuses only some.
  EXPECT_GT(runs, static_cast<int>(strategy_registry().size()));
}

TEST(Registry, ARefusedPairIsRefusedByTheRunnerInOneLineNamingBoth) {
  int refused = 0;
  for (const auto& st : strategy_registry())
    for (const auto& sc : scenario_registry()) {
      if (applies(st, sc)) continue;
      ++refused;
      try {
        run_sim(short_run(st, sc));
        ADD_FAILURE() << st.spec << " on " << sc.name << " ran";
      } catch (const SettingError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find(std::string(st.spec)), std::string::npos) << what;
        EXPECT_NE(what.find(std::string(sc.name)), std::string::npos) << what;
        EXPECT_EQ(what.find('\n'), std::string::npos) << what;
      }
    }
  EXPECT_GT(refused, 0);  // row-lease on reward-claim, split-tx on switch-primary, ...
}

TEST(Registry, EveryStrategyHasExplainTextForItsFamilyAndItsVariant) {
  for (const auto& st : strategy_registry()) {
    SCOPED_TRACE(std::string(st.spec));
    EXPECT_FALSE(st.teaches.empty());
    EXPECT_FALSE(st.family.empty());
    std::string text;
    ASSERT_NO_THROW(text = report::explain(st.spec)) << st.spec << " has no explain words in its registry row";
    for (const char* part : {"How it works\n", "How it fails\n", "Choose it\n", "Do not choose it\n", "In Spring/Java\n"})
      EXPECT_NE(text.find(part), std::string::npos) << st.spec << " lacks " << part;
    // The variant's own line, marked, when its family has several.
    bool several = false;
    for (const auto& other : strategy_registry()) several = several || (other.family == st.family && &other != &st);
    if (several) {
      EXPECT_NE(text.find(std::string(st.spec) + " (this one): " + std::string(st.teaches)), std::string::npos);
    }
    // explain's list names the family.
    EXPECT_NE(report::explain_list().find("  " + std::string(st.family)), std::string::npos);
  }
}

TEST(Registry, EveryScenarioHasItsSummaryAndStory) {
  std::set<std::string_view> names, routes;
  for (const auto& sc : scenario_registry()) {
    EXPECT_TRUE(names.insert(sc.name).second) << sc.name << " is registered twice";
    EXPECT_FALSE(sc.summary.empty()) << sc.name;
    EXPECT_FALSE(sc.story.empty()) << sc.name;
    const std::string text = report::explain(sc.name);
    EXPECT_EQ(text.rfind("scenario " + std::string(sc.name) + " — " + std::string(sc.summary), 0), 0u) << sc.name;
    EXPECT_NE(make_scenario(sc.name), nullptr) << sc.name;
    // serve's own path for it: one "{key}", unique across scenarios.
    if (!sc.route.empty()) {
      EXPECT_EQ(sc.route.front(), '/') << sc.name;
      const auto at = sc.route.find("{key}");
      EXPECT_NE(at, std::string_view::npos) << sc.name << ": " << sc.route;
      EXPECT_EQ(sc.route.find("{key}", at + 1), std::string_view::npos) << sc.name << ": " << sc.route;
      EXPECT_TRUE(routes.insert(sc.route).second) << sc.route << " routes two scenarios";
    }
  }
  EXPECT_GE(routes.size(), 3u);  // switch-primary, single-call, checkout
}

TEST(Registry, EverySpecIsRegisteredOnceAndEveryFamilyHasOneDefault) {
  std::set<std::string_view> specs;
  std::map<std::string_view, int> defaults;
  for (const auto& st : strategy_registry()) {
    EXPECT_TRUE(specs.insert(st.spec).second) << st.spec << " is registered twice";
    EXPECT_TRUE(st.spec == st.family || st.spec.rfind(std::string(st.family) + ":", 0) == 0) << st.spec;
    defaults[st.family] += st.family_default ? 1 : 0;
    EXPECT_NE(st.make, nullptr) << st.spec;
    EXPECT_NE(st.make(), nullptr) << st.spec;
  }
  for (const auto& [family, n] : defaults) EXPECT_EQ(n, 1) << family;
}

}  // namespace
}  // namespace lockbench
