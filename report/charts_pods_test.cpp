// The pods chart (pods ready over time): the lanes drawn from pods.events
// (core/kubelet.hpp's names) and the chart report.html gets from them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "report/charts.hpp"
#include "report/fields.hpp"
#include "report/report.hpp"
#include "report/test_fixtures.hpp"

namespace lockbench::report {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using detail::PodState;

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct PodsDir {
  explicit PodsDir(const std::string& name)
      : path(fs::temp_directory_path() / ("lockbench_pods_chart_test_" + name + "_" + std::to_string(getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~PodsDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  fs::path path;
};

json run_with_events() { return fixtures::with_pod_events(fixtures::base_result("held-tx:wait", 5, 1500)); }

TEST(PodLanes, EachPodIsALaneOfSpansAndEachKillAndRestartAMarkAtItsTime) {
  const auto lanes = detail::pod_lanes(run_with_events());
  ASSERT_TRUE(lanes);
  EXPECT_EQ(lanes->pods, 2);
  EXPECT_DOUBLE_EQ(lanes->end_s, 60);
  EXPECT_FALSE(lanes->capped);
  ASSERT_EQ(lanes->spans.size(), 4u);
  // Pod 1 ready throughout.
  EXPECT_EQ(lanes->spans[0].pod, 1);
  EXPECT_EQ(lanes->spans[0].state, PodState::ready);
  EXPECT_DOUBLE_EQ(lanes->spans[0].until_s, 60);
  // Pod 2: ready, out from its pull until readiness returns it (killed and
  // started again at once: no time down; starting counts as out), ready again.
  const auto span = [&](std::size_t i) {
    const auto& s = lanes->spans[i];
    return std::make_tuple(s.pod, s.from_s, s.until_s, s.state);
  };
  EXPECT_EQ(span(1), std::make_tuple(2, 0.0, 10.0, PodState::ready));
  EXPECT_EQ(span(2), std::make_tuple(2, 10.0, 45.0, PodState::out));
  EXPECT_EQ(span(3), std::make_tuple(2, 45.0, 60.0, PodState::ready));
  ASSERT_EQ(lanes->marks.size(), 2u);
  EXPECT_TRUE(lanes->marks[0].killed);
  EXPECT_EQ(lanes->marks[0].pod, 2);
  EXPECT_DOUBLE_EQ(lanes->marks[0].t_s, 30);
  EXPECT_FALSE(lanes->marks[1].killed);
  EXPECT_DOUBLE_EQ(lanes->marks[1].t_s, 30);
}

TEST(PodLanes, AKubeletBackOffIsTimeDownAndWithoutReadinessAStartedPodIsReadyAtOnce) {
  json r = run_with_events();
  r["pods"]["readiness"]["probe"] = "off";
  r["pods"]["events"] = {{20.0, 1, "killed"}, {30.0, 1, "started"}, {35.0, 1, "listening"}};
  const auto lanes = detail::pod_lanes(r);
  ASSERT_TRUE(lanes);
  ASSERT_EQ(lanes->spans.size(), 4u);
  EXPECT_EQ(lanes->spans[0].state, PodState::ready);
  EXPECT_DOUBLE_EQ(lanes->spans[0].until_s, 20);
  EXPECT_EQ(lanes->spans[1].state, PodState::down);
  EXPECT_DOUBLE_EQ(lanes->spans[1].from_s, 20);
  EXPECT_DOUBLE_EQ(lanes->spans[1].until_s, 30);
  EXPECT_EQ(lanes->spans[2].state, PodState::ready);
  EXPECT_EQ(lanes->spans[3].pod, 2);  // pod 2 untouched
}

TEST(PodLanes, ARunWithoutProbesHasNoLanesAndACutListEndsTheLanesAtItsLastEvent) {
  EXPECT_FALSE(detail::pod_lanes(fixtures::base_result("row-lease", 5, 10)));
  json r = run_with_events();
  json many = json::array();
  for (int i = 0; i < 400; ++i) many.push_back({0.1 * i, 1 + i % 2, i % 4 < 2 ? "pulled" : "returned"});
  r["pods"]["events"] = many;
  const auto lanes = detail::pod_lanes(r);
  ASSERT_TRUE(lanes);
  EXPECT_TRUE(lanes->capped);
  EXPECT_NEAR(lanes->end_s, 39.9, 1e-9);
}

TEST(PodLanes, ATimeScaledRealRunsMeasuredEventsAreDrawnInConfiguredSeconds) {
  json r = run_with_events();
  r["world"] = "real";
  r["time_scale"] = 0.1;
  r["duration_s"] = 6.0;
  for (auto& e : r["pods"]["events"]) e[0] = e[0].get<double>() * 0.1;
  const auto lanes = detail::pod_lanes(detail::configured_view(r));
  ASSERT_TRUE(lanes);
  EXPECT_NEAR(lanes->end_s, 60, 1e-9);
  ASSERT_EQ(lanes->marks.size(), 2u);
  EXPECT_NEAR(lanes->marks[0].t_s, 30, 1e-9);
}

TEST(PodsChart, OnlyRunsWithPodEventsGetTheChartOneLanePerPodAndTheKillAtItsTime) {
  ReportOptions options;
  options.charts = false;  // the script and its data are written all the same
  const PodsDir without("without");
  write_report(fixtures::sweep(), without.path, options);
  EXPECT_FALSE(fs::exists(without.path / "charts" / "gnuplot" / "pods_ready.gp"));
  EXPECT_EQ(read_text(without.path / "report.html").find("chart-pods_ready"), std::string::npos);

  const PodsDir with("with");
  auto results = fixtures::sweep();
  results.push_back(run_with_events());  // run 14
  write_report(results, with.path, options);
  const std::string gp = read_text(with.path / "charts" / "gnuplot" / "pods_ready.gp");
  EXPECT_NE(gp.find("set ytics ('pod 1' 1, 'pod 2' 2)"), std::string::npos) << gp;
  EXPECT_NE(gp.find("set title 'run 14: held-tx:wait (sim, 2 pods), liveness with db'"), std::string::npos) << gp;
  EXPECT_NE(gp.find("set xrange [0:60]"), std::string::npos) << gp;
  std::size_t panels = 0;
  for (std::size_t at = 0; (at = gp.find("\nplot ", at)) != std::string::npos; ++at) ++panels;
  EXPECT_EQ(panels, 1u);
  EXPECT_NE(gp.find("title 'killed'"), std::string::npos);
  EXPECT_NE(gp.find("title 'restarted'"), std::string::npos);
  EXPECT_EQ(gp.find("down (back-off)"), std::string::npos) << "no time down: no red in the key";
  // The marks' data: the kill at 30 s on lane 2, then its restart.
  EXPECT_EQ(read_text(with.path / "charts" / "gnuplot" / "pods_0_marks.dat"), "30 2 0\n30 2 1\n");
  EXPECT_EQ(read_text(with.path / "charts" / "gnuplot" / "pods_0.dat"), "0 60 1 0\n0 10 2 0\n10 45 2 1\n45 60 2 0\n");
  // In both documents, right after the pool chart.
  const std::string md = read_text(with.path / "report.md");
  ASSERT_NE(md.find("### Pods ready over time"), std::string::npos);
  EXPECT_LT(md.find("### Pool connections over time"), md.find("### Pods ready over time"));
  EXPECT_LT(md.find("### Pods ready over time"), md.find("### Where a request's time goes"));
  EXPECT_NE(read_text(with.path / "report.html").find("<figure id=\"chart-pods_ready\">"), std::string::npos);
}

// The x of the SVG point whose text follows `label` (gnuplot writes each tick
// label as <g transform="translate(x,y)" ...><text>label</text>).
double label_x(const std::string& svg, const std::string& label) {
  const auto at = svg.find("<text>" + label + "</text>");
  if (at == std::string::npos) return -1;
  const auto tr = svg.rfind("translate(", at);
  return std::stod(svg.substr(tr + 10));
}

TEST(PodsChart, GnuplotDrawsTwoLanesAndTheKillMarkAtHalfTheTimeAxis) {
  if (std::system("gnuplot --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "gnuplot is not installed";
  const PodsDir dir("svg");
  write_report({run_with_events()}, dir.path);
  const std::string svg = read_text(dir.path / "charts" / "pods_ready.svg");
  ASSERT_FALSE(svg.empty());
  EXPECT_NE(svg.find("<text>pod 1</text>"), std::string::npos);
  EXPECT_NE(svg.find("<text>pod 2</text>"), std::string::npos);
  EXPECT_EQ(svg.find("<text>pod 3</text>"), std::string::npos);
  // The kill marks (gnuplot's point type 2, a cross: #gpPt1) of the plot titled
  // "killed": the key's sample at the right, and one mark in the plot at t = 30 s,
  // halfway between the axis' 0 and its 60.
  const double x0 = label_x(svg, " 0"), x60 = label_x(svg, " 60");
  ASSERT_GT(x60, x0);
  const auto from = svg.find("<text>killed</text>"), until = svg.find("<text>", from + 1);
  ASSERT_NE(from, std::string::npos);
  std::vector<double> in_plot;
  for (auto at = svg.find("#gpPt1'", from); at < until; at = svg.find("#gpPt1'", at + 1)) {
    const double x = std::stod(svg.substr(svg.find("translate(", at) + 10));
    if (x <= x60 + 1) in_plot.push_back(x);
  }
  ASSERT_EQ(in_plot.size(), 1u);
  EXPECT_NEAR(in_plot[0], (x0 + x60) / 2, 1.0) << "0 at " << x0 << ", 60 at " << x60;
  EXPECT_NE(read_text(dir.path / "report.html").find("<figure id=\"chart-pods_ready\">\n<h3>Pods ready over time</h3>\n<svg"),
            std::string::npos);
}

}  // namespace
}  // namespace lockbench::report
