// The five charts of report.html. Each writes its data and a gnuplot script,
// runs gnuplot and reads the SVG back; absent data becomes a sentence instead.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "report/charts.hpp"
#include "report/fields.hpp"

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
    if (!options_.charts) {
      c.missing = "Charts were turned off for this report.";
      return;
    }
    const fs::path gp = fs::path("gnuplot") / fs::path(c.file).replace_extension(".gp");
    write_file(dir_ / gp, script);
    const std::string err = run_gnuplot(options_.gnuplot, gp, dir_);
    if (!err.empty()) {
      c.missing = "This chart could not be drawn: " + err;
      return;
    }
    c.svg = read_file(dir_ / c.file);
    if (c.svg.empty()) c.missing = "gnuplot wrote an empty chart.";
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

// The world whose runs the load charts draw: the one with the most runs. A
// time-scaled real run and a simulator run at the same configured load sit at
// different offered rates, so one chart never mixes worlds; the tables show all.
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
// load (the first), in increasing load.
std::vector<const json*> load_points(const StrategyGroup& g, const std::string& world) {
  std::vector<const json*> out;
  for (const json* r : g.results) {
    if (str(*r, "world") != world || find(*r, "faults") != nullptr || !num(*r, "offered_per_s")) continue;
    const double offered = *num(*r, "offered_per_s");
    const bool seen = std::any_of(out.begin(), out.end(), [&](const json* o) { return *num(*o, "offered_per_s") == offered; });
    if (!seen) out.push_back(r);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const json* a, const json* b) { return *num(*a, "offered_per_s") < *num(*b, "offered_per_s"); });
  return out;
}

Chart throughput_chart(const std::vector<StrategyGroup>& groups, ChartWriter& w) {
  Chart c{"throughput.svg", "Successful throughput against offered load",
          "Solid lines: measured ok requests per second. Dashed lines of the same color: the Little's-law "
          "ceiling (pool size / mean connection hold time) of that strategy at that load; ceilings more than twice "
          "the highest offered load are left out. Grey dotted line: offered = ok, what a strategy without losses "
          "would reach.",
          "", ""};
  std::string plots;
  double top = 0;
  std::size_t points = 0;
  const std::string world = chart_world(groups);
  c.caption += " Runs of the " + world + " world.";
  for (const auto& g : groups)
    for (const json* r : load_points(g, world))
      top = std::max({top, num_or(*r, "offered_per_s", 0), num_or(*r, "throughput_ok_per_s", 0)});
  for (std::size_t i = 0; i < groups.size(); ++i) {
    std::string rows;
    const auto runs = load_points(groups[i], world);
    // A ceiling far above the offered load (a strategy that returns its
    // connection during the partner call) would only flatten the chart.
    bool ceiling_in_view = false;
    for (const json* r : runs)
      if (auto ceiling = num(*r, "prediction.littles_law_ceiling_per_s"); ceiling && *ceiling <= 2 * top)
        ceiling_in_view = true;
    for (const json* r : runs) {
      const auto offered = num(*r, "offered_per_s");
      const auto ok = num(*r, "throughput_ok_per_s");
      if (!offered || !ok) continue;
      const auto ceiling = num(*r, "prediction.littles_law_ceiling_per_s");
      rows += fmt::format("{} {} {}\n", *offered, *ok, ceiling ? fmt::format("{}", *ceiling) : "NaN");
      top = std::max({top, *offered, *ok});
      ++points;
    }
    if (rows.empty()) continue;
    const auto file = w.data(fmt::format("throughput_{}.dat", i), rows);
    plots += fmt::format("{} using 1:2 with linespoints lw 2 pt 7 ps 0.8 lc rgb '{}' title {}, \\\n", q(file.string()),
                         color(i), q(groups[i].strategy));
    if (ceiling_in_view)
      plots += fmt::format("{} using 1:3 with linespoints dt 2 lw 1.5 pt 2 lc rgb '{}' title {}, \\\n",
                           q(file.string()), color(i), q(groups[i].strategy + " ceiling"));
  }
  if (points == 0) {
    c.missing = "No result states both an offered load and a throughput.";
    return c;
  }
  std::string script = preamble(w.svg(c), c.title, "offered load (requests/s)", "ok throughput (requests/s)");
  script += fmt::format("set xrange [0:{}]\nset yrange [0:{}]\n", top * 1.1, top * 1.25);
  script += "plot " + plots + "x with lines dt 3 lc rgb '#999999' title 'offered = ok'\n";
  w.draw(c, script);
  return c;
}

