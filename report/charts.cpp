// The charts of report.html (six; pods ready over time when a run had probes acting; the safe envelope with a
// plan), drawn from configured views (fields.hpp). Each writes its data and a gnuplot script,
// runs gnuplot and reads the SVG back; absent data becomes a sentence instead.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "core/kubelet.hpp"
#include "report/charts.hpp"
#include "report/fields.hpp"
#include "report/repetitions.hpp"

namespace lockbench::report::detail {

namespace {

namespace fs = std::filesystem;

// One color per strategy, the same in every chart.
const char* color(std::size_t i) {
  static const char* palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                  "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  return palette[i % (sizeof palette / sizeof palette[0])];
}

// gnuplot single-quoted string: only the quote itself needs doubling.
std::string q(std::string_view s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

// gnuplot's `name` becomes the SVG's <title> and must be an identifier.
std::string svg_name(const std::string& title) {
  std::string out;
  for (char c : title) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out;
}

// The chart's title is the report's heading above it, not drawn twice; the
// SVG keeps it as its <title> for readers of the bare file.
std::string preamble(const fs::path& svg, const std::string& title, const std::string& xlabel,
                     const std::string& ylabel, int height_px = 500) {
  // noenhanced: strategy and violation names contain '_' that would turn into subscripts.
  return fmt::format(
      "set terminal svg size 960,{} dynamic noenhanced font 'Helvetica,14' background rgb 'white' name {}\n"
      "set output {}\n"
      "set xlabel {}\nset ylabel {}\n"
      "set grid lc rgb '#dddddd' lt 1\nset border 3 lc rgb '#555555'\nset tics nomirror\n"
      "set key outside right top vertical Left reverse noautotitle\n",
      height_px, q(svg_name(title)), q(svg.string()), q(xlabel), q(ylabel));
}

void write_file(const fs::path& p, const std::string& text) {
  std::ofstream out(p);
  out << text;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class ChartWriter {
 public:
  ChartWriter(fs::path dir, const ReportOptions& options) : dir_(std::move(dir)), options_(options) {}

  // Data file `name` in the gnuplot folder; returns its path relative to the
  // charts directory, where gnuplot runs.
  fs::path data(const std::string& name, const std::string& text) {
    write_file(src() / name, text);
    return fs::path("gnuplot") / name;
  }

  // Runs the script for chart `c` (c.file decides the names) and fills c.svg or c.missing.
  void draw(Chart& c, const std::string& script) {
    // The script is written even when charts are off: `gnuplot gnuplot/x.gp` draws it later.
    const fs::path gp = fs::path("gnuplot") / fs::path(c.file).replace_extension(".gp");
    src();
    write_file(dir_ / gp, script);
    if (!options_.charts) {
      c.missing = "Charts were turned off for this report.";
      return;
    }
    const std::string err = run_gnuplot(options_.gnuplot, gp, dir_);
    if (!err.empty()) {
      c.missing = "This chart could not be drawn: " + err;
      return;
    }
    c.svg = read_file(dir_ / c.file);
    if (c.svg.empty()) {
      c.missing = "gnuplot wrote an empty chart.";
      return;
    }
    c.svg = tidy_svg(c.svg);  // the same drawing in about two thirds of the bytes
    write_file(dir_ / c.file, c.svg);
  }

  fs::path svg(const Chart& c) const { return c.file; }

 private:
  fs::path src() {
    const fs::path p = dir_ / "gnuplot";
    fs::create_directories(p);
    return p;
  }
  fs::path dir_;
  const ReportOptions& options_;
};

// The world whose runs the load curves draw: the one with the most runs.
// Every figure is in configured units (the views), so other worlds' points
// join the same axes as markers of their own.
std::string chart_world(const std::vector<StrategyGroup>& groups) {
  std::map<std::string, int> runs;
  for (const auto& g : groups)
    for (const json* r : g.results) runs[str(*r, "world")]++;
  std::string best;
  int most = -1;
  for (const auto& [world, n] : runs)
    if (n > most) best = world, most = n;
  return best;
}

// A strategy's runs as points on an offered-load axis: that world only, no
// fault-injection runs (a crash is not a load point), one run per offered
// load (the one with most requests), in increasing load.
std::vector<const json*> load_points(const StrategyGroup& g, const std::string& world) {
  std::vector<const json*> out;
  for (const json* r : g.results) {
    if (str(*r, "world") != world || has_faults(*r) || !num(*r, "offered_per_s")) continue;
    const double offered = *num(*r, "offered_per_s");
    auto same = std::find_if(out.begin(), out.end(), [&](const json* o) { return *num(*o, "offered_per_s") == offered; });
    if (same == out.end()) out.push_back(r);
    else if (num_or(*r, "requests.total", 0) > num_or(**same, "requests.total", 0)) *same = r;
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const json* a, const json* b) { return *num(*a, "offered_per_s") < *num(*b, "offered_per_s"); });
  return out;
}

// Distinct offered loads over the runs without faults: one means the load
// charts are bars, not curves of one point each.
std::size_t distinct_loads(const std::vector<json>& views) {
  std::vector<double> seen;
  for (const auto& r : views) {
    if (has_faults(r)) continue;
    const double o = num_or(r, "offered_per_s", 0);
    if (std::none_of(seen.begin(), seen.end(), [&](double x) { return std::fabs(x - o) <= 1e-9 * std::max(1.0, o); }))
      seen.push_back(o);
  }
  return seen.size();
}

std::string bar_label(const Headline& h, bool many_worlds) {
  return many_worlds ? h.strategy + " (" + world_label(*h.run) + ")" : h.strategy;
}

bool many_worlds(const std::vector<Headline>& rows) {
  for (const auto& h : rows)
    if (world_label(*h.run) != world_label(*rows.front().run)) return true;
  return false;
}

// One small panel per strategy (multiplot): the strategy's own series in its
// color on top, every other strategy's in light grey behind it, so no series
// can hide another.
struct Panel {
  std::string title;
  std::string plots;  // gnuplot plot arguments, without "plot"
  std::string pre;    // commands for this panel only (ranges)
};

std::string multiplot(const std::vector<Panel>& panels, const std::string& setup, int& height_px) {
  const std::size_t cols = panels.size() <= 2 ? panels.size() : panels.size() == 4 ? 2 : 3;
  const std::size_t rows = (panels.size() + cols - 1) / cols;
  height_px = static_cast<int>(rows) * 330 + 20;
  // Margins and spacing in screen fractions, scaled by the rows so each panel
  // keeps room for its title above and its x label below.
  const double r = static_cast<double>(rows);
  std::string out = fmt::format("set multiplot layout {},{} margins 0.07,0.93,{:.3f},{:.3f} spacing 0.12,{:.3f}\n",
                                rows, cols, 0.15 / r, 1 - 0.09 / r, 0.24 / r);
  out += setup;
  for (const auto& p : panels) out += fmt::format("{}set title {} offset 0,-0.5\nplot {}\n", p.pre, q(p.title), p.plots);
  return out + "unset multiplot\n";
}

std::string panel_preamble(const fs::path& svg, const std::string& title, int height_px) {
  return fmt::format(
      "set terminal svg size 960,{} dynamic noenhanced font 'Helvetica,12' background rgb 'white' name {}\n"
      "set output {}\n"
      "set grid lc rgb '#dddddd' lt 1\nset border 3 lc rgb '#555555'\nset tics nomirror\n"
      "set key top left Left reverse font ',10' samplen 2 noautotitle\n",
      height_px, q(svg_name(title)), q(svg.string()));
}

std::string xtics(const std::vector<std::string>& bars);

// Bars per headline row, value from `value`; `marker` (optional) draws a short
// black line on each bar (the ceiling); `level` a dashed line across (offered).
Chart headline_bars(Chart c, const std::vector<Headline>& rows_in, ChartWriter& w, const std::string& prefix,
                    const std::string& ylabel, const std::function<std::optional<double>(const json&)>& value,
                    const std::function<std::optional<double>(const json&)>& marker, std::optional<double> level,
                    const std::string& marker_name, const std::string& level_name,
                    const std::function<std::optional<stats::Summary>(const json&)>& interval = nullptr) {
  // A strategy's worlds side by side, one fill color per world.
  std::vector<std::string> strategies, worlds;
  for (const auto& h : rows_in) {
    if (std::find(strategies.begin(), strategies.end(), h.strategy) == strategies.end()) strategies.push_back(h.strategy);
    if (std::find(worlds.begin(), worlds.end(), world_label(*h.run)) == worlds.end()) worlds.push_back(world_label(*h.run));
  }
  std::vector<const Headline*> rows;
  for (const auto& s : strategies)
    for (const auto& h : rows_in)
      if (h.strategy == s) rows.push_back(&h);
  const bool many = worlds.size() > 1;
  static const char* world_colors[] = {"#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2"};
  std::vector<std::string> labels, bars(worlds.size());
  std::string marks, values, errors;
  double top = level.value_or(0), lo = 0, hi = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const json& r = *rows[i]->run;
    labels.push_back(bar_label(*rows[i], many));
    auto v = value(r);
    // A run with repetitions: the bar is their mean, with its 95 % interval as an error bar.
    if (const auto iv = interval ? interval(r) : std::nullopt) {
      v = iv->mean;
      errors += fmt::format("{} {} {} {}\n", i, iv->mean, iv->ci95_low, iv->ci95_high);
      top = std::max(top, iv->ci95_high);
    }
    if (!v) continue;
    const auto wi = static_cast<std::size_t>(std::find(worlds.begin(), worlds.end(), world_label(r)) - worlds.begin());
    bars[wi] += fmt::format("{} {}\n", i, *v);
    values += fmt::format("{} {} \"{}\"\n", i, *v, fmt(v, 2));
    top = std::max(top, *v);
    lo = lo == 0 ? *v : std::min(lo, *v), hi = std::max(hi, *v);
    if (marker)
      if (auto m = marker(r); m && *m <= 3 * std::max(top, *v)) {
        marks += fmt::format("{} {}\n", i, *m);
        top = std::max(top, *m);
      }
  }
  if (values.empty()) {
    c.missing = "No headline run states this figure.";
    return c;
  }
  std::string plots;
  for (std::size_t k = 0; k < worlds.size(); ++k) {
    if (bars[k].empty()) continue;
    plots += fmt::format("{} using 1:2:(0.6) with boxes fs solid 0.85 border lc rgb '#333333' fc rgb '{}' title {}, ",
                         q(w.data(fmt::format("{}_bars_{}.dat", prefix, k), bars[k]).string()),
                         world_colors[k % (sizeof world_colors / sizeof world_colors[0])], q(worlds[k]));
  }
  plots += fmt::format("{} using 1:2:3 with labels offset 0,0.7 font ',10' notitle",
                       q(w.data(prefix + "_values.dat", values).string()));
  if (!marks.empty())
    plots += fmt::format(", {} using ($1-0.3):2:(0.6):(0) with vectors nohead lw 3 lc rgb 'black' title {}",
                         q(w.data(prefix + "_marks.dat", marks).string()), q(marker_name));
  if (!errors.empty())
    plots += fmt::format(", {} using 1:2:3:4 with yerrorbars pt 0 lw 2 lc rgb '#222222' title '95 % interval'",
                         q(w.data(prefix + "_errors.dat", errors).string()));
  if (level) plots += fmt::format(", {} with lines dt 2 lw 1.5 lc rgb '#b00020' title {}", *level, q(level_name));
  std::string script = preamble(w.svg(c), c.title, "", ylabel, 560);
  script += xtics(labels);
  script += "set lmargin 18\nset bmargin 9\n";
  const bool log = lo > 0 && hi / lo > 100;
  if (log) script += fmt::format("set logscale y\nset yrange [{}:{}]\n", lo / 2, top * 3);
  else script += fmt::format("set yrange [0:{}]\n", std::max(1e-9, top * 1.18));
  script += fmt::format("set xrange [-0.6:{}]\n", rows.size() - 0.4);
  script += "plot " + plots + "\n";
  w.draw(c, script);
  return c;
}

// The same strategy's runs in the other worlds (configured units, so they sit
// on the same axes): one plot clause per group, open black squares named
// after the world; "" when there are none.
std::vector<std::string> other_world_points(const std::vector<StrategyGroup>& groups, const std::string& world,
                                            ChartWriter& w, const std::string& prefix, const std::string& field) {
  std::vector<std::string> out(groups.size());
  for (std::size_t i = 0; i < groups.size(); ++i) {
    std::map<std::string, std::string> by_world;
    for (const json* r : groups[i].results) {
      if (str(*r, "world") == world || has_faults(*r)) continue;
      const auto offered = num(*r, "offered_per_s"), y = num(*r, field);
      if (offered && y) by_world[world_label(*r)] += fmt::format("{} {}\n", *offered, *y);
    }
    int k = 0;
    for (const auto& [label, data] : by_world) {
      const auto file = w.data(fmt::format("{}_{}_w{}.dat", prefix, i, k), data);
      out[i] += fmt::format("{} using 1:2 with points pt {} ps 1.4 lw 2 lc rgb 'black' title {}, ", q(file.string()),
                            k == 0 ? 4 : 6, q(label));
      ++k;
    }
  }
  return out;
}

Chart throughput_chart(const std::vector<json>& views, const std::vector<StrategyGroup>& groups, ChartWriter& w) {
  Chart c{"throughput.svg", "Successful throughput against offered load", "", "", ""};
  const auto rows = headline_runs(views);
  if (distinct_loads(views) <= 1) {
    c.caption = "Every run offered the same load, so one bar per strategy and world: ok requests per second at "
                "the headline load (configured units). The red dashed line is the offered load; a black bar "
                "across a column is that run's Little's-law ceiling (pool size / mean connection hold), drawn "
                "for strategies that hold a connection during the partner call.";
    std::optional<double> offered;
    if (!rows.empty()) offered = num(*rows.front().run, "offered_per_s");
    return headline_bars(
        c, rows, w, "throughput", "ok throughput (requests/s)",
        [](const json& r) { return num(r, "throughput_ok_per_s"); },
        [](const json& r) {
          return holds_connection(r) ? num(r, "prediction.littles_law_ceiling_per_s") : std::nullopt;
        },
        offered, "Little's-law ceiling", "offered",
        [reps = repetition_groups(views)](const json& r) {
          return summary_over_repetitions(reps, &r, "ok_per_s");
        });
  }
  const std::string world = chart_world(groups);
  c.caption = "One panel per strategy, runs of the " + world +
              " world (configured units): its ok requests per second (thick line), its Little's-law ceiling "
              "(dashed, for strategies that hold a connection during the call), offered = ok (grey dotted: what a "
              "strategy without losses would reach), its runs in other worlds (open black squares, at their "
              "configured load) and every other strategy in light grey behind it.";
  double top = 0;
  std::vector<std::string> files(groups.size());
  std::vector<bool> ceiling_file(groups.size(), false);
  for (const auto& g : groups)
    for (const json* r : g.results)
      if (!has_faults(*r)) top = std::max({top, num_or(*r, "offered_per_s", 0), num_or(*r, "throughput_ok_per_s", 0)});
  const auto reps = repetition_groups(views);
  std::vector<std::string> error_files(groups.size());
  for (std::size_t i = 0; i < groups.size(); ++i) {
    std::string data, errors;
    for (const json* r : load_points(groups[i], world)) {
      const auto ceiling = num(*r, "prediction.littles_law_ceiling_per_s");
      const bool shown = ceiling && holds_connection(*r) && *ceiling <= 2 * top;
      ceiling_file[i] = ceiling_file[i] || shown;
      const auto iv = summary_over_repetitions(reps, r, "ok_per_s");  // repetitions: their mean and interval
      if (iv) errors += fmt::format("{} {} {} {}\n", num_or(*r, "offered_per_s", 0), iv->mean, iv->ci95_low, iv->ci95_high);
      data += fmt::format("{} {} {}\n", num_or(*r, "offered_per_s", 0), iv ? iv->mean : num_or(*r, "throughput_ok_per_s", 0),
                          shown ? fmt::format("{}", *ceiling) : "NaN");
    }
    if (!data.empty()) files[i] = w.data(fmt::format("throughput_{}.dat", i), data).string();
    if (!errors.empty()) error_files[i] = w.data(fmt::format("throughput_{}_errors.dat", i), errors).string();
  }
  const auto others = other_world_points(groups, world, w, "throughput", "throughput_ok_per_s");
  std::vector<Panel> panels;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    if (files[i].empty()) continue;
    std::string plots;
    for (std::size_t j = 0; j < groups.size(); ++j)
      if (j != i && !files[j].empty())
        plots += fmt::format("{} using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, ", q(files[j]));
    plots += "x with lines dt 3 lc rgb '#777777' title 'offered = ok', ";
    plots += others[i];
    if (ceiling_file[i])
      plots += fmt::format("{} using 1:3 with linespoints dt 2 lw 1.5 pt 2 lc rgb '{}' title 'ceiling', ", q(files[i]),
                           color(i));
    plots += fmt::format("{} using 1:2 with linespoints lw 3 pt 7 ps 0.7 lc rgb '{}' title 'ok/s'", q(files[i]),
                         color(i));
    if (!error_files[i].empty())
      plots += fmt::format(", {} using 1:2:3:4 with yerrorbars pt 0 lw 1.5 lc rgb '#222222' title '95 % interval'",
                           q(error_files[i]));
    panels.push_back({groups[i].strategy, plots, ""});
  }
  if (panels.empty()) {
    c.missing = "No result states both an offered load and a throughput.";
    return c;
  }
  int height = 0;
  const std::string setup = fmt::format("set xrange [0:{}]\nset yrange [0:{}]\nset xlabel 'offered /s'\n"
                                        "set ylabel 'ok /s'\n",
                                        top * 1.05, top * 1.2);
  const std::string body = multiplot(panels, setup, height);
  w.draw(c, panel_preamble(w.svg(c), c.title, height) + body);
  return c;
}

Chart p99_chart(const std::vector<json>& views, const std::vector<StrategyGroup>& groups, ChartWriter& w) {
  Chart c{"p99.svg", "p99 latency against offered load", "", "", ""};
  const auto rows = headline_runs(views);
  if (distinct_loads(views) <= 1) {
    c.caption = "Every run offered the same load, so one bar per strategy and world: p99 latency of every "
                "request from its intended start (open-loop schedule, so queueing is counted), in configured "
                "milliseconds. A logarithmic axis is used when the bars span more than two decades.";
    return headline_bars(
        c, rows, w, "p99", "p99 latency (ms)", [](const json& r) { return num(r, "latency_ms.p99"); },
        nullptr, std::nullopt, "", "",
        [reps = repetition_groups(views)](const json& r) { return summary_over_repetitions(reps, &r, "p99_ms"); });
  }
  const std::string world = chart_world(groups);
  c.caption = "One panel per strategy, runs of the " + world +
              " world: p99 latency of every request from its intended start (so queueing is counted), its runs "
              "in other worlds as open black squares (configured units), other strategies in light grey behind. "
              "A logarithmic axis is used when the values span more than two decades.";
  double lo = 0, hi = 0;
  std::vector<std::string> files(groups.size()), error_files(groups.size());
  const auto reps = repetition_groups(views);
  for (std::size_t i = 0; i < groups.size(); ++i) {
    std::string data, errors;
    for (const json* r : load_points(groups[i], world)) {
      auto p99 = num(*r, "latency_ms.p99");
      if (!p99) continue;
      if (const auto iv = summary_over_repetitions(reps, r, "p99_ms")) {  // repetitions: their mean and interval
        p99 = iv->mean;
        errors += fmt::format("{} {} {} {}\n", num_or(*r, "offered_per_s", 0), iv->mean, iv->ci95_low, iv->ci95_high);
        hi = std::max(hi, iv->ci95_high);
      }
      data += fmt::format("{} {}\n", num_or(*r, "offered_per_s", 0), *p99);
      if (*p99 > 0) lo = lo == 0 ? *p99 : std::min(lo, *p99);
      hi = std::max(hi, *p99);
    }
    if (!data.empty()) files[i] = w.data(fmt::format("p99_{}.dat", i), data).string();
    if (!errors.empty()) error_files[i] = w.data(fmt::format("p99_{}_errors.dat", i), errors).string();
  }
  const auto others = other_world_points(groups, world, w, "p99", "latency_ms.p99");
  std::vector<Panel> panels;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    if (files[i].empty()) continue;
    std::string plots;
    for (std::size_t j = 0; j < groups.size(); ++j)
      if (j != i && !files[j].empty())
        plots += fmt::format("{} using 1:2 with lines lw 1 lc rgb '#d0d0d0' notitle, ", q(files[j]));
    plots += others[i];
    plots += fmt::format("{} using 1:2 with linespoints lw 3 pt 7 ps 0.7 lc rgb '{}' title 'p99'", q(files[i]),
                         color(i));
    if (!error_files[i].empty())
      plots += fmt::format(", {} using 1:2:3:4 with yerrorbars pt 0 lw 1.5 lc rgb '#222222' title '95 % interval'",
                           q(error_files[i]));
    panels.push_back({groups[i].strategy, plots, ""});
  }
  if (panels.empty()) {
    c.missing = "No result states a p99 latency with an offered load.";
    return c;
  }
  for (const auto& g : groups)
    for (const json* r : g.results)
      if (auto p99 = num(*r, "latency_ms.p99"); p99 && *p99 > 0 && !has_faults(*r))
        lo = std::min(lo, *p99), hi = std::max(hi, *p99);
  std::string setup = "set xrange [0:*]\nset xlabel 'offered /s' offset 0,0.6\nset ylabel 'p99 ms'\n";
  if (lo > 0 && hi / lo > 100) setup += fmt::format("set logscale y\nset yrange [{}:{}]\n", lo / 2, hi * 2);
  else setup += fmt::format("set yrange [0:{}]\n", std::max(1.0, hi * 1.15));
  int height = 0;
  const std::string body = multiplot(panels, setup, height);
  w.draw(c, panel_preamble(w.svg(c), c.title, height) + body);
  return c;
}

