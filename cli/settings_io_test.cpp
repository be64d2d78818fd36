#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "cli/settings_io.hpp"

using namespace lockbench;
using namespace lockbench::cli;
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

TEST(SettingsIo, FlagsApplyWithUnits) {
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

TEST(SettingsIo, BadValuesGetOneLineNamingTheSettingAndWhatIsAccepted) {
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

TEST(SettingsIo, TomlFileAppliesEveryKeyAndRefusesUnknownOnes) {
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

TEST(SettingsIo, ValidateRefusesOutOfRangeCombinations) {
  Settings s;
  s.apply_at = 2;
  EXPECT_NE(message_of([&] { s.validate(); }).find("--apply-at"), std::string::npos);
}