Chart p99_chart(const std::vector<StrategyGroup>& groups, ChartWriter& w) {
  Chart c{"p99.svg", "p99 latency against offered load",
          "Latency from each request's intended start (open-loop schedule), so queueing is counted. "
          "A logarithmic axis is used when the values span more than two decades.",
          "", ""};
  std::string plots;
  double lo = 0, hi = 0;
  const std::string world = chart_world(groups);
  c.caption += " Runs of the " + world + " world.";
  for (std::size_t i = 0; i < groups.size(); ++i) {
    std::string rows;
    for (const json* r : load_points(groups[i], world)) {
      const auto offered = num(*r, "offered_per_s");
      const auto p99 = num(*r, "latency_ms.p99");
      if (!offered || !p99) continue;
      rows += fmt::format("{} {}\n", *offered, *p99);
      lo = lo == 0 ? *p99 : std::min(lo, *p99);
      hi = std::max(hi, *p99);
    }
    if (rows.empty()) continue;
    const auto file = w.data(fmt::format("p99_{}.dat", i), rows);
    plots += fmt::format("{} using 1:2 with linespoints lw 2 pt 7 ps 0.8 lc rgb '{}' title {}, ", q(file.string()),
                         color(i), q(groups[i].strategy));
  }
  if (plots.empty()) {
    c.missing = "No result states a p99 latency with an offered load.";
    return c;
  }
  std::string script = preamble(w.svg(c), c.title, "offered load (requests/s)", "p99 latency (ms)");
  if (lo > 0 && hi / lo > 100) script += "set logscale y\n";
  else script += "set yrange [0:*]\n";
  script += "set xrange [0:*]\nplot " + plots.substr(0, plots.size() - 2) + "\n";
  w.draw(c, script);
  return c;
}

Chart timeline_chart(const std::vector<StrategyGroup>& groups, ChartWriter& w) {
  Chart c{"pool_timeline.svg", "Pool connections over time",
          "For the heaviest run of each strategy: solid lines are active (borrowed) connections, dashed lines "
          "are requests waiting for a connection. The dotted black line is the pool size.",
          "", ""};
  std::string plots;
  double pool_size = 0, t_max = 0, y_max = 0;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const json& r = *groups[i].representative();
    const json* tl = find(r, "timeline");
    if (tl == nullptr || !tl->is_array() || tl->empty()) continue;
    std::string rows;
    for (const auto& s : *tl) {
      const double t = num_or(s, "t_s", 0), active = num_or(s, "active", 0), pending = num_or(s, "pending", 0);
      rows += fmt::format("{} {} {}\n", t, active, pending);
      t_max = std::max(t_max, t);
      y_max = std::max({y_max, active, pending});
    }
    pool_size = std::max(pool_size, num_or(r, "pool.size", 0));
    const auto file = w.data(fmt::format("timeline_{}.dat", i), rows);
    const std::string name = fmt::format("{} @ {}/s", groups[i].strategy, fmt(num(r, "offered_per_s")));
    plots += fmt::format("{} using 1:2 with steps lw 2 lc rgb '{}' title {}, ", q(file.string()), color(i),
                         q(name + " active"));
    plots += fmt::format("{} using 1:3 with steps dt 2 lw 2 lc rgb '{}' title {}, ", q(file.string()), color(i),
                         q(name + " pending"));
  }
  if (plots.empty()) {
    c.missing = "No result holds a timeline (the per-interval samples of active and pending connections).";
    return c;
  }
  std::string script = preamble(w.svg(c), c.title, "time since the run's start (s)", "connections / requests");
  y_max = std::max(y_max, pool_size);
  script += fmt::format("set xrange [0:{}]\nset yrange [0:{}]\n", std::max(t_max, 1e-3), std::max(1.0, y_max * 1.15));
  if (pool_size > 0) plots += fmt::format("{} with lines dt 3 lw 1.5 lc rgb 'black' title 'pool size', ", pool_size);
  script += "plot " + plots.substr(0, plots.size() - 2) + "\n";
  w.draw(c, script);
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

