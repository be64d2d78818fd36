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

// Issue 32: the service's Deployment beside its Spring file. The incident's
// liveness probe on /actuator/health checks the database: the restart cascade.
TEST(CliLint, TheIncidentsDeploymentIsFlaggedForALivenessProbeThatChecksTheDatabase) {
  const auto r = run_command(kBin + " lint --from " + kExamples + "incident/application.yml --from " + kExamples +
                             "incident/deployment.yaml");
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("FLAG probes: the liveness probe checks the database (Deployment checkout, container app: "
                       "livenessProbe httpGet /actuator/health every 10s, timeout 1s, failureThreshold 3"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("livenessProbe.httpGet.path: /actuator/health/liveness"), std::string::npos) << r.out;
  // replicas 3 became --pods 3: three pools of 10.
  EXPECT_NE(r.out.find("3 pods x 10 = 30 pooled connections"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("Deployment checkout, container app: replicas 3 (--pods)"), std::string::npos) << r.err;
}

TEST(CliLint, TheHealthyDeploymentWithItsLivenessGroupPasses) {
  const auto r = run_command(kBin + " lint --from " + kExamples + "healthy/application.properties --from " +
                             kExamples + "healthy/deployment.yaml");
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("OK   probes: the liveness probe does not check the database (Deployment identity, container "
                       "app: livenessProbe httpGet /actuator/health/liveness"),
            std::string::npos)
      << r.out;
  // A flag still wins over the file: the probe given on the command line is the one checked.
  const auto flag = run_command(kBin + " lint --from " + kExamples + "healthy/application.properties --from " +
                                kExamples + "healthy/deployment.yaml --liveness on");
  EXPECT_EQ(flag.status, 1) << flag.out;
  EXPECT_NE(flag.out.find("FLAG probes: the liveness probe checks the database (period=10s"), std::string::npos)
      << flag.out;
}

std::string deployment_file(const std::string& name, const std::string& liveness_fields) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: api}\nspec:\n  template:\n"
                      << "    spec:\n      containers:\n        - name: app\n          livenessProbe:\n"
                      << "            httpGet: {path: /actuator/health/liveness, port: 8080}\n"
                      << liveness_fields;
  return path;
}

TEST(CliLint, ProbeSettingsKubernetesWouldRefuseGetOneLineAndExit2) {
  const auto negative =
      run_command(kBin + " lint --from " + deployment_file("negative.yaml", "            failureThreshold: -1\n"));
  EXPECT_EQ(negative.status, 2) << negative.out << negative.err;
  EXPECT_NE(negative.err.find("Deployment api, container app, livenessProbe.failureThreshold: -1 is not accepted "
                              "(Kubernetes refuses a negative value"),
            std::string::npos)
      << negative.err;
  const auto success =
      run_command(kBin + " lint --from " + deployment_file("success.yaml", "            successThreshold: 2\n"));
  EXPECT_EQ(success.status, 2) << success.out;
  EXPECT_NE(success.err.find("must be 1 for liveness and startup probes"), std::string::npos) << success.err;
  const auto flag = run_command(kBin + " lint --liveness failure-threshold=0");
  EXPECT_EQ(flag.status, 2);
  EXPECT_NE(flag.err.find("--liveness: failure-threshold 0 is not accepted"), std::string::npos) << flag.err;
  // A 0 in the manifest is Kubernetes' default (the API server fills it in), not an error.
  const auto zero =
      run_command(kBin + " lint --from " + deployment_file("zero.yaml", "            failureThreshold: 0\n"));
  EXPECT_NE(zero.status, 2) << zero.err;
  const auto bad_yaml = run_command(kBin + " lint --from " + deployment_file("broken.yaml", "    - [unclosed\n"));
  EXPECT_EQ(bad_yaml.status, 2) << bad_yaml.out;
  EXPECT_NE(bad_yaml.err.find("--from"), std::string::npos) << bad_yaml.err;
}

TEST(CliLint, SynchronizedOnVirtualThreadsBelowJdk24IsFlagged) {
  const std::string path = ::testing::TempDir() + "virtual.properties";
  std::ofstream(path) << "spring.threads.virtual.enabled=true\nlockbench.strategy=synchronized\n"
                      << "lockbench.rate=20\nlockbench.partner-latency=fixed:1500ms\n";
  const auto on21 = run_command(kBin + " lint --from " + path + " --jdk 21");
  EXPECT_EQ(on21.status, 1) << on21.out << on21.err;
  EXPECT_NE(on21.out.find("FLAG threads: synchronized holds a monitor (synchronized) through the partner call, on "
                          "virtual threads on JDK 21"),
            std::string::npos)
      << on21.out;
  const auto on24 = run_command(kBin + " lint --from " + path + " --jdk 24");
  EXPECT_NE(on24.out.find("OK   threads: synchronized holds a monitor"), std::string::npos) << on24.out;
  const auto bad = run_command(kBin + " lint --from " + path + " --jdk twenty-one");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--jdk"), std::string::npos) << bad.err;
}

}  // namespace cli_lint_test
