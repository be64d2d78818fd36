// Internal: the report's charts, drawn by gnuplot (a subprocess, `set terminal
// svg`) from data files written next to them, so a reader can re-run them.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
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

// Runs `gnuplot script` in directory `cwd` with a time limit; returns "" on
// success, else why it failed.
std::string run_gnuplot(const std::string& gnuplot, const std::filesystem::path& script,
                        const std::filesystem::path& cwd);

}  // namespace lockbench::report::detail
