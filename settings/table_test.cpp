#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>

#include <algorithm>

#include "settings/table.hpp"
#include "scenarios/registry.hpp"
#include "strategies/registry.hpp"

using namespace lockbench;

using namespace std::chrono_literals;

namespace {
std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const SettingError& e) {
    return e.what();
  }
  return "";
}

std::string write_temp(const std::string& text) {
  char name[] = "/tmp/lockbench-settings-XXXXXX";
  const int fd = mkstemp(name);
  close(fd);
  std::ofstream(name) << text;
  return name;
}
}  // namespace

TEST(SettingsTable, FlagsApplyWithUnits) {
  Settings s;
  apply_setting(s, "maximum-pool-size", "4");
  apply_setting(s, "connection-timeout", "300ms");
  apply_setting(s, "partner-latency", "lognormal:p50=1.5s,p99=4s");
  apply_setting(s, "key-dist", "zipf:1.3");
  apply_setting(s, "users", "20");
  EXPECT_EQ(s.maximum_pool_size, 4);
  EXPECT_EQ(s.connection_timeout, 300ms);
  EXPECT_EQ(s.partner_latency.kind, Distribution::Kind::lognormal);
  EXPECT_EQ(s.key_dist, KeyDist::zipf);
  EXPECT_DOUBLE_EQ(s.zipf_s, 1.3);
  EXPECT_EQ(s.arrival, Arrival::closed);
}

TEST(SettingsTable, BadValuesGetOneLineNamingTheSettingAndWhatIsAccepted) {
  Settings s;
  const auto pool0 = message_of([&] { apply_setting(s, "maximum-pool-size", "0"); });
  EXPECT_NE(pool0.find("--maximum-pool-size"), std::string::npos);
  EXPECT_NE(pool0.find("1 to 10000"), std::string::npos);
  EXPECT_NE(message_of([&] { apply_setting(s, "maximum-pool-size", "-3"); }).find("--maximum-pool-size"), std::string::npos);
  EXPECT_NE(message_of([&] { apply_setting(s, "lease-ttl", "ten seconds"); }).find("--lease-ttl"), std::string::npos);
  EXPECT_NE(message_of([&] { apply_setting(s, "world", "mars"); }).find("accepted: real, sim"), std::string::npos);
  EXPECT_NE(message_of([&] { apply_setting(s, "db", "mysql://x"); }).find("--db"), std::string::npos);
  for (const auto& m : {pool0}) EXPECT_EQ(m.find('\n'), std::string::npos);
}

TEST(SettingsTable, TomlFileAppliesEveryKeyAndRefusesUnknownOnes) {
  Settings s;
  const auto good = write_temp(
      "strategy = \"row-lease\"\nmaximum-pool-size = 4\nlease-ttl = \"2s\"\nrate = 12.5\n"
      "[partner-faults]\n\"auth0.link\" = [{kind = \"error\", p = 0.5, status = 503}]\n");
  apply_toml_file(s, good);
  EXPECT_EQ(s.strategy, "row-lease");
  EXPECT_EQ(s.maximum_pool_size, 4);
  EXPECT_EQ(s.lease_ttl, 2s);
  EXPECT_DOUBLE_EQ(s.rate_per_s, 12.5);
  EXPECT_EQ(s.partner_faults["auth0.link"][0]["status"], 503);
  std::remove(good.c_str());

  const auto bad = write_temp("maximum-pool-sise = 4\n");
  const auto msg = message_of([&] { apply_toml_file(s, bad); });
  EXPECT_NE(msg.find("maximum-pool-sise"), std::string::npos) << msg;
  std::remove(bad.c_str());
  const auto broken = write_temp("rate = = 3\n");
  EXPECT_NE(message_of([&] { apply_toml_file(s, broken); }).find("--config"), std::string::npos);
  std::remove(broken.c_str());
}