// A panel is about 900 px wide: 40 points are one every 22 px, and each keeps
// the busiest sample of the ones it stands for.
constexpr std::size_t kTimelinePanelPointsMax = 40;

Chart timeline_chart(const std::vector<json>& views, ChartWriter& w) {
  Chart c{"pool_timeline.svg", "Pool connections over time",
          "One panel per strategy and world at the headline load: active (borrowed) connections, thick, and "
          "requests waiting for a connection, dashed, against the pool size (black dotted line). Each point is "
          "the busiest sample of its interval, so peaks survive downsampling; time in configured seconds.",
          "", ""};
  const auto rows = headline_runs(views);
  const bool worlds = many_worlds(rows);
  std::vector<Panel> panels;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const json& r = *rows[i].run;
    const json* tl = find(r, "timeline");
    if (tl == nullptr || !tl->is_array() || tl->empty()) continue;
    std::vector<std::vector<double>> samples;
    samples.reserve(tl->size());
    for (const auto& s : *tl) samples.push_back({num_or(s, "t_s", 0), num_or(s, "active", 0), num_or(s, "pending", 0)});
    std::string data;
    double y_max = 0, pending_max = 0;
    for (const auto& s : thin_by_max(samples, kTimelinePanelPointsMax)) {
      data += fmt::format("{} {} {}\n", s[0], s[1], s[2]);
      y_max = std::max(y_max, s[1]);
      pending_max = std::max(pending_max, s[2]);
    }
    const double size = num_or(r, "pool.size", 0);
    const auto file = w.data(fmt::format("timeline_{}.dat", i), data).string();
    // Active against the pool size on the left axis; the queue, often ten
    // times the pool, on an axis of its own at the right so it cannot flatten them.
    std::string plots = fmt::format("{} using 1:2 axes x1y1 with steps lw 2.5 lc rgb '#4e79a7' title 'active', ", q(file));
    plots += fmt::format("{} with lines axes x1y1 dt 3 lw 1.5 lc rgb 'black' title 'pool size {}', ", size, fmt(size, 0));
    plots += fmt::format("{} using 1:3 axes x1y2 with steps dt 2 lw 1.5 lc rgb '#e15759' title 'pending (right axis)'",
                         q(file));
    const std::string pre = fmt::format("set xrange [0:*]\nset yrange [0:{}]\nset y2range [0:{}]\n",
                                        std::max(1.0, std::max(y_max > size ? size : y_max, size) * 1.35),
                                        std::max(1.0, pending_max * 1.35));
    panels.push_back({bar_label(rows[i], worlds), plots, pre});
  }
  if (panels.empty()) {
    c.missing = "No result holds a timeline (the per-interval samples of active and pending connections).";
    return c;
  }
  int height = 0;
  // No grid: a panel's steps and the pool-size line read without one, and its
  // lines were a third of the chart's bytes (the incidents' report has dozens of panels).
  const std::string setup = "unset grid\nset xlabel 'time (s)' offset 0,0.6\nset ylabel 'connections'\nset ytics nomirror\n"
                            "set y2tics\nset y2label 'pending' offset -1,0\n";
  const std::string body = multiplot(panels, setup, height);
  w.draw(c, panel_preamble(w.svg(c), c.title, height) + body);
  return c;
}

