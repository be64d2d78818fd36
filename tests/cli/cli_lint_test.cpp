// `lockbench lint` as an architect uses it in a design review: the service's own
// Spring Boot configuration (the checked-in examples), text, JSON and SARIF.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "run_command.hpp"

using lockbench::testing::run_command;
using nlohmann::json;

namespace cli_lint_test {

const std::string kBin = LOCKBENCH_BIN;
const std::string kExamples = std::string(LOCKBENCH_SOURCE_DIR) + "/examples/";

TEST(CliLint, TheArticlesIncidentConfigurationIsFlaggedForItsPool) {
  const auto r = run_command(kBin + " lint --from " + kExamples + "incident/application.yml");
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("FLAG pool: held-tx will exhaust the pool"), std::string::npos) << r.out;
  // Hikari's 30000 ms, Tomcat's 200 threads and the Feign timeouts were read from the file.
  EXPECT_NE(r.err.find("not read: spring.datasource.url"), std::string::npos) << r.err;
}

TEST(CliLint, AHealthyPropertiesFilePasses) {
  const auto r = run_command(kBin + " lint --from " + kExamples + "healthy/application.properties");
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("OK   lease: lease TTL 1m > worst-case critical section 37.2s"), std::string::npos) << r.out;
}

TEST(CliLint, AFlagWinsOverTheFile) {
  // The healthy file with a TTL below the worst case: flagged.
  const auto r = run_command(kBin + " lint --from " + kExamples + "healthy/application.properties --lease-ttl 10s");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("FLAG lease"), std::string::npos) << r.out;
}

TEST(CliLint, TheStrategyOfAConfigFileIsTheOneChecked) {
  const auto r = run_command(kBin + " lint --config " + kExamples + "incident.toml --strategy none --partner-read-timeout 5s");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("FLAG exclusion: none does not exclude"), std::string::npos) << r.out;
}

TEST(CliLint, JsonAndSarifOutputsParseAndAgreeWithTheExitStatus) {
  const auto j = run_command(kBin + " lint --format json --from " + kExamples + "incident/application.yml");
  EXPECT_EQ(j.status, 1);
  const json doc = json::parse(j.out);
  EXPECT_EQ(doc["verdict"], "flagged");
  EXPECT_FALSE(doc["findings"].empty());
  const auto s = run_command(kBin + " lint --format sarif --from " + kExamples + "incident/application.yml");
  EXPECT_EQ(s.status, 1);
  const json sarif = json::parse(s.out);
  EXPECT_EQ(sarif["version"], "2.1.0");
  ASSERT_EQ(sarif["runs"].size(), 1u);
  bool pool_error = false;
  for (const auto& res : sarif["runs"][0]["results"])
    pool_error = pool_error || (res["ruleId"] == "lockbench/pool" && res["level"] == "error");
  EXPECT_TRUE(pool_error) << s.out;
  const auto bad = run_command(kBin + " lint --format xml --from " + kExamples + "healthy/application.properties");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--format"), std::string::npos) << bad.err;
}

TEST(CliLint, ABadValueInTheFileNamesTheSpringKey) {
  const std::string path = "/tmp/lockbench-lint-" + std::to_string(::getpid()) + ".properties";
  {
    FILE* f = std::fopen(path.c_str(), "w");
    std::fputs("spring.datasource.hikari.maximum-pool-size=ten\n", f);
    std::fclose(f);
  }
  const auto r = run_command(kBin + " lint --from " + path);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("spring.datasource.hikari.maximum-pool-size"), std::string::npos) << r.err;
  std::remove(path.c_str());
  const auto missing = run_command(kBin + " lint --from /nonexistent/application.yml");
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.err.find("--from"), std::string::npos) << missing.err;
}

// The @Transactional article's "delay connection acquisition": both Spring keys
// read from the service's file, and the hold time it saves for the pre-SQL work.
std::string spring_file(const std::string& name, const std::string& autocommit_lines) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << "spring.datasource.hikari.maximum-pool-size=4\n"
                      << autocommit_lines << "lockbench.strategy=held-tx\nlockbench.scenario=single-call\n"
                      << "lockbench.rate=15\nlockbench.partner-latency=fixed:200ms\nlockbench.pre-sql-work=200ms\n";
  return path;
}

TEST(CliLint, BothAutocommitKeysDelayTheConnectionAndTheFindingSaysWhatItSaves) {
  const auto on = run_command(kBin + " lint --from " +
                              spring_file("delayed.properties",
                                          "spring.datasource.hikari.auto-commit=false\n"
                                          "spring.jpa.properties.hibernate.connection.provider_disables_autocommit=true\n"));
  EXPECT_EQ(on.status, 0) << on.out << on.err;
  EXPECT_NE(on.out.find("OK   acquisition: the connection is taken at the first SQL"), std::string::npos) << on.out;
  EXPECT_NE(on.out.find("saves 200ms"), std::string::npos) << on.out;
  // Only one of the two: Hibernate is told auto-commit is off while Hikari leaves it on.
  const auto half = run_command(
      kBin + " lint --from " +
      spring_file("half.properties", "spring.jpa.properties.hibernate.connection.provider_disables_autocommit=true\n"));
  EXPECT_EQ(half.status, 1) << half.out;
  EXPECT_NE(half.out.find("FLAG acquisition: the connection is held from the transaction's start"), std::string::npos)
      << half.out;
  EXPECT_NE(half.err.find("every statement commits on its own"), std::string::npos) << half.err;
  const auto bad = run_command(kBin + " lint --from " +
                               spring_file("bad.properties", "spring.datasource.hikari.auto-commit=perhaps\n"));
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("spring.datasource.hikari.auto-commit"), std::string::npos) << bad.err;
}

}  // namespace cli_lint_test
