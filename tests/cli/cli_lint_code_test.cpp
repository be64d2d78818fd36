// `lockbench lint --code DIR` end to end: the findings of the labelled corpus
// (lint_code/testdata/corpus) with the simulator's consequence at the incident's
// settings, the `lockbench run` line that reproduces the figure, the outputs,
// the exit codes and the one-line errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>
#include <vector>

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

namespace {

// A scratch directory of this test process, removed with it.
struct Scratch {
  std::string dir = std::filesystem::temp_directory_path() / ("cli_lint_code_" + std::to_string(::getpid()) + "_" +
                                                               ::testing::UnitTest::GetInstance()->current_test_info()->name());
  Scratch() { std::filesystem::create_directories(dir); }
  ~Scratch() { std::filesystem::remove_all(dir); }
  std::string write(const std::string& name, const std::string& text) const {
    const std::string path = dir + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
};

const json* finding_of_kind(const json& out, const std::string& kind, const std::string& file) {
  for (const auto& f : out["findings"])
    if (f["kind"] == kind && f["file"] == file) return &f;
  return nullptr;
}

// "N of M entity saves wrote the lock columns back" -> N (-1 when absent).
long long stomps_in(const std::string& text, std::size_t from = 0) {
  const auto at = text.find(" entity saves wrote the lock columns back", from);
  if (at == std::string::npos) return -1;
  const auto of = text.rfind(" of ", at);
  const auto start = text.rfind(' ', of - 1);
  return std::stoll(text.substr(start + 1, of - start - 1));
}

// One scrape in Micrometer's names: the partner's histogram (p50 1.6 s), a pool
// of 12, and 36,000 requests over an hour's uptime: 10/s.
const char* const kScrape = R"(http_client_requests_seconds_bucket{clientName="partner",le="0.5"} 0
http_client_requests_seconds_bucket{clientName="partner",le="1.0"} 1000
http_client_requests_seconds_bucket{clientName="partner",le="2.0"} 8500
http_client_requests_seconds_bucket{clientName="partner",le="4.0"} 9950
http_client_requests_seconds_bucket{clientName="partner",le="8.0"} 10000
http_client_requests_seconds_bucket{clientName="partner",le="+Inf"} 10000
http_client_requests_seconds_count{clientName="partner"} 10000
http_client_requests_seconds_sum{clientName="partner"} 16000
hikaricp_connections_max{pool="HikariPool-1"} 12
http_server_requests_seconds_count{method="POST",uri="/pay",status="200"} 36000
process_uptime_seconds 3600
)";

}  // namespace

TEST(CliLintCode, APrometheusScrapeGivesTheRateThePoolAndTheLatencyAsPlanReadsIt) {
  REQUIRE_GRAMMAR();
  Scratch s;
  const std::string scrape = s.write("scrape.txt", kScrape);
  const auto r = run_command(kBin + " lint --code " + kCorpus + "/tx --from " + kIncident + " --prometheus " + scrape +
                             " --format json");
  ASSERT_EQ(r.status, 1) << r.out << r.err;
  const json out = json::parse(r.out);
  const json* f = finding(out, "ClassLevelTxService.java");
  ASSERT_NE(f, nullptr) << r.out;
  const std::string consequence = (*f)["consequence"];
  // The scrape's rate (36000 / 3600 s), not the file's 20/s; its pool, not the file's 10.
  EXPECT_NE(consequence.find("at 10/s"), std::string::npos) << consequence;
  EXPECT_NE(consequence.find("this pool of 12 serves"), std::string::npos) << consequence;
  const std::string reproduce = (*f)["reproduce"];
  EXPECT_NE(reproduce.find("--rate 10 "), std::string::npos) << reproduce;
  EXPECT_NE(reproduce.find("--maximum-pool-size 12"), std::string::npos) << reproduce;
  EXPECT_NE(reproduce.find("--partner-latency lognormal:p50="), std::string::npos) << reproduce;
  // A flag still wins over the scrape, x --pods as plan counts it.
  const auto flag = run_command(kBin + " lint --code " + kCorpus + "/tx --from " + kIncident + " --prometheus " + scrape +
                                " --rate 7 --format json");
  const json flag_out = json::parse(flag.out);
  const json* g = finding(flag_out, "ClassLevelTxService.java");
  ASSERT_NE(g, nullptr) << flag.out;
  EXPECT_NE((*g)["consequence"].get<std::string>().find("at 7/s"), std::string::npos) << (*g)["consequence"];
  const auto pods = run_command(kBin + " lint --code " + kCorpus + "/tx --from " + kIncident + " --prometheus " + scrape +
                                " --pods 2 --format json");
  const json pods_out = json::parse(pods.out);
  const json* h = finding(pods_out, "ClassLevelTxService.java");
  ASSERT_NE(h, nullptr) << pods.out;
  EXPECT_NE((*h)["consequence"].get<std::string>().find("at 20/s"), std::string::npos) << (*h)["consequence"];
  // What was read is said on stderr in the text format.
  const auto text = run_command(kBin + " lint --code " + kCorpus + "/tx --prometheus " + scrape);
  EXPECT_NE(text.err.find("rate 10.000/s = requests served / 3600 s uptime"), std::string::npos) << text.err;
}