// Pods ready over time: one panel per run whose pods' lives changed (pods.events).
// A panel is about 900 px wide: at most this many, so the chart stays a few tens of KB.
constexpr std::size_t kPodPanelsMax = 9;

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& x : items) out += (out.empty() ? "" : ", ") + x;
  return out;
}

// A pods panel's title: the run's number as in the per-run detail, and what
// tells the cascade's runs apart.
std::string pods_panel_title(const json& r, std::size_t i) {
  std::string name = fmt::format("run {}: {} ({})", i + 1, str(r, "strategy", "?"), world_label(r));
  const std::string liveness = str(r, "pods.liveness.probe", "off");
  name += liveness == "off" ? ", no liveness probe"
          : liveness.find("db=off") != std::string::npos ? ", liveness without db" : ", liveness with db";
  if (r.contains("recovery")) name += ", partner fault window";
  if (const json* cb = find(r, "settings.circuit-breaker"); cb != nullptr && cb->is_string() && *cb != "off")
    name += ", circuit breaker";
  return name;
}

// One run's panel: its lanes by state, its kill and restart marks, and its
// active pool behind them on the right axis (`timeline` set when drawn).
Panel pods_panel(const json& r, const std::string& title, const PodLanes& lanes, std::size_t k, ChartWriter& w,
                 bool& timeline) {
  std::string spans, marks;
  bool state_seen[3] = {false, false, false}, kill_seen = false, restart_seen = false;
  for (const auto& s : lanes.spans) {
    spans += fmt::format("{} {} {} {}\n", s.from_s, s.until_s, s.pod, static_cast<int>(s.state));
    state_seen[static_cast<int>(s.state)] = true;
  }
  for (const auto& m : lanes.marks) {
    marks += fmt::format("{} {} {}\n", m.t_s, m.pod, m.killed ? 0 : 1);
    (m.killed ? kill_seen : restart_seen) = true;
  }
  std::string plots;
  // The run's pool behind the lanes, on the right axis: what the probes were borrowing from.
  double active_max = 0;
  if (const json* tl = find(r, "timeline"); tl != nullptr && tl->is_array() && !tl->empty()) {
    std::vector<std::vector<double>> samples;
    for (const auto& x : *tl) samples.push_back({num_or(x, "t_s", 0), num_or(x, "active", 0)});
    std::string data;
    for (const auto& x : thin_by_max(samples, kTimelinePanelPointsMax)) {
      data += fmt::format("{} {}\n", x[0], x[1]);
      active_max = std::max(active_max, x[1]);
    }
    plots += fmt::format("{} using 1:2 axes x1y2 with steps lw 1.5 lc rgb '#b8c2cc' title {}, ",
                         q(w.data(fmt::format("pods_{}_pool.dat", k), data).string()), q("pool active (right axis)"));
    timeline = true;
  }
  const std::string file = w.data(fmt::format("pods_{}.dat", k), spans).string();
  static const char* state_names[] = {"ready", "pulled or starting", "down (back-off)"};
  static const char* state_colors[] = {"#59a14f", "#f28e2b", "#e15759"};
  for (int st = 0; st < 3; ++st)
    if (state_seen[st])
      plots += fmt::format("{} using 1:($4=={}?$3:1/0):($2-$1):(0) with vectors nohead lw 9 lc rgb '{}' title {}, ",
                           q(file), st, state_colors[st], q(state_names[st]));
  if (!marks.empty()) {
    const std::string mfile = w.data(fmt::format("pods_{}_marks.dat", k), marks).string();
    if (kill_seen)
      plots += fmt::format("{} using 1:($3==0?$2+0.38:1/0) with points pt 2 ps 1.2 lw 2 lc rgb '#b00020' "
                           "title 'killed', ",
                           q(mfile));
    if (restart_seen)
      plots += fmt::format("{} using 1:($3==1?$2-0.38:1/0) with points pt 9 ps 1 lc rgb 'black' title 'restarted', ",
                           q(mfile));
  }
  std::string ytics = "set ytics (";
  for (int p = 1; p <= lanes.pods; ++p) ytics += fmt::format("{}'pod {}' {}", p > 1 ? ", " : "", p, p);
  ytics += ")\n";
  // The right axis marks 0 and the pool's size only: the line reads against them.
  const double size = num_or(r, "pool.size", 0);
  const double top = std::max(1.0, std::max(size, active_max));
  const std::string pre =
      ytics + fmt::format("set xrange [0:{}]\nset yrange [0.3:{}]\nset y2range [0:{}]\n", lanes.end_s,
                          lanes.pods + 1.3, top * 1.1) +
      (plots.find("axes x1y2") != std::string::npos
           ? fmt::format("set y2tics ({}, {})\nset y2label 'pool active' offset -2,0\n", 0, top)
           : std::string("unset y2tics\nunset y2label\n"));
  return {title, plots.substr(0, plots.size() - 2), pre};
}

