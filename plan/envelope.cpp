// The safe envelope's curves and its gnuplot drawing (plan/envelope.hpp).
#include "plan/envelope.hpp"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <sstream>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "report/charts.hpp"

namespace lockbench::plan {

std::vector<EnvelopeCurve> envelope(const std::vector<PaperVerdict>& paper, const Load& load,
                                    const PaperTargets& targets, int points) {
  std::vector<EnvelopeCurve> out;
  const double p99 = quantile_ms(load.partner, 0.99);
  for (const auto& v : paper) {
    if (!v.feasible) continue;
    EnvelopeCurve c{v.strategy, {}};
    for (int i = 0; i < points; ++i) {
      const double f = 0.1 * std::pow(40.0, static_cast<double>(i) / (points - 1));  // 0.1 .. 4
      Load scaled = load;
      scaled.partner = load.partner.scaled(f);
      c.points.emplace_back(p99 * f, headroom_per_s(v, scaled, targets));
    }
    out.push_back(std::move(c));
  }
  return out;
}

nlohmann::json envelope_json(const std::vector<EnvelopeCurve>& curves, double planned_p99_ms, double planned_rate_per_s) {
  nlohmann::json c = nlohmann::json::array();
  for (const auto& curve : curves) {
    nlohmann::json pts = nlohmann::json::array();
    for (const auto& [x, y] : curve.points) pts.push_back({x, y});
    c.push_back({{"strategy", curve.strategy}, {"points", pts}});
  }
  return {{"planned", {{"partner_p99_ms", planned_p99_ms}, {"rate_per_s", planned_rate_per_s}}}, {"curves", c}};
}

namespace {

// Writes `text` to `path` through a temporary file and a rename; "" or why not.
std::string write_whole(const std::filesystem::path& path, const std::string& text) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (fs::exists(st) && !fs::is_regular_file(st)) return path.string() + " exists and is not a regular file";
  const fs::path tmp = path.string() + ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << text;
    f.flush();
    if (!f) {
      fs::remove(tmp, ec);
      return "cannot write " + path.string() + (errno != 0 ? std::string(": ") + std::strerror(errno) : "");
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return "cannot write " + path.string() + ": " + ec.message();
  }
  return "";
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream t;
  t << f.rdbuf();
  return t.str();
}

}  // namespace

std::string write_envelope_svg(const std::vector<EnvelopeCurve>& curves, double planned_p99_ms,
                               double planned_rate_per_s, const std::string& svg_path, const std::string& gnuplot) {
  namespace fs = std::filesystem;
  if (curves.empty()) return "no strategy is feasible on paper: the envelope is empty";
  const fs::path svg = fs::absolute(svg_path);
  const fs::path dir = svg.parent_path();
  const std::string stem = svg.stem().string();
  std::error_code ec;
  fs::create_directories(dir, ec);
  // gnuplot draws in a directory of its own; the three files are then written beside the SVG, each whole.
  const fs::path work = fs::temp_directory_path(ec) / ("lockbench-envelope-" + std::to_string(::getpid()));
  fs::create_directories(work, ec);
  const report::detail::EnvelopeDrawing d = report::detail::envelope_drawing(
      envelope_json(curves, planned_p99_ms, planned_rate_per_s), stem + ".svg", stem + ".dat");
  std::string err;
  {
    std::ofstream dat(work / (stem + ".dat"));
    dat << d.data;
    std::ofstream gp(work / (stem + ".gp"));
    gp << d.script;
    if (!dat || !gp) err = "cannot write in " + work.string();
  }
  if (err.empty()) err = report::detail::run_gnuplot(gnuplot, stem + ".gp", work);
  if (err.empty() && !fs::exists(work / (stem + ".svg"))) err = "gnuplot wrote no " + svg.string();
  if (err.empty()) err = write_whole(svg, slurp(work / (stem + ".svg")));
  if (err.empty()) err = write_whole(dir / (stem + ".dat"), d.data);
  if (err.empty()) err = write_whole(dir / (stem + ".gp"), d.script);
  fs::remove_all(work, ec);
  return err;
}

}  // namespace lockbench::plan
