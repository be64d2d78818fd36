// `lockbench plan` as a design reviewer uses it: the article's incident
// configuration in, which strategies meet the targets with which settings and
// why, the recommendation as a diff of the file, and the recommended settings
// run again in the simulator meeting the targets; infeasible targets (exit 1
// with the closest point), a Prometheus scrape, and bad input (exit 2, one line).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "run_command.hpp"

using lockbench::testing::run_command;
using lockbench::testing::slurp;
using nlohmann::json;

namespace cli_plan_test {

const std::string kBin = LOCKBENCH_BIN;
const std::string kIncident = std::string(LOCKBENCH_SOURCE_DIR) + "/examples/incident/application.yml";

std::string temp_dir() {
  const auto dir = std::filesystem::temp_directory_path() / ("lockbench-plan-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir.string();
}

// One plan of the incident, shared by the tests that read it (2 seeds, as a review would run 3).
struct IncidentPlan {
  int status = -1;
  json plan;
  std::string err, svg, html;
};
const IncidentPlan& incident_plan() {
  static const IncidentPlan p = [] {
    IncidentPlan out;
    out.svg = temp_dir() + "/envelope.svg";
    out.html = temp_dir() + "/plan.html";
    const auto r = run_command(kBin + " plan --from " + kIncident + " --seeds 2 --horizon 10m --format json --svg " + out.svg +
                               " --html " + out.html);
    out.status = r.status;
    out.err = r.err;
    out.plan = json::parse(r.out, nullptr, false);
    return out;
  }();
  return p;
}

const json& strategy_of(const json& plan, const std::string& name) {
  for (const auto& s : plan["strategies"])
    if (s["strategy"] == name) return s;
  static const json none;
  return none;
}

TEST(CliPlan, TheIncidentConfigSaysWhichStrategiesMeetTheTargetsWithWhichSettingsAndWhy) {
  const auto& p = incident_plan();
  ASSERT_EQ(p.status, 0) << p.err;
  ASSERT_TRUE(p.plan.is_object()) << p.err;
  EXPECT_EQ(p.plan["current_strategy"], "held-tx");
  // A lock that does not exclude cannot keep the partner's checks clean, on paper and in the simulator.
  for (const char* broken : {"none", "optimistic"}) {
    const json& s = strategy_of(p.plan, broken);
    ASSERT_TRUE(s.is_object()) << broken;
    EXPECT_FALSE(s["paper"]["feasible"].get<bool>()) << broken;
    EXPECT_FALSE(s["simulator"]["feasible"].get<bool>()) << broken;
  }
  // held-tx meets them only with a pool above Little's floor (20/s x two calls of ~1.6 s each).
  const json& held = strategy_of(p.plan, "held-tx:wait");
  ASSERT_TRUE(held.is_object());
  EXPECT_TRUE(held["simulator"]["feasible"].get<bool>());
  EXPECT_GT(held["simulator"]["chosen"]["maximum-pool-size"].get<int>(), held["paper"]["erlangs"].get<double>());
  EXPECT_FALSE(held["simulator"]["below"]["met"].get<bool>());  // one connection fewer breaks a target
  const json& interval = held["simulator"]["chosen"]["p99_ms_summary"];
  EXPECT_EQ(interval["n"], 2);
  EXPECT_LE(interval["ci95_low"].get<double>(), interval["mean"].get<double>());
  EXPECT_GE(interval["ci95_high"].get<double>(), interval["mean"].get<double>());
  // row-lease holds no connection through the calls: a tiny pool, a TTL above the worst case.
  const json& lease = strategy_of(p.plan, "row-lease");
  ASSERT_TRUE(lease.is_object());
  EXPECT_TRUE(lease["simulator"]["feasible"].get<bool>());
  // Fewest changes: the service's pool of 10 is kept; the search's own answer is far smaller.
  EXPECT_EQ(lease["simulator"]["chosen"]["maximum-pool-size"].get<int>(), 10);
  EXPECT_LT(lease["simulator"]["shortest"]["maximum-pool-size"].get<int>(), 5);
  EXPECT_TRUE(lease["simulator"]["chosen"]["at_horizon"].get<bool>());
  EXPECT_EQ(lease["simulator"]["chosen"]["poisson_95"]["violations"]["seen"], 0);
  EXPECT_NEAR(lease["simulator"]["chosen"]["poisson_95"]["violations"]["upper_95"].get<double>(), 2.9957, 1e-3);
  EXPECT_GT(lease["paper"]["settings"]["lease-ttl"].get<std::string>().size(), 0u);
  EXPECT_GT(lease["paper"]["recovery_ms"].get<double>(), lease["paper"]["worst_case_window_ms"].get<double>());
  EXPECT_TRUE(lease["simulator"]["slow_partner"]["met"].get<bool>());
  // Why: the arithmetic, and the run line of every run.
  for (const auto& s : p.plan["strategies"]) {
    const std::string why = s["paper"]["why"].dump();
    EXPECT_NE(why.find("Little's law"), std::string::npos) << s["strategy"];
    EXPECT_NE(why.find("Erlang C"), std::string::npos) << s["strategy"];
    ASSERT_TRUE(s["simulator"]["chosen"].is_object()) << s["strategy"];
    for (const auto& line : s["simulator"]["chosen"]["runs"])
      EXPECT_EQ(line.get<std::string>().rfind("lockbench run --world sim", 0), 0u) << line;
  }
  ASSERT_TRUE(p.plan["recommended"].is_string());
  // The diff is a YAML diff of the file (the old properties lines with lockbench.* keys were the bug):
  // only Spring keys change, the strategy is a comment naming `lockbench explain`, the pool and threads stay.
  const std::string rec = p.plan["recommended"].get<std::string>();
  const std::string diff = p.plan["properties_diff"].get<std::string>();
  EXPECT_NE(diff.find("@@ "), std::string::npos) << diff;
  EXPECT_NE(diff.find("+# lockbench plan: strategy held-tx -> " + rec), std::string::npos) << diff;
  EXPECT_NE(diff.find("`lockbench explain " + rec + "`"), std::string::npos) << diff;
  EXPECT_EQ(diff.find("-  strategy:"), std::string::npos) << diff;
  EXPECT_EQ(diff.find("maximum-pool-size"), std::string::npos) << diff;
  EXPECT_EQ(diff.find("max: "), std::string::npos) << diff;
  EXPECT_NE(diff.find("+  read-timeout: 6100\n"), std::string::npos) << diff;
  // And it applies to that YAML file.
  if (system("command -v patch >/dev/null 2>&1") == 0) {
    const std::string copy = temp_dir() + "/application.yml";
    std::filesystem::copy_file(kIncident, copy, std::filesystem::copy_options::overwrite_existing);
    std::ofstream(temp_dir() + "/plan.diff") << diff;
    EXPECT_EQ(run_command("patch -s " + copy + " < " + temp_dir() + "/plan.diff").status, 0);
    const std::string patched = slurp(copy);
    EXPECT_NE(patched.find("  read-timeout: 6100\n"), std::string::npos) << patched;
    EXPECT_NE(patched.find("maximum-pool-size: 10\n"), std::string::npos) << patched;
  }
}

// Issue 41: the seeds' own incident gets an answer, and it keeps the incident's pool of 10.
TEST(CliPlan, ThePresetIncidentRecommendsRowLeaseKeepingItsPoolOfTen) {
  const auto r = run_command(kBin + " plan --preset incident --strategy held-tx,row-lease,advisory-xact --seeds 2 "
                                    "--duration 1m --horizon 10m");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("recommended: row-lease with maximumPoolSize 10,"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ambiguity (apart from lock failures)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("confirmed: 0 lock failures in 2 x 10m"), std::string::npos) << r.out;
}

// Issue 42: --svg on a device exits 2 before any run; --html alone leaves nothing beside the page;
// a Prometheus input is read only up to its cap.
TEST(CliPlan, WritersAndReadersOfPlanKeepToRegularFilesAndTheirCaps) {
  const auto dev = run_command(kBin + " plan --strategy row-lease --horizon 0 --duration 10s --svg /dev/full");
  EXPECT_EQ(dev.status, 2) << dev.err;
  EXPECT_NE(dev.err.find("--svg: '/dev/full' exists and is not a regular file"), std::string::npos) << dev.err;
  const std::string dir = temp_dir() + "/html-only";
  std::filesystem::create_directories(dir);
  const auto html = run_command(kBin + " plan --strategy row-lease --horizon 0 --duration 10s --html " + dir + "/p.html");
  EXPECT_EQ(html.status, 0) << html.err;
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) files.push_back(e.path().filename().string());
  EXPECT_EQ(files, std::vector<std::string>{"p.html"});
  const auto zero = run_command(kBin + " plan --prometheus /dev/zero");
  EXPECT_EQ(zero.status, 2);
  EXPECT_NE(zero.err.find("larger than 16 MiB"), std::string::npos) << zero.err;
  // A plan whose --fail-on leaves violations out still keeps exclusion: `none` is never recommended.
  const auto none = run_command(kBin + " plan --fail-on 'p99>10s' --keys 2 --rate 10 --strategy none --horizon 0 "
                                       "--duration 20s");
  EXPECT_EQ(none.status, 1) << none.out;
  EXPECT_NE(none.out.find("it excludes nothing"), std::string::npos) << none.out;
}

// The done-when: the recommended settings, run again as printed, meet the
// targets (each line carries them as --fail-on, so its exit status is the verdict).
TEST(CliPlan, TheRecommendedSettingsRunInTheSimulatorMeetTheTargets) {
  const auto& p = incident_plan();
  ASSERT_TRUE(p.plan.is_object() && p.plan["recommended"].is_string()) << p.err;
  const json& rec = strategy_of(p.plan, p.plan["recommended"].get<std::string>());
  const auto& runs = rec["simulator"]["chosen"]["runs"];
  ASSERT_EQ(runs.size(), 2u);
  for (const auto& line : runs) {
    const std::string cmd = kBin + line.get<std::string>().substr(std::string("lockbench").size()) + " --quiet";
    const auto r = run_command(cmd);
    EXPECT_EQ(r.status, 0) << cmd << "\n" << r.out << r.err;
    EXPECT_EQ(r.err.find("--fail-on"), std::string::npos) << r.err;
  }
  // And one connection fewer for held-tx, as printed, breaks one: the line's exit status says so.
  const auto& below = strategy_of(p.plan, "held-tx:wait")["simulator"]["below"]["runs"];
  ASSERT_FALSE(below.empty());
  bool any_broken = false;
  for (const auto& line : below)
    any_broken = any_broken ||
                 run_command(kBin + line.get<std::string>().substr(std::string("lockbench").size()) + " --quiet").status == 1;
  EXPECT_TRUE(any_broken);
}

TEST(CliPlan, WritesTheSafeEnvelopeAsSvg) {
  const auto& p = incident_plan();
  if (system("command -v gnuplot >/dev/null 2>&1") != 0) GTEST_SKIP() << "gnuplot is not installed";
  const std::string svg = slurp(p.svg);
  EXPECT_NE(svg.find("<svg"), std::string::npos) << p.err;
  EXPECT_NE(svg.find("row-lease"), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(p.svg).replace_extension(".dat")));
}