Chart time_split_chart(const std::vector<StrategyGroup>& groups, ChartWriter& w) {
  Chart c{"time_split.svg", "Where a request's time goes",
          "Mean time per request in the heaviest run of each strategy, stacked: worker queue, pool wait, "
          "lock wait, partner calls, database work. The hatched bar beside it is the time a connection was "
          "held while idle (it overlaps the partner time for strategies that hold a connection): the waste "
          "Little's law turns into a ceiling.",
          "", ""};
  const std::vector<std::string> keys = {"queue", "pool_wait", "lock_wait", "partner", "db"};
  const std::vector<std::string> names = {"worker queue", "pool wait", "lock wait", "partner", "database"};
  std::vector<std::string> bars;
  std::vector<std::vector<double>> values;
  std::string idle_rows;
  for (const auto& g : groups) {
    const json& r = *g.representative();
    const json* split = find(r, "time_split_ms");
    if (split == nullptr || !split->is_object()) continue;
    std::vector<double> v;
    for (const auto& k : keys) v.push_back(num_or(*split, k, 0));
    idle_rows += fmt::format("{} {}\n", bars.size(), num_or(*split, "held_idle", 0));
    bars.push_back(g.strategy);
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
  std::string script = preamble(w.svg(c), c.title, "strategy (heaviest run)", "mean time per request (ms)");
  script += xtics(bars);
  script += fmt::format("set xrange [-0.6:{}]\nset yrange [0:{}]\n", bars.size() - 0.4, std::max(1.0, top * 1.15));
  script += "plot " + plots + "\n";
  w.draw(c, script);
  return c;
}

Chart violations_chart(const std::vector<StrategyGroup>& groups, const std::vector<json>& results,
                       ChartWriter& w) {
  Chart c{"violations.svg", "Partner violations per strategy",
          "Violations the partner (the oracle) counted, summed over every run of the strategy, stacked by kind. "
          "Zero is the only acceptable height.",
          "", ""};
  const auto kinds = violation_kinds(results);
  std::vector<std::string> bars;
  std::vector<std::vector<double>> values;
  double total = 0;
  for (const auto& g : groups) {
    std::vector<double> v;
    for (const auto& k : kinds) {
      double n = 0;
      for (const json* r : g.results) n += num_or(*r, "partner.violations." + k, 0);
      v.push_back(n);
      total += n;
    }
    bars.push_back(g.strategy);
    values.push_back(std::move(v));
  }
  // Only kinds that occurred get a legend entry; an all-zero chart says so.
  std::vector<std::string> shown;
  std::vector<std::vector<double>> shown_values(bars.size());
  for (std::size_t k = 0; k < kinds.size(); ++k) {
    bool any = false;
    for (const auto& v : values) any = any || v[k] > 0;
    if (!any) continue;
    shown.push_back(kinds[k]);
    for (std::size_t i = 0; i < bars.size(); ++i) shown_values[i].push_back(values[i][k]);
  }
  double top = 0;
  std::string plots;
  if (!shown.empty())
    plots = stacked_bars(w, "violations", bars, shown, shown_values,
                         {"#e15759", "#f28e2b", "#edc948", "#b07aa1", "#76b7b2", "#ff9da7", "#9c755f", "#4e79a7"},
                         top);
  std::string script = preamble(w.svg(c), c.title, "strategy", "violations (count)");
  script += xtics(bars);
  script += fmt::format("set xrange [-0.6:{}]\nset yrange [0:{}]\n", bars.size() - 0.4, std::max(1.0, top * 1.15));
  if (total == 0) {
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

std::vector<Chart> make_charts(const std::vector<json>& results, const fs::path& charts_dir,
                               const ReportOptions& options) {
  fs::create_directories(charts_dir);
  ChartWriter w(charts_dir, options);
  const auto groups = group_by_strategy(results);
  return {throughput_chart(groups, w), p99_chart(groups, w), timeline_chart(groups, w), time_split_chart(groups, w),
          violations_chart(groups, results, w), race_chart(results, w)};
}

}  // namespace lockbench::report::detail
