// report.html as a reviewer sees it: headless Chromium renders the page to a
// PNG. The page must render (not blank), carry every chart's SVG, and log no
// console error. Skipped when Chromium or gnuplot is not installed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "report/report.hpp"
#include "report/test_fixtures.hpp"

namespace lockbench::report {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool have(const char* program) {
  return std::system((std::string("command -v ") + program + " > /dev/null 2>&1").c_str()) == 0;
}

// Screenshots `page` at 1200x3000; returns Chromium's stderr. The time limit
// keeps a wedged browser from hanging the suite.
std::string screenshot(const fs::path& page, const fs::path& png, const fs::path& work) {
  const fs::path profile = work / "profile";
  const fs::path err = work / (png.stem().string() + ".stderr");
  fs::create_directories(profile);
  const std::string cmd =
      "cd '" + work.string() + "' && timeout 90 chromium --headless --no-sandbox --disable-gpu "
      "--disable-dev-shm-usage --no-first-run --disable-background-networking --disable-component-update "
      "--disable-sync --user-data-dir='" + profile.string() + "' --enable-logging=stderr --v=0 "
      "--screenshot='" + png.string() + "' --window-size=1200,3000 'file://" + page.string() + "' > /dev/null 2> '" +
      err.string() + "'";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << slurp(err);
  return slurp(err);
}

TEST(ReportHtml, RendersInHeadlessChromiumWithEveryChartAndNoConsoleError) {
  if (!have("chromium")) GTEST_SKIP() << "chromium is not installed";
  if (!have("gnuplot")) GTEST_SKIP() << "gnuplot is not installed";
  const fs::path dir = fs::temp_directory_path() / ("lockbench_browser_test_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto results = fixtures::sweep();
  // A run with probes acting: its pods' lanes (pods ready over time) join the charts.
  results.push_back(fixtures::with_pod_events(fixtures::held_tx(20)));
  write_report(results, dir / "report");
  const fs::path page = dir / "report" / "report.html";

  const std::string html = slurp(page);
  for (const char* chart : {"throughput", "p99", "pool_timeline", "pods_ready", "time_split", "violations", "race"}) {
    const auto figure = html.find(std::string("<figure id=\"chart-") + chart + "\">");
    ASSERT_NE(figure, std::string::npos) << chart;
    EXPECT_LT(html.find("<svg", figure), html.find("</figure>", figure)) << chart << " has no inlined SVG";
  }
  // The pods chart: a lane per pod, the kill marked, the pool's active line behind.
  const auto pods = html.find("<figure id=\"chart-pods_ready\">");
  const std::string pods_figure = html.substr(pods, html.find("</figure>", pods) - pods);
  for (const char* text : {"<text>pod 1</text>", "<text>pod 2</text>", "<text>killed</text>",
                           "<text>restarted</text>", "<text>pool active (right axis)</text>"})
    EXPECT_NE(pods_figure.find(text), std::string::npos) << text;
  // The sequence diagrams are drawn, not shown as Mermaid source.
  for (const char* id : {"sequence-race", "sequence-pool"}) {
    const auto figure = html.find(std::string("<figure id=\"") + id + "\"");
    ASSERT_NE(figure, std::string::npos) << id;
    EXPECT_LT(html.find("<svg", figure), html.find("</figure>", figure)) << id << " has no SVG";
  }
  EXPECT_EQ(html.find("sequenceDiagram"), std::string::npos);

  // A blank page of the same size is the floor a rendered report must clear.
  std::ofstream(dir / "blank.html") << "<!DOCTYPE html><html><body></body></html>\n";
  screenshot(dir / "blank.html", dir / "blank.png", dir);
  const std::string log = screenshot(page, dir / "report.png", dir);

  ASSERT_TRUE(fs::exists(dir / "report.png"));
  ASSERT_TRUE(fs::exists(dir / "blank.png"));
  const auto blank = fs::file_size(dir / "blank.png"), report = fs::file_size(dir / "report.png");
  EXPECT_GT(report, 10 * blank) << "report.png " << report << " bytes vs blank " << blank;
  EXPECT_EQ(log.find("CONSOLE"), std::string::npos) << log;
  EXPECT_EQ(log.find("Uncaught"), std::string::npos) << log;
  // LOCKBENCH_KEEP_SCREENSHOT=1 keeps the page and its PNG to look at.
  if (std::getenv("LOCKBENCH_KEEP_SCREENSHOT") != nullptr) {
    std::cout << "screenshot: " << (dir / "report.png").string() << "\n";
  } else {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
}

}  // namespace
}  // namespace lockbench::report

namespace lockbench::report {
namespace {

// Optional: with LOCKBENCH_MERMAID_JS=/path/to/mermaid.min.js (from the npm
// package `mermaid`), Mermaid itself parses every diagram of report.md in
// headless Chromium, as GitHub would.
TEST(ReportMarkdownMermaid, EveryDiagramParsesWithMermaidItself) {
  const char* mermaid_js = std::getenv("LOCKBENCH_MERMAID_JS");
  if (mermaid_js == nullptr || !fs::exists(mermaid_js)) GTEST_SKIP() << "set LOCKBENCH_MERMAID_JS to mermaid.min.js";
  if (!have("chromium")) GTEST_SKIP() << "chromium is not installed";
  const fs::path dir = fs::temp_directory_path() / ("lockbench_mermaid_test_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string md = render_markdown(fixtures::sweep());
  std::string page = "<html><body><script src=\"file://" + std::string(mermaid_js) + "\"></script>\n";
  int blocks = 0;
  const std::string open = "```mermaid\n";
  for (std::size_t at = 0; (at = md.find(open, at)) != std::string::npos; ++blocks) {
    const auto end = md.find("```", at + open.size());
    std::string text = md.substr(at + open.size(), end - at - open.size()), escaped;
    for (char c : text) escaped += c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '&' ? "&amp;" : std::string(1, c);
    page += "<pre class=\"mermaid\">" + escaped + "</pre>\n";
    at = end + 3;
  }
  page += R"(<script>
mermaid.initialize({startOnLoad: false});
(async () => {
  for (const e of document.querySelectorAll('.mermaid')) {
    try { await mermaid.parse(e.textContent); console.log('MERMAID_OK'); }
    catch (err) { console.log('MERMAID_FAIL ' + err.message); }
  }
})();
</script></body></html>
)";
  std::ofstream(dir / "mermaid.html") << page;
  const std::string cmd = "timeout 90 chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage "
                          "--no-first-run --disable-background-networking --disable-component-update --disable-sync "
                          "--user-data-dir='" + (dir / "profile").string() + "' --enable-logging=stderr --v=0 "
                          "--virtual-time-budget=10000 --allow-file-access-from-files --dump-dom 'file://" +
                          (dir / "mermaid.html").string() + "' > /dev/null 2> '" + (dir / "log").string() + "'";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  const std::string log = slurp(dir / "log");
  ASSERT_EQ(blocks, 2);
  std::size_t ok = 0;
  for (std::size_t at = 0; (at = log.find("MERMAID_OK", at)) != std::string::npos; ++at) ++ok;
  EXPECT_EQ(ok, 2u) << log;
  EXPECT_EQ(log.find("MERMAID_FAIL"), std::string::npos) << log;
  std::error_code ec;
  fs::remove_all(dir, ec);
}

}  // namespace
}  // namespace lockbench::report
