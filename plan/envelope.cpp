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

std::string write_envelope_svg(const std::vector<EnvelopeCurve>& curves, double planned_p99_ms,
                               double planned_rate_per_s, const std::string& svg_path, const std::string& gnuplot) {
  namespace fs = std::filesystem;
  if (curves.empty()) return "no strategy is feasible on paper: the envelope is empty";
  const fs::path svg = fs::absolute(svg_path);
  const fs::path dir = svg.parent_path();
  const std::string stem = svg.stem().string();
  std::error_code ec;
  fs::create_directories(dir, ec);
  {
    std::ofstream dat(dir / (stem + ".dat"));
    dat << "# partner_p99_s highest_rate_per_s, one block per strategy\n";
    for (const auto& c : curves) {
      dat << "# " << c.strategy << "\n";
      for (const auto& [x, y] : c.points) dat << x / 1000 << " " << y << "\n";
      dat << "\n\n";
    }
    std::ofstream gp(dir / (stem + ".gp"));
    gp << "set terminal svg size 800,480 dynamic enhanced font 'sans,12'\n"
       << "set output '" << stem << ".svg'\n"
       << "set title 'Safe envelope: where each strategy meets the targets (paper)'\n"
       << "set xlabel 'partner p99 (s)'\nset ylabel 'offered rate (requests/s)'\n"
       << "set logscale x\nset grid\nset key outside right top\nset style fill transparent solid 0.25 noborder\n"
       << "set label 1 'planned' at " << planned_p99_ms / 1000 << "," << planned_rate_per_s << " point pt 7 ps 1.2 offset 1,0\n"
       << "plot ";
    for (std::size_t i = 0; i < curves.size(); ++i) {
      gp << (i ? ", \\\n     " : "") << "'" << stem << ".dat' index " << i << " using 1:(0):2 with filledcurves lc " << i + 1
         << " title '" << curves[i].strategy << "'";
      gp << ", '' index " << i << " using 1:2 with lines lc " << i + 1 << " lw 2 notitle";
    }
    gp << "\n";
    if (!dat || !gp) return "cannot write beside " + svg.string();
  }
  const std::string err = report::detail::run_gnuplot(gnuplot, stem + ".gp", dir);
  if (!err.empty()) return err;
  return fs::exists(svg) ? "" : "gnuplot wrote no " + svg.string();
}

}  // namespace lockbench::plan
