// Internal: the report's charts, drawn by gnuplot (a subprocess, `set terminal
// svg`) from data files written next to them, so a reader can re-run them.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "report/report.hpp"

namespace lockbench::report::detail {

struct Chart {
  std::string file;     // "throughput.svg", relative to the charts directory
  std::string title;    // heading in the report
  std::string caption;  // how to read it
  std::string svg;      // the drawing; empty when missing
  std::string missing;  // why there is no drawing (absent data, gnuplot failure)
};

// Draws every chart into charts_dir (created when needed; gnuplot scripts and
// data go to charts_dir/gnuplot). Never throws for absent data or a failing
// gnuplot: the chart's `missing` says what happened.
std::vector<Chart> make_charts(const std::vector<nlohmann::json>& results, const std::filesystem::path& charts_dir,
                               const ReportOptions& options);

// The safe envelope of `lockbench plan` (its JSON's "envelope": "planned"
// {partner_p99_ms, rate_per_s} and "curves" [{strategy, points [[p99 ms,
// rate]...]}]) as gnuplot draws it: the data file's text (one block per
// strategy) and the script that reads `data_file` and writes `svg_file`, both
// relative to where gnuplot runs. plan --svg and report.html draw it alike.
struct EnvelopeDrawing {
  std::string data;
  std::string script;
};
EnvelopeDrawing envelope_drawing(const nlohmann::json& envelope, const std::string& svg_file,
                                 const std::string& data_file);

// Runs `gnuplot script` in directory `cwd` with a time limit; returns "" on
// success, else why it failed.
std::string run_gnuplot(const std::string& gnuplot, const std::filesystem::path& script,
                        const std::filesystem::path& cwd);

// gnuplot's SVG made smaller without changing the drawing: groups that hold
// nothing are dropped, rgb(r, g, b) colours become #rrggbb, lines lose their
// indentation, and coordinates in path data and transforms are rounded to a
// tenth of a pixel (charts are 960 px wide). Text is never touched.
std::string tidy_svg(const std::string& svg);

// One run's pods over time, from its pods.events (core/kubelet.hpp) in
// configured seconds: each pod's lane as spans of one state, and the marks
// where liveness killed a pod and where kubelet restarted it. A pod is ready
// until an event says otherwise (the pods at a run's start were running
// before it): "pulled" -> out, "returned" -> ready, "killed" -> down,
// "started" -> out while readiness has to pass first, else ready;
// "listening" changes no state.
enum class PodState : int { ready = 0, out = 1, down = 2 };
struct PodSpan {
  int pod = 0;  // 1-based
  double from_s = 0, until_s = 0;
  PodState state = PodState::ready;
};
struct PodMark {
  int pod = 0;  // 1-based
  double t_s = 0;
  bool killed = false;  // else restarted (its container started again)
};
struct PodLanes {
  int pods = 0;
  double end_s = 0;     // where the lanes end: the run's end, or the last event when the list was cut
  bool capped = false;  // the result listed only its first events: nothing is known after the last
  std::vector<PodSpan> spans;  // in time order per pod; spans of zero length are left out
  std::vector<PodMark> marks;
};
// nullopt when the result has no pods.events (probes not acting).
std::optional<PodLanes> pod_lanes(const nlohmann::json& result);

// A series of (t, values...) samples thinned to at most `points_max` rows:
// consecutive rows are merged in equal runs, each keeping its first t and the
// largest of each value, so peaks survive (as the result's timeline does).
std::vector<std::vector<double>> thin_by_max(const std::vector<std::vector<double>>& rows, std::size_t points_max);

}  // namespace lockbench::report::detail