std::string pods_caption(bool timeline, const std::vector<std::string>& calm, const std::vector<std::string>& left_out,
                         bool capped) {
  std::string caption =
      "One panel per run whose pods changed (probes acting: --readiness, --liveness; the run's number as in the "
      "per-run detail), one lane per pod: green while it is in the load balancer, orange while readiness keeps it "
      "out (pulled, or starting again after a restart), red from a liveness kill until kubelet starts it again "
      "(the back-off). A red cross above a lane marks each kill, a black triangle below it each restart (its "
      "container started again). Time in configured seconds, the axis of the pool chart.";
  if (timeline) caption += " The grey steps behind the lanes are the run's active pool connections (right axis).";
  if (!calm.empty())
    caption += " Runs whose pods stayed ready throughout, not drawn: " + joined(calm) + ".";
  if (!left_out.empty())
    caption += fmt::format(" Only the first {} runs with events are drawn; left out: {}.", kPodPanelsMax,
                           joined(left_out));
  if (capped)
    caption += fmt::format(" A result lists only its first {} events: its lanes end at the last one.",
                           kPodEventsListed);
  return caption;
}

Chart pods_chart(const std::vector<json>& views, ChartWriter& w) {
  Chart c{"pods_ready.svg", "Pods ready over time", "", "", ""};
  std::vector<Panel> panels;
  std::vector<std::string> calm, left_out;
  bool capped = false, timeline = false;
  for (std::size_t i = 0; i < views.size(); ++i) {
    const json& r = views[i];
    const auto lanes = pod_lanes(r);
    if (!lanes) continue;
    const std::string name = pods_panel_title(r, i);
    const auto ready = [](const PodSpan& s) { return s.state == PodState::ready; };
    if (lanes->marks.empty() && std::all_of(lanes->spans.begin(), lanes->spans.end(), ready)) {
      calm.push_back(fmt::format("{} ({})", i + 1, str(r, "strategy", "?")));
      continue;
    }
    if (panels.size() == kPodPanelsMax) {
      left_out.push_back(std::to_string(i + 1));
      continue;
    }
    capped = capped || lanes->capped;
    panels.push_back(pods_panel(r, name, *lanes, panels.size(), w, timeline));
  }
  if (panels.empty()) {
    c.missing = "In every run with probes acting, every pod stayed ready throughout (no event in pods.events).";
    return c;
  }
  c.caption = pods_caption(timeline, calm, left_out, capped);
  // One panel per row, the whole width for the time axis (as the pool chart's),
  // the key at the right; lanes need no grid, the pool line has the right axis.
  // Margins in pixels: a title above each panel, its time axis below.
  const int height = static_cast<int>(panels.size()) * 215 + 20;
  const double px = 1.0 / height;
  std::string body = fmt::format("set multiplot layout {},1 margins 0.07,0.74,{:.4f},{:.4f} spacing 0,{:.4f}\n",
                                 panels.size(), 45 * px, 1 - 30 * px, 70 * px);
  body += "unset grid\nset xlabel 'time (s)' offset 0,0.8\n"
          "set key outside right top vertical Left reverse font ',10' samplen 1.5\n";
  for (const auto& p : panels)
    body += fmt::format("{}set title {} offset 0,-0.5\nplot {}\n", p.pre, q(p.title), p.plots);
  body += "unset multiplot\n";
  w.draw(c, panel_preamble(w.svg(c), c.title, height) + body);
  return c;
}

