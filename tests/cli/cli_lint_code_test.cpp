// `lockbench lint --code DIR` end to end: the findings of the labelled corpus
// (lint_code/testdata/corpus) with the simulator's consequence at the incident's
// settings, the `lockbench run` line that reproduces the figure, the outputs,
// the exit codes and the one-line errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "run_command.hpp"

using lockbench::testing::run_command;
using nlohmann::json;

namespace {

const std::string kBin = LOCKBENCH_BIN;
const std::string kSource = LOCKBENCH_SOURCE_DIR;
const std::string kCorpus = kSource + "/lint_code/testdata/corpus";
const std::string kIncident = kSource + "/examples/incident/application.yml";

#define REQUIRE_GRAMMAR()                                                                                  \
  if (!LOCKBENCH_HAVE_JAVA_GRAMMAR)                                                                         \
  GTEST_SKIP() << "no Java grammar in this build (libtree-sitter-dev and npm tree-sitter-java)"

const json* finding(const json& out, const std::string& file) {
  for (const auto& f : out["findings"])
    if (f["file"] == file && f["kind"] == "remote-in-tx") return &f;
  return nullptr;
}

// ok/s of the table row of `strategy` that `lockbench run` prints.
double ok_per_s_of(const std::string& table, const std::string& strategy) {
  std::istringstream in(table);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream row(line);
    std::string name;
    row >> name;
    if (name != strategy) continue;
    std::string cell;
    for (int i = 0; i < 6 && row >> cell; ++i) {
    }
    return std::stod(cell);
  }
  return -1;
}

}  // namespace

TEST(CliLintCode, AHeldTxCallGetsTheSimulatorsFigureAndTheRunThatReproducesIt) {
  REQUIRE_GRAMMAR();
  const auto r = run_command(kBin + " lint --code " + kCorpus + " --from " + kIncident + " --format json");
  ASSERT_EQ(r.status, 1) << r.out << r.err;
  const json out = json::parse(r.out);
  const json* f = finding(out, "tx/ClassLevelTxService.java");
  ASSERT_NE(f, nullptr) << r.out;
  EXPECT_EQ((*f)["line"], 21);
  EXPECT_EQ((*f)["remote_calls"], 1);
  const std::string consequence = (*f)["consequence"];
  EXPECT_NE(consequence.find("holds a connection through 1 call; at 20/s"), std::string::npos) << consequence;
  EXPECT_NE(consequence.find("this pool of 10 serves"), std::string::npos) << consequence;
  const std::string reproduce = (*f)["reproduce"];
  ASSERT_EQ(reproduce.rfind("lockbench run --world sim ", 0), 0u) << reproduce;
  EXPECT_NE(reproduce.find("--strategy held-tx:wait"), std::string::npos);
  EXPECT_NE(reproduce.find("--scenario single-call"), std::string::npos);
  EXPECT_NE(reproduce.find("--partner-read-timeout 5s"), std::string::npos);  // the file's Feign read timeout
  // The printed line, run, gives the printed figure: the same simulator, the same settings.
  const auto run = run_command(kBin + reproduce.substr(std::string("lockbench").size()));
  ASSERT_EQ(run.status, 0) << run.err;
  const double ok = ok_per_s_of(run.out, "held-tx:wait");
  ASSERT_GT(ok, 0) << run.out;
  char serves[64];
  std::snprintf(serves, sizeof serves, "serves %.1f/s", ok);
  EXPECT_NE(consequence.find(serves), std::string::npos) << consequence << " / " << run.out;
  // Two calls in the transaction: switch-primary's shape.
  const json* two = finding(out, "tx/MethodTxViaBean.java");
  ASSERT_NE(two, nullptr);
  EXPECT_NE((*two)["consequence"].get<std::string>().find("through 2 calls"), std::string::npos);
  EXPECT_EQ((*two)["reproduce"].get<std::string>().find("--scenario single-call"), std::string::npos);
}

TEST(CliLintCode, WithoutASettingsFileTheFindingSaysWhereTheFigureComesFrom) {
  REQUIRE_GRAMMAR();
  const auto r = run_command(kBin + " lint --code " + kCorpus + "/tx");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("FLAG remote-in-tx: ClassLevelTxService.java:21:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("give --from application.yml"), std::string::npos);
  EXPECT_EQ(r.out.find("reproduce:"), std::string::npos);
}

TEST(CliLintCode, SarifCarriesEveryFindingWithItsPath) {
  REQUIRE_GRAMMAR();
  const auto r = run_command(kBin + " lint --code " + kCorpus + " --format sarif");
  ASSERT_EQ(r.status, 1) << r.err;
  const json s = json::parse(r.out);
  EXPECT_EQ(s["version"], "2.1.0");
  const auto& results = s["runs"][0]["results"];
  ASSERT_FALSE(results.empty());
  const std::string uri = results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"];
  EXPECT_EQ(uri.rfind(kCorpus, 0), 0u) << uri;  // DIR/file, as code scanning resolves it
}

TEST(CliLintCode, ExitCodesFollowFailOnAndACleanTreePasses) {
  REQUIRE_GRAMMAR();
  EXPECT_EQ(run_command(kBin + " lint --code " + kCorpus + " --fail-on never").status, 0);
  const auto clean = run_command(kBin + " lint --code " + kCorpus + "/sync --fail-on flag");
  EXPECT_EQ(clean.status, 1);  // sync/ holds three flagged locks
  const std::string dir = std::filesystem::temp_directory_path() / ("cli_lint_code_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(kCorpus + "/sync/CacheSync.java", dir + "/CacheSync.java");
  const auto ok = run_command(kBin + " lint --code " + dir);
  EXPECT_EQ(ok.status, 0) << ok.out;
  EXPECT_NE(ok.out.find("code: 0 flagged, 0 warnings, 0 notes"), std::string::npos) << ok.out;
  std::filesystem::remove_all(dir);
}

TEST(CliLintCode, BadOptionsAreOneLineAndExitTwo) {
  const auto bad_fail_on = run_command(kBin + " lint --code " + kCorpus + " --fail-on maybe");
  EXPECT_EQ(bad_fail_on.status, 2);
  const auto not_dir = run_command(kBin + " lint --code " + kIncident);
  EXPECT_EQ(not_dir.status, 2);
  const auto alone = run_command(kBin + " lint --fail-on warn");
  EXPECT_EQ(alone.status, 2);
  EXPECT_NE(alone.err.find("only with --code DIR"), std::string::npos) << alone.err;
  if (LOCKBENCH_HAVE_JAVA_GRAMMAR) {
    EXPECT_NE(bad_fail_on.err.find("--fail-on: 'maybe' is not accepted"), std::string::npos) << bad_fail_on.err;
    EXPECT_NE(not_dir.err.find("is not a directory"), std::string::npos) << not_dir.err;
  } else {
    EXPECT_NE(not_dir.err.find("built without the Java grammar"), std::string::npos) << not_dir.err;
  }
  EXPECT_EQ(std::count(not_dir.err.begin(), not_dir.err.end(), '\n'), 1) << not_dir.err;
}