TEST(CliPlan, WritesThePlanAsOneHtmlPageWithTheEnvelopeInline) {
  const auto& p = incident_plan();
  const std::string html = slurp(p.html);
  EXPECT_EQ(html.rfind("<!doctype html>", 0), 0u) << p.err;
  EXPECT_NE(html.find("<h2>Recommended: " + p.plan["recommended"].get<std::string>() + "</h2>"), std::string::npos);
  EXPECT_NE(html.find("+  read-timeout: 6100"), std::string::npos);  // the YAML diff, escaped into the page
  EXPECT_NE(html.find("Little's law"), std::string::npos);
  if (system("command -v gnuplot >/dev/null 2>&1") == 0) {
    EXPECT_NE(html.find("<svg"), std::string::npos);
  }
}

TEST(CliPlan, InfeasibleTargetsAreAnAnswerExitOneWithTheClosestPoint) {
  // Two partner calls of median 1.5 s cannot finish within 2 s at the 99th percentile.
  const auto r = run_command(kBin + " plan --from " + kIncident +
                             " --strategy row-lease,held-tx --seeds 1 --duration 30s --horizon 10m --fail-on 'violations>0,p99>2s'");
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("no strategy meets the targets; the closest point: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the critical section alone"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the closest point's changes, as a diff of"), std::string::npos) << r.out;
}

const char* const kScrape =
    "http_client_requests_seconds_bucket{uri=\"/link\",le=\"1.0\"} 100\n"
    "http_client_requests_seconds_bucket{uri=\"/link\",le=\"2.0\"} 600\n"
    "http_client_requests_seconds_bucket{uri=\"/link\",le=\"4.0\"} 980\n"
    "http_client_requests_seconds_bucket{uri=\"/link\",le=\"8.0\"} 1000\n"
    "http_client_requests_seconds_bucket{uri=\"/link\",le=\"+Inf\"} 1000\n"
    "hikaricp_connections_max{pool=\"HikariPool-1\"} 10\n"
    "http_server_requests_seconds_count{uri=\"/switch\",status=\"200\"} 1200\n";

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = temp_dir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(CliPlan, APrometheusScrapeGivesTheLatencyPoolAndRate) {
  const std::string path = write_temp("scrape.txt", std::string(kScrape) + "process_uptime_seconds 100\n");
  const auto r = run_command(kBin + " plan --prometheus " + path +
                             " --strategy row-lease --scenario single-call --seeds 1 --duration 30s --horizon 5m --format json");
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  const json p = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(p.is_object()) << r.out << r.err;
  EXPECT_NEAR(p["rate_per_s"].get<double>(), 12, 1e-9);  // 1200 served / 100 s uptime
  EXPECT_EQ(p["partner_latency"], "lognormal:p50=1.8s,p99=6s");
}

TEST(CliPlan, APrometheusScrapeWithoutTheNeededSeriesExitsTwoWithOneLine) {
  const std::string path = write_temp("no-uptime.txt", kScrape);
  const auto r = run_command(kBin + " plan --prometheus " + path);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_EQ(r.err, "lockbench: --prometheus: " + path +
                       ": no process_uptime_seconds series (the rate is the requests served over the process's "
                       "uptime)\n");
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(CliPlan, AHistogramWithoutBucketsExitsTwoNamingWhatIsMissing) {
  const std::string path = write_temp("no-buckets.txt", "http_client_requests_seconds_count{uri=\"/link\"} 10\n"
                                                        "http_client_requests_seconds_sum{uri=\"/link\"} 15\n");
  const auto r = run_command(kBin + " plan --prometheus " + path);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("http_client_requests_seconds has no _bucket series"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(CliPlan, APoolAboveTheDatabasesConnectionsIsNotFeasible) {
  // held-tx needs about 75 connections at the incident's 20/s; row-lease needs 1.
  const auto r = run_command(kBin + " plan --from " + kIncident +
                             " --strategy held-tx:wait,row-lease --max-connections 50 --seeds 1 --duration 30s --horizon 10m --format json");
  ASSERT_EQ(r.status, 0) << r.err;
  const json plan = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(plan.is_discarded()) << r.out;
  const json& held = strategy_of(plan, "held-tx:wait");
  ASSERT_TRUE(held.is_object()) << r.out;
  EXPECT_FALSE(held["simulator"]["feasible"].get<bool>());
  EXPECT_GT(held["simulator"]["chosen"]["maximum-pool-size"].get<int>(), 50);
  EXPECT_NE(held["simulator"]["chosen"]["broken"].dump().find("above the database's 50 (--max-connections)"),
            std::string::npos) << held["simulator"]["chosen"]["broken"];
  EXPECT_TRUE(strategy_of(plan, "row-lease")["simulator"]["feasible"].get<bool>());
  EXPECT_EQ(plan["recommended"], "row-lease");
  // Without the bound, the same held-tx point is feasible: the bound alone made it fail.
  const auto free = run_command(kBin + " plan --from " + kIncident +
                                " --strategy held-tx:wait --seeds 1 --duration 30s --horizon 10m --format json");
  ASSERT_EQ(free.status, 0) << free.err;
  EXPECT_TRUE(strategy_of(json::parse(free.out), "held-tx:wait")["simulator"]["feasible"].get<bool>());
}

TEST(CliPlan, ReportDrawsThePlansSafeEnvelopeFromPlanJsonBesideTheResults) {
  const std::string dir = temp_dir() + "/with-plan";
  std::filesystem::remove_all(dir);
  ASSERT_EQ(run_command(kBin + " run --quiet --strategy row-lease,held-tx --duration 20s --out " + dir + "/results").status, 0);
  const auto p = run_command(kBin + " plan --from " + kIncident +
                             " --strategy row-lease,held-tx:wait --seeds 1 --duration 30s --horizon 5m --format json");
  ASSERT_EQ(p.status, 0) << p.err;
  const json plan = json::parse(p.out);
  ASSERT_EQ(plan["envelope"]["curves"].size(), 2u) << plan["envelope"];
  EXPECT_DOUBLE_EQ(plan["envelope"]["planned"]["rate_per_s"].get<double>(), 20);
  {
    std::ofstream f(dir + "/results/plan.json");
    f << p.out;
  }
  const auto r = run_command(kBin + " report " + dir + "/results --out " + dir + "/report");
  ASSERT_EQ(r.status, 0) << r.err;  // plan.json beside the results is not read as a result
  const std::string html = slurp(dir + "/report/report.html");
  EXPECT_NE(html.find("Safe envelope (lockbench plan)"), std::string::npos);
  const std::string gp = slurp(dir + "/report/charts/gnuplot/envelope.gp");
  EXPECT_NE(gp.find("title 'row-lease'"), std::string::npos) << gp;
  EXPECT_NE(gp.find("title 'held-tx:wait'"), std::string::npos) << gp;
  EXPECT_NE(gp.find("'planned' at 4,20"), std::string::npos) << gp;  // the incident's partner p99 4 s, 20/s
  // Without a plan the report has no envelope; a file that is not a plan is refused in one line.
  std::filesystem::remove(dir + "/results/plan.json");
  ASSERT_EQ(run_command(kBin + " report " + dir + "/results --out " + dir + "/report2").status, 0);
  EXPECT_EQ(slurp(dir + "/report2/report.html").find("Safe envelope"), std::string::npos);
  {
    std::ofstream f(dir + "/other.json");
    f << "{\"schema\": \"lockbench.result/1\"}";
  }
  const auto bad = run_command(kBin + " report " + dir + "/results --out " + dir + "/report3 --plan " + dir + "/other.json");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--plan:"), std::string::npos) << bad.err;
  EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;
}

TEST(CliPlan, BadTargetsAndFormatsExitTwoWithOneLine) {
  for (const std::string& args : {std::string("--fail-on 'p99>>2s'"), std::string("--format yaml"),
                                  std::string("--seeds 0"), std::string("--users 5"), std::string("--margin 25x"),
                                  std::string("--margin 500%"), std::string("--margin -5%"),
                                  std::string("--world real --partner http://127.0.0.1:1"),
                                  std::string("--max-connections 0"), std::string("--max-connections many")}) {
    const auto r = run_command(kBin + " plan " + args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.out << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << "\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << args << "\n" << r.out;
  }
}

}  // namespace cli_plan_test