// Stacked bars drawn as boxes so each segment keeps its own legend entry.
// segments[k] = name, values[i][k] = height of segment k on bar i.
std::string stacked_bars(ChartWriter& w, const std::string& prefix, const std::vector<std::string>& bars,
                         const std::vector<std::string>& segments, const std::vector<std::vector<double>>& values,
                         const std::vector<std::string>& seg_colors, double& top) {
  std::string plots;
  std::vector<double> base(bars.size(), 0);
  for (std::size_t k = 0; k < segments.size(); ++k) {
    std::string rows;
    for (std::size_t i = 0; i < bars.size(); ++i) {
      const double v = values[i][k];
      rows += fmt::format("{} {} {}\n", i, base[i], base[i] + v);
      base[i] += v;
    }
    const auto file = w.data(fmt::format("{}_{}.dat", prefix, k), rows);
    plots += fmt::format(
        "{} using 1:(($2+$3)/2):(0.3):(($3-$2)/2) with boxxyerror fs solid 0.9 border lc rgb '#444444' "
        "fc rgb '{}' title {}, ",
        q(file.string()), seg_colors[k % seg_colors.size()], q(segments[k]));
  }
  for (double b : base) top = std::max(top, b);
  return plots;
}

std::string xtics(const std::vector<std::string>& bars) {
  std::string t = "set xtics (";
  std::size_t longest = 0;
  for (std::size_t i = 0; i < bars.size(); ++i) {
    t += fmt::format("{}{} {}", i ? ", " : "", q(bars[i]), i);
    longest = std::max(longest, bars[i].size());
  }
  t += ")\n";
  // Side by side, long strategy names run into each other: tilt them.
  if (bars.size() * longest > 60) t += "set xtics rotate by 25 right\n";
  return t;
}