TEST(SettingsTable, ValidateRefusesOutOfRangeCombinations) {
  Settings s;
  s.apply_at = 2;
  EXPECT_NE(message_of([&] { validate_settings(s); }).find("--apply-at"), std::string::npos);
}

TEST(SettingsTable, EverySettingHasAHelpGroupATypeAndADefaultThatReadsBackAsItself) {
  const Settings defaults;
  for (const auto& d : setting_defs()) {
    EXPECT_NE(std::find(setting_groups().begin(), setting_groups().end(), d.group), setting_groups().end())
        << d.name << " has no --help group";
    EXPECT_FALSE(d.type.empty()) << d.name << " has no type";
    EXPECT_NE(d.type, "TEXT") << d.name;
    ASSERT_TRUE(d.show) << d.name << " cannot show its value";
    const std::string shown = d.show(defaults);
    if (shown.empty()) continue;  // no default (--db, --partner, --targets)
    Settings s;
    EXPECT_NO_THROW(d.apply(s, shown)) << d.name << " = " << shown;
    EXPECT_EQ(d.show(s), shown) << d.name;
  }
  // A few defaults as a user knows them (HikariCP, Tomcat).
  EXPECT_EQ(find_setting("connection-timeout")->show(defaults), "30s");
  EXPECT_EQ(find_setting("maximum-pool-size")->show(defaults), "10");
  EXPECT_EQ(find_setting("max-threads")->show(defaults), "200");
}

TEST(SettingsTable, TheScenarioAndStrategyHelpListEveryRegisteredName) {
  for (const auto& sc : scenario_registry())
    EXPECT_NE(find_setting("scenario")->help.find(std::string(sc.name)), std::string::npos) << sc.name;
  for (const auto& row : strategy_registry())
    EXPECT_NE(find_setting("strategy")->help.find(std::string(row.family)), std::string::npos) << row.family;
}

TEST(SettingsTable, DurationsTakeSpringsIso8601FormToo) {
  Settings s;
  apply_setting(s, "connection-timeout", "PT30S");
  EXPECT_EQ(s.connection_timeout, 30s);
  apply_setting(s, "lease-ttl", "PT1M30S");
  EXPECT_EQ(s.lease_ttl, 90s);
  apply_setting(s, "partner-read-timeout", "PT0.5S");
  EXPECT_EQ(s.partner_read_timeout, 500ms);
  EXPECT_NE(message_of([&] { apply_setting(s, "lease-ttl", "PTXS"); }).find("--lease-ttl"), std::string::npos);
}

TEST(SettingsTable, ThePresetIncidentIsTheExampleFileAndFlagsAppliedAfterItWin) {
  Settings from_preset, from_file;
  apply_preset(from_preset, "incident");
  apply_toml_file(from_file, std::string(LOCKBENCH_SOURCE_DIR) + "/examples/incident.toml");
  EXPECT_EQ(settings_json(from_preset), settings_json(from_file));
  EXPECT_DOUBLE_EQ(from_preset.rate_per_s, 20);
  EXPECT_EQ(from_preset.maximum_pool_size, 10);
  apply_setting(from_preset, "rate", "5");
  EXPECT_DOUBLE_EQ(from_preset.rate_per_s, 5);
}

TEST(SettingsTable, AnUnknownPresetGetsOneLineListingTheAcceptedOnes) {
  Settings s;
  const auto msg = message_of([&] { apply_preset(s, "incidnet"); });
  EXPECT_NE(msg.find("--preset: 'incidnet' is not accepted (accepted: incident"), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos);
}