TEST(CliLintCode, ARefusedScrapeIsOneLineAndExitTwo) {
  Scratch s;
  const std::string no_histogram = s.write("bad.txt", "hikaricp_connections_max 10\nprocess_uptime_seconds 5\n");
  const auto r = run_command(kBin + " lint --code " + kCorpus + " --prometheus " + no_histogram);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("--prometheus"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("http_client_requests_seconds_bucket"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  const auto missing = run_command(kBin + " lint --code " + kCorpus + " --prometheus " + s.dir + "/none.txt");
  EXPECT_EQ(missing.status, 2);
  EXPECT_EQ(std::count(missing.err.begin(), missing.err.end(), '\n'), 1) << missing.err;
}

TEST(CliLintCode, TheOrmLeaseConsequenceCountsTheStompsAndTheUnmappedLeaseShowsNone) {
  REQUIRE_GRAMMAR();
  const auto r = run_command(kBin + " lint --code " + kCorpus + " --from " + kIncident + " --format json");
  ASSERT_EQ(r.status, 1) << r.err;
  const json out = json::parse(r.out);
  const json* f = finding_of_kind(out, "orm-lease", "lease/JobWorker.java");
  ASSERT_NE(f, nullptr) << r.out;
  const std::string consequence = (*f)["consequence"];
  // The simulator's count at the incident's rate, the assumed shape said.
  const long long mapped = stomps_in(consequence);
  EXPECT_GT(mapped, 0) << consequence;
  EXPECT_NE(consequence.find("assumed: this load-and-save path at 5/s"), std::string::npos) << consequence;
  EXPECT_NE(consequence.find("twice the"), std::string::npos) << consequence;
  // The fix, the same saves: not one stomp.
  const auto fixed_at = consequence.find("with the lease columns kept out of the entity");
  ASSERT_NE(fixed_at, std::string::npos) << consequence;
  EXPECT_NE(consequence.find(": 0 of ", fixed_at), std::string::npos) << consequence;
  // No third request enters a held lease (the incident's retries still overlap calls, on both sides).
  EXPECT_EQ(consequence.find("overlap_person", fixed_at), std::string::npos) << consequence;
  // The printed run line reproduces the count.
  const std::string reproduce = (*f)["reproduce"];
  EXPECT_NE(reproduce.find("--strategy row-lease:orm-mapped"), std::string::npos) << reproduce;
  Scratch s;
  const auto run = run_command(kBin + reproduce.substr(std::string("lockbench").size()) + " --out " + s.dir + "/r.json");
  ASSERT_EQ(run.status, 0) << run.err;
  const json result = json::parse(lockbench::testing::slurp(s.dir + "/r.json"));
  const json& one = result.is_array() ? result[0] : result;
  ASSERT_TRUE(one.contains("side_traffic")) << run.out.substr(0, 2000);
  EXPECT_EQ(one["side_traffic"]["lock_stomps"].get<long long>(), mapped) << consequence;
  // The safe variant of the same code (the lease columns not updatable): no finding, nothing to stomp.
  EXPECT_EQ(finding_of_kind(out, "orm-lease", "lease/SafeJobWorker.java"), nullptr) << r.out;
  // Given --keys and --orm-writer-rate, they are kept, not assumed.
  const auto given = run_command(kBin + " lint --code " + kCorpus + " --from " + kIncident +
                                 " --keys 400 --orm-writer-rate 2 --format json");
  const json given_out = json::parse(given.out);
  const json* g = finding_of_kind(given_out, "orm-lease", "lease/JobWorker.java");
  ASSERT_NE(g, nullptr) << given.out;
  EXPECT_EQ((*g)["consequence"].get<std::string>().find("assumed: this load-and-save path"), std::string::npos);
  EXPECT_EQ((*g)["consequence"].get<std::string>().find("(--keys)"), std::string::npos) << (*g)["consequence"];
  EXPECT_NE((*g)["reproduce"].get<std::string>().find("--keys 400"), std::string::npos) << (*g)["reproduce"];
}

// SARIF of lint --code and of lint (the settings), against the official SARIF
// 2.1.0 schema that scripts/test fetches from npm (@microsoft/sarif-multitool-linux's
// sarif-2.1.0.json), with python3-jsonschema. A log broken on purpose must fail.
TEST(CliLintCode, SarifOfCodeAndOfSettingsValidatesAgainstTheOfficialSchema) {
  const char* env = std::getenv("LOCKBENCH_SARIF_SCHEMA");
  const std::string schema = env && *env ? env : LOCKBENCH_SARIF_SCHEMA_DEFAULT;
  if (!std::filesystem::exists(schema))
    GTEST_SKIP() << "no SARIF 2.1.0 schema at " << schema << " (scripts/test fetches it from npm)";
  const std::string validate = "python3 " + kSource + "/lint_code/validate_sarif.py " + schema;
  if (run_command(validate).status == 3) GTEST_SKIP() << "python3-jsonschema is not installed";
  Scratch s;
  std::vector<std::string> logs;
  const auto settings = run_command(kBin + " lint --from " + kIncident + " --format sarif");
  ASSERT_TRUE(settings.status == 0 || settings.status == 1) << settings.err;
  logs.push_back(s.write("settings.sarif", settings.out));
  std::string code_log;
  if (LOCKBENCH_HAVE_JAVA_GRAMMAR) {
    const auto code = run_command(kBin + " lint --code " + kCorpus + " --from " + kIncident + " --format sarif");
    ASSERT_EQ(code.status, 1) << code.err;
    code_log = code.out;
    logs.push_back(s.write("code.sarif", code.out));
  }
  std::string args;
  for (const auto& l : logs) args += " " + l;
  const auto v = run_command(validate + args);
  EXPECT_EQ(v.status, 0) << v.out << v.err;
  EXPECT_EQ(std::count(v.out.begin(), v.out.end(), '\n'), static_cast<long>(logs.size())) << v.out;
  for (const auto& l : logs) EXPECT_NE(v.out.find(l + ": valid"), std::string::npos) << v.out;
  // The schema binds: a level SARIF does not know is refused.
  json broken = json::parse(logs.size() > 1 ? code_log : settings.out);
  ASSERT_FALSE(broken["runs"][0]["results"].empty());
  broken["runs"][0]["results"][0]["level"] = "fatal";
  const auto bad = run_command(validate + " " + s.write("broken.sarif", broken.dump()));
  EXPECT_EQ(bad.status, 1) << bad.out;
  EXPECT_NE(bad.out.find("invalid"), std::string::npos) << bad.out;
}