Chart time_split_chart(const std::vector<json>& views, ChartWriter& w) {
  Chart c{"time_split.svg", "Where a request's time goes",
          "Mean time per request at the headline load of each strategy and world (configured units), stacked: "
          "worker queue, pool wait, lock wait, partner calls, database work. The hatched bar beside it is the "
          "time a connection was held while idle (it overlaps the partner time for strategies that hold a "
          "connection): the waste Little's law turns into a ceiling.",
          "", ""};
  const std::vector<std::string> keys = {"queue", "pool_wait", "lock_wait", "partner", "db"};
  const std::vector<std::string> names = {"worker queue", "pool wait", "lock wait", "partner", "database"};
  const auto rows = headline_runs(views);
  const bool worlds = many_worlds(rows);
  std::vector<std::string> bars;
  std::vector<std::vector<double>> values;
  std::string idle_rows;
  for (const auto& h : rows) {
    const json* split = find(*h.run, "time_split_ms");
    if (split == nullptr || !split->is_object()) continue;
    std::vector<double> v;
    for (const auto& k : keys) v.push_back(num_or(*split, k, 0));
    idle_rows += fmt::format("{} {}\n", bars.size(), num_or(*split, "held_idle", 0));
    bars.push_back(bar_label(h, worlds));
    values.push_back(std::move(v));
  }
  if (bars.empty()) {
    c.missing = "No result holds time_split_ms (the mean time per request in each step).";
    return c;
  }
  double top = 0;
  // Waiting in warm colours, working in cool ones.
  std::string plots =
      stacked_bars(w, "split", bars, names, values, {"#bab0ac", "#e15759", "#f28e2b", "#4e79a7", "#59a14f"}, top);
  const auto idle = w.data("split_idle.dat", idle_rows);
  std::istringstream in(idle_rows);
  for (double x, y; in >> x >> y;) top = std::max(top, y);
  plots += fmt::format("{} using ($1+0.38):($2/2):(0.07):($2/2) with boxxyerror fs pattern 4 border lc rgb 'black' "
                       "fc rgb 'black' title 'connection held while idle'",
                       q(idle.string()));
  std::string script = preamble(w.svg(c), c.title, "", "mean time per request (ms)");
  script += xtics(bars);
  script += fmt::format("set xrange [-0.6:{}]\nset yrange [0:{}]\n", bars.size() - 0.4, std::max(1.0, top * 1.15));
  script += "plot " + plots + "\n";
  w.draw(c, script);
  return c;
}

