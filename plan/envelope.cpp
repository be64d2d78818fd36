// The safe envelope's curves and its gnuplot drawing (plan/envelope.hpp).
#include "plan/envelope.hpp"

#include <cmath>
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

std::string write_envelope_svg(const std::vector<EnvelopeCurve>& curves, double planned_p99_ms,
                               double planned_rate_per_s, const std::string& svg_path, const std::string& gnuplot) {
  namespace fs = std::filesystem;
  if (curves.empty()) return "no strategy is feasible on paper: the envelope is empty";
  const fs::path svg = fs::absolute(svg_path);
  const fs::path dir = svg.parent_path();
  const std::string stem = svg.stem().string();
  std::error_code ec;
  fs::create_directories(dir, ec);
  const report::detail::EnvelopeDrawing d = report::detail::envelope_drawing(
      envelope_json(curves, planned_p99_ms, planned_rate_per_s), stem + ".svg", stem + ".dat");
  {
    std::ofstream dat(dir / (stem + ".dat"));
    dat << d.data;
    std::ofstream gp(dir / (stem + ".gp"));
    gp << d.script;
    if (!dat || !gp) return "cannot write beside " + svg.string();
  }
  const std::string err = report::detail::run_gnuplot(gnuplot, stem + ".gp", dir);
  if (!err.empty()) return err;
  return fs::exists(svg) ? "" : "gnuplot wrote no " + svg.string();
}

}  // namespace lockbench::plan
