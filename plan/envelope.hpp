// The safe envelope: offered rate against the partner's p99, one region per
// strategy, below the rate at which that strategy's recommended settings
// still hold on paper (plan/paper's headroom) when the partner's whole
// latency distribution is scaled to that p99. Strategies the paper finds
// infeasible have no region. The planned point (the partner's p99, the rate)
// is marked. Drawn by gnuplot as SVG, as the report's charts are; the data and
// the script are written beside the SVG (NAME.dat, NAME.gp) so it can be
// re-drawn.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plan/paper.hpp"

namespace lockbench::plan {

struct EnvelopeCurve {
  std::string strategy;
  std::vector<std::pair<double, double>> points;  // (partner p99 ms, highest rate per s)
};

// `points` partner p99 values from a tenth to four times the planned one (log-spaced).
std::vector<EnvelopeCurve> envelope(const std::vector<PaperVerdict>& paper, const Load& load,
                                    const PaperTargets& targets, int points = 24);

// The curves and the planned point as plan's JSON carries them ("envelope"),
// which report.html reads (report/charts' envelope_drawing).
nlohmann::json envelope_json(const std::vector<EnvelopeCurve>& curves, double planned_p99_ms, double planned_rate_per_s);

// Writes the SVG (and its .dat and .gp beside it, drawn as report.html draws
// it); "" on success, else why not.
std::string write_envelope_svg(const std::vector<EnvelopeCurve>& curves, double planned_p99_ms,
                               double planned_rate_per_s, const std::string& svg_path,
                               const std::string& gnuplot = "gnuplot");

}  // namespace lockbench::plan