Chart violations_chart(const std::vector<json>& views, ChartWriter& w) {
  Chart c{"violations.svg", "Partner violations per strategy",
          "Violations the partner (the oracle) counted at the headline load of each strategy and world, stacked "
          "by kind: the numbers of the verdict table. Counts that are not violations (ambiguous_commit, "
          "retry_overlap, overlap_abandoned, stale_token_rejected) are left out. Zero is the only acceptable height.",
          "", ""};
  const auto rows = headline_runs(views);
  const bool worlds = many_worlds(rows);
  std::vector<std::string> kinds;
  for (const auto& h : rows)
    for (const auto& [k, _] : violations_of(*h.run).kinds)
      if (std::find(kinds.begin(), kinds.end(), k) == kinds.end()) kinds.push_back(k);
  std::sort(kinds.begin(), kinds.end());
  std::vector<std::string> bars;
  std::vector<std::vector<double>> values;
  for (const auto& h : rows) {
    const Violations v = violations_of(*h.run);
    std::vector<double> row;
    for (const auto& k : kinds) {
      double n = 0;
      for (const auto& [kind, x] : v.kinds)
        if (kind == k) n = x;
      row.push_back(n);
    }
    bars.push_back(bar_label(h, worlds));
    values.push_back(std::move(row));
  }
  double top = 0;
  std::string plots;
  if (!kinds.empty())
    plots = stacked_bars(w, "violations", bars, kinds, values,
                         {"#e15759", "#f28e2b", "#edc948", "#b07aa1", "#76b7b2", "#ff9da7", "#9c755f", "#4e79a7"},
                         top);
  std::string script = preamble(w.svg(c), c.title, "", "violations (count)");
  script += xtics(bars);
  script += fmt::format("set xrange [-0.6:{}]\nset yrange [0:{}]\n", bars.size() - 0.4, std::max(1.0, top * 1.15));
  if (kinds.empty()) {
    script += "set label 1 'no violation in any run' at graph 0.5, graph 0.5 center font ',16'\n";
    plots = "NaN title '', ";
  }
  script += "plot " + plots.substr(0, plots.size() - 2) + "\n";
  w.draw(c, script);
  return c;
}

// The captured race on a time axis: one row per request, one box per step.
// Where the orange and blue boxes of the two rows overlap, both requests were
// inside the critical section at once.
Chart race_chart(const std::vector<json>& results, ChartWriter& w) {
  Chart c{"race.svg", "The captured race on a time axis",
          "Each box is one step of a request, from its start to its end (milliseconds since the run's start). "
          "The unlink and link calls of the two requests overlap: nothing excluded them.",
          "", ""};
  const json* source = nullptr;
  for (const auto& r : results) {
    const json* ids = find(r, "trace.race.request_ids");
    if (ids != nullptr && ids->is_array() && ids->size() >= 2) {
      source = &r;
      break;
    }
  }
  if (source == nullptr) {
    c.missing = "No result holds a captured race (trace.race).";
    return c;
  }
  const json& ids = *find(*source, "trace.race.request_ids");
  const std::vector<std::string> rows = {str(ids[0], ""), str(ids[1], "")};
  struct Category {
    std::string name, color;
    bool (*match)(const std::string&);
  };
  const std::vector<Category> categories = {
      {"pool wait / database", "#59a14f",
       [](const std::string& s) { return s.rfind("pool.", 0) == 0 || s.rfind("db.", 0) == 0; }},
      {"lock", "#e15759", [](const std::string& s) { return s.rfind("lock.", 0) == 0; }},
      {"partner unlink", "#f28e2b", [](const std::string& s) { return s == "partner.unlink"; }},
      {"partner link", "#4e79a7", [](const std::string& s) { return s == "partner.link"; }},
      {"partner get", "#76b7b2", [](const std::string& s) { return s == "partner.get"; }},
  };
  std::vector<std::string> data(categories.size());
  // Per request: first partner call start, last partner call end.
  double span[2][2] = {{1e300, -1e300}, {1e300, -1e300}};
  double t_min = 1e300, t_max = 0;
  const json* events = find(*source, "trace.events");
  for (const auto& e : events != nullptr && events->is_array() ? *events : json::array()) {
    const std::string id = str(e, "request_id"), step = str(e, "step");
    const auto row = std::find(rows.begin(), rows.end(), id);
    if (row == rows.end()) continue;
    const double start = num_or(e, "start_ms", 0), end = num_or(e, "end_ms", start);
    t_min = std::min(t_min, start);
    t_max = std::max(t_max, end);
    if (step.rfind("partner.", 0) == 0) {
      auto& sp = span[row == rows.begin() ? 0 : 1];
      sp[0] = std::min(sp[0], start);
      sp[1] = std::max(sp[1], end);
    }
    for (std::size_t k = 0; k < categories.size(); ++k)
      if (categories[k].match(step) && end > start)
        data[k] += fmt::format("{} {} {}\n", start, end, row == rows.begin() ? 1 : 0);
  }
  std::string plots;
  for (std::size_t k = 0; k < categories.size(); ++k) {
    if (data[k].empty()) continue;
    const auto file = w.data(fmt::format("race_{}.dat", k), data[k]);
    plots += fmt::format(
        "{} using (($1+$2)/2):3:(($2-$1)/2):(0.3) with boxxyerror fs solid 0.9 border lc rgb '#333333' "
        "fc rgb '{}' title {}, ",
        q(file.string()), categories[k].color, q(categories[k].name));
  }
  if (plots.empty()) {
    c.missing = "The captured race has no timed steps in trace.events.";
    return c;
  }
  std::string script = preamble(w.svg(c), c.title, "time since the run's start (ms)", "", 340);
  const double pad = std::max(1.0, (t_max - t_min) * 0.03);
  script += fmt::format("set xrange [{}:{}]\nset yrange [-0.7:2.1]\nset ytics ({} 1, {} 0)\nset grid noytics\n",
                        t_min - pad, t_max + pad, q("request " + rows[0]), q("request " + rows[1]));
  // Shade the window in which both requests were calling the partner.
  const double from = std::max(span[0][0], span[1][0]), to = std::min(span[0][1], span[1][1]);
  if (from < to) {
    script += fmt::format("set object 1 rect from {},-0.6 to {},1.6 behind fc rgb '#fde0e0' fs solid 1.0 noborder\n",
                          from, to);
    script += fmt::format("set label 2 'both requests inside the critical section' at {},1.85 center tc rgb '#b00020'\n",
                          (from + to) / 2);
  }
  script += "plot " + plots.substr(0, plots.size() - 2) + "\n";
  w.draw(c, script);
  return c;
}

}  // namespace