TEST(MemoryCheck, RunsSideBySideMustFitTogether) {
  // Each run alone takes 60 % of this machine's allowance: one at a time fits, two at once do not.
  Settings s;
  s.world = "sim";
  s.duration = 100s;
  s.rate_per_s = 0.6 * memory_bytes_allowed() / kBytesPerRequest / 100;
  ASSERT_NO_THROW(validate_settings(s));
  const std::vector<Settings> runs{s, s};
  EXPECT_NO_THROW(check_memory_side_by_side(runs, 1));
  const std::string msg = message_of([&] { check_memory_side_by_side(runs, 2); });
  EXPECT_NE(msg.find("--jobs: 2 runs side by side"), std::string::npos) << msg;
  EXPECT_EQ(message_of([&] { check_memory_side_by_side({s}, 8); }), "");  // one run cannot go side by side
}

TEST(SettingsTable, NoPasswordReachesAResultsSettings) {
  Settings s;
  s.db_url = "postgresql://bench:s3cret@127.0.0.1:5432/db";
  s.partner_url = "http://admin:hunter2@127.0.0.1:8080";
  const auto j = settings_json(s);
  EXPECT_EQ(j["db"], "postgresql://bench:***@127.0.0.1:5432/db");
  EXPECT_EQ(j["partner"], "http://admin:***@127.0.0.1:8080");
}

TEST(SettingsTable, AResultsSettingsWriteNumbersAsNumbersAndLeaveUnusedRowsOut) {
  Settings s;
  const auto j = settings_json(s);
  EXPECT_EQ(j["maximum-pool-size"], 10);
  EXPECT_EQ(j["connection-timeout"], "30s");
  EXPECT_EQ(j["arrival"], "open");  // the model --rate, --users, --burst choose
  EXPECT_TRUE(j["crash-at"].is_null());
  for (const char* unused : {"readiness", "key-hash", "etcd-latency", "crash-pod", "virtual-threads", "db"})
    EXPECT_FALSE(j.contains(unused)) << unused;
  apply_setting(s, "crash-at", "2s:3");
  apply_setting(s, "pod-mode", "process");
  apply_setting(s, "strategy", "etcd-lease");
  const auto k = settings_json(s);
  EXPECT_EQ(k["crash-at"], "2s");
  EXPECT_EQ(k["crash-pod"], 3);
  EXPECT_TRUE(k.contains("etcd-latency"));
}

TEST(SettingsTable, TheRunLineNamesTheWorldScenarioAndStrategyThenWhatDiffersQuotedForAShell) {
  Settings s;
  s.strategy = "held-tx:wait";
  apply_setting(s, "users", "10");  // the default count, but it chooses the closed loop: written
  apply_setting(s, "partner-faults", R"({"*":[{"kind":"error","p":0.5}]})");
  EXPECT_EQ(run_command(s, {"--fail-on", "p99>2s"}),
            "lockbench run --world sim --scenario switch-primary --strategy held-tx:wait --users 10 "
            "--partner-faults '{\"*\":[{\"kind\":\"error\",\"p\":0.5}]}' --fail-on 'p99>2s'");
  Settings back;
  apply_given(back, {{"users", "10"}, {"strategy", "held-tx:wait"}});
  EXPECT_EQ(back.arrival, Arrival::closed);
  s.partner_faults = nlohmann::json::object();
  s.strategy = "it's";
  EXPECT_EQ(run_command(s), "lockbench run --world sim --scenario switch-primary --strategy 'it'\\''s' --users 10");
}

TEST(SettingsTable, EveryDurationRowIsBoundedAfterTheTimeScaleNamingItself) {
  for (const auto& d : setting_defs())
    if (d.type.rfind("DURATION", 0) == 0) {
      EXPECT_TRUE(d.longest) << "--" << d.name << " has no bound";
    }
  Settings s;
  apply_setting(s, "world", "real");
  apply_setting(s, "time-scale", "1000");
  EXPECT_NO_THROW(validate_settings(s));
  apply_setting(s, "email-latency", "2000h");  // below the cap, above it a thousand times over
  const std::string msg = message_of([&] { validate_settings(s); });
  EXPECT_NE(msg.find("--email-latency: '2000h' times --time-scale is too long"), std::string::npos) << msg;
}