std::optional<PodLanes> pod_lanes(const json& result) {
  const json* events = find(result, "pods.events");
  if (events == nullptr || !events->is_array()) return std::nullopt;
  PodLanes out;
  if (const json* by_pod = find(result, "pods.requests_by_pod"); by_pod != nullptr && by_pod->is_array())
    out.pods = static_cast<int>(by_pod->size());
  if (out.pods == 0) out.pods = static_cast<int>(num_or(result, "settings.pods", 1));
  for (const auto& e : *events)
    if (e.is_array() && e.size() >= 3 && e[1].is_number()) out.pods = std::max(out.pods, e[1].get<int>());
  const bool readiness = str(result, "pods.readiness.probe", "off") != "off";
  out.capped = events->size() >= kPodEventsListed;
  double last = 0;
  for (const auto& e : *events)
    if (e.is_array() && !e.empty() && e[0].is_number()) last = std::max(last, e[0].get<double>());
  out.end_s = std::max(last, num_or(result, "duration_s", 0));
  if (const json* tl = find(result, "timeline"); tl != nullptr && tl->is_array() && !tl->empty())
    out.end_s = std::max(out.end_s, num_or(tl->back(), "t_s", 0));
  if (out.capped) out.end_s = last;
  std::vector<PodState> state(static_cast<std::size_t>(out.pods), PodState::ready);
  std::vector<double> since(static_cast<std::size_t>(out.pods), 0.0);
  std::vector<std::vector<PodSpan>> lanes(static_cast<std::size_t>(out.pods));
  // Ends the pod's current span at t; a span of the state the lane just had
  // (across a change of no length: killed and started at once) goes on.
  const auto close = [&](int pod, double t) {
    const auto p = static_cast<std::size_t>(pod - 1);
    if (t > since[p]) {
      auto& lane = lanes[p];
      if (!lane.empty() && lane.back().state == state[p] && lane.back().until_s == since[p]) lane.back().until_s = t;
      else lane.push_back({pod, since[p], t, state[p]});
    }
    since[p] = std::max(since[p], t);
  };
  for (const auto& e : *events) {
    if (!e.is_array() || e.size() < 3 || !e[0].is_number() || !e[1].is_number() || !e[2].is_string()) continue;
    const double t = e[0].get<double>();
    const int pod = e[1].get<int>();
    const std::string what = e[2].get<std::string>();
    if (pod < 1 || pod > out.pods) continue;
    PodState next = state[static_cast<std::size_t>(pod - 1)];
    if (what == "pulled") next = PodState::out;
    else if (what == "returned") next = PodState::ready;
    else if (what == "killed") next = PodState::down;
    else if (what == "started") next = readiness ? PodState::out : PodState::ready;
    if (what == "killed" || what == "started") out.marks.push_back({pod, t, what == "killed"});
    if (next == state[static_cast<std::size_t>(pod - 1)]) continue;
    close(pod, t);
    state[static_cast<std::size_t>(pod - 1)] = next;
  }
  for (int pod = 1; pod <= out.pods; ++pod) close(pod, out.end_s);
  for (auto& lane : lanes) out.spans.insert(out.spans.end(), lane.begin(), lane.end());
  return out;
}

EnvelopeDrawing envelope_drawing(const json& envelope, const std::string& svg_file, const std::string& data_file) {
  EnvelopeDrawing d;
  d.data = "# partner_p99_s highest_rate_per_s, one block per strategy\n";
  const json none = json::array();
  const json& curves = envelope.contains("curves") ? envelope["curves"] : none;
  for (const auto& c : curves) {
    d.data += "# " + str(c, "strategy") + "\n";
    for (const auto& pt : c["points"]) d.data += fmt::format("{:.6g} {:.6g}\n", pt[0].get<double>() / 1000, pt[1].get<double>());
    d.data += "\n\n";
  }
  d.script = preamble(svg_file, "Safe envelope: where each strategy meets the targets (paper)", "partner p99 (s)",
                      "offered rate (requests/s)", 520);
  d.script += "set logscale x\nset style fill transparent solid 0.25 noborder\n";
  if (const json* at = find(envelope, "planned"); at != nullptr && at->is_object())
    d.script += fmt::format("set label 1 'planned' at {:.6g},{:.6g} point pt 7 ps 1.2 offset 1,0\n",
                            num_or(*at, "partner_p99_ms", 0) / 1000, num_or(*at, "rate_per_s", 0));
  std::string plots;
  for (std::size_t i = 0; i < curves.size(); ++i)
    plots += fmt::format("{}{} index {} using 1:(0):2 with filledcurves lc {} title {}, '' index {} using 1:2 with lines "
                         "lc {} lw 2 notitle",
                         i ? ", \\\n     " : "", q(data_file), i, i + 1, q(str(curves[i], "strategy")), i, i + 1);
  d.script += "plot " + (plots.empty() ? std::string("NaN notitle") : plots) + "\n";
  return d;
}

namespace {

// The plan's safe envelope beside the results (report --plan, or DIR/plan.json).
Chart envelope_chart(const json& plan, ChartWriter& w) {
  Chart c{"envelope.svg", "Safe envelope (lockbench plan)",
          "Offered rate against the partner's p99: below its line, a strategy's planned settings meet the plan's "
          "targets on paper when the partner's whole latency distribution is scaled to that p99 (only the strategies "
          "the simulator confirmed). The dot is the planned point.",
          "", ""};
  const EnvelopeDrawing d = envelope_drawing(plan["envelope"], w.svg(c).string(), "gnuplot/envelope.dat");
  w.data("envelope.dat", d.data);
  w.draw(c, d.script);
  return c;
}

}  // namespace

std::vector<Chart> make_charts(const std::vector<json>& results, const fs::path& charts_dir,
                               const ReportOptions& options) {
  fs::create_directories(charts_dir);
  ChartWriter w(charts_dir, options);
  const auto groups = group_by_strategy(results);
  std::vector<Chart> charts = {throughput_chart(results, groups, w), p99_chart(results, groups, w),
                               timeline_chart(results, w)};
  // Pods ready over time beside the pool chart, when a run had probes acting.
  if (std::any_of(results.begin(), results.end(), [](const json& r) { return pod_lanes(r).has_value(); }))
    charts.push_back(pods_chart(results, w));
  for (auto* chart : {time_split_chart, violations_chart, race_chart}) charts.push_back(chart(results, w));
  if (options.plan.is_object() && options.plan.contains("envelope")) charts.push_back(envelope_chart(options.plan, w));
  return charts;
}

}  // namespace lockbench::report::detail
