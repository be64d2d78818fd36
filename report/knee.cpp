#include "report/knee.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "base/stats.hpp"
#include "report/fields.hpp"
#include "report/repetitions.hpp"
#include "report/table.hpp"

namespace lockbench::report {

using nlohmann::json;

bool below_knee(const json& result, Duration p99_target) {
  const double offered = detail::num_or(result, "offered_per_s", 0);
  const double ok = detail::num_or(result, "throughput_ok_per_s", 0);
  const auto p99 = detail::num(result, "latency_ms.p99");
  return offered > 0 && ok >= kKneeOkShareMin * offered && p99 && *p99 <= to_ms(p99_target);
}

double bisect_knee(const std::function<bool(double)>& passes, double hi, int steps, int doublings, bool& bounded) {
  double lo = 0;
  bounded = true;
  while (passes(hi)) {
    lo = hi;
    if (doublings-- <= 0) {
      bounded = false;
      return lo;
    }
    hi *= 2;
  }
  for (int i = 0; i < steps; ++i) {
    const double mid = (lo + hi) / 2;
    (passes(mid) ? lo : hi) = mid;
  }
  return lo;
}

json knees_json(const std::vector<Knee>& knees, Duration p99_target) {
  json list = json::array();
  for (const auto& k : knees) {
    if (k.rates_per_s.empty()) continue;
    const auto s = stats::summarize(k.rates_per_s);
    list.push_back({{"strategy", k.strategy},
                    {"n", s.n},
                    {"values", k.rates_per_s},
                    {"seeds", k.seeds},
                    {"mean", s.mean},
                    {"median", s.median},
                    {"stddev", s.stddev},
                    {"cv", s.cv},
                    {"ci95", {s.ci95_low, s.ci95_high}},
                    {"bounded", k.bounded}});
  }
  return {{"schema", "lockbench.knees/1"},
          {"criteria", {{"ok_share_min", kKneeOkShareMin}, {"p99_max_ms", to_ms(p99_target)}}},
          {"method", "simulator, bisection over the rate per repetition (its own derived seed)"},
          {"knees", list}};
}

std::string knees_intro(const json& knees) {
  return fmt::format(
      "The highest offered rate at which a strategy still serves: ok/s at least {:.0f} % of offered and p99 (every "
      "request, from its intended start) at most {}. Found in the simulator by bisection over the rate, once per "
      "repetition; mean ± half-width of the 95 % t-interval over the repetitions.",
      100 * detail::num_or(knees, "criteria.ok_share_min", kKneeOkShareMin),
      detail::duration_text(detail::num(knees, "criteria.p99_max_ms")));
}

detail::Table knees_table(const json& knees) {
  detail::Table t;
  t.headers = {"strategy", "knee /s", "n", "range /s"};
  t.numeric = {false, true, true, false};
  for (const auto& k : knees["knees"]) {
    stats::Summary s;
    s.n = k.value("n", std::size_t{0});
    s.mean = k.value("mean", 0.0);
    s.ci95_low = k["ci95"][0].get<double>();
    s.ci95_high = k["ci95"][1].get<double>();
    const auto values = k["values"].get<std::vector<double>>();
    const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
    t.rows.push_back({k.value("strategy", "?"),
                      plus_minus(s, 2) + (k.value("bounded", true) ? "" : " (above the highest rate tried)"),
                      std::to_string(s.n), fmt::format("{:.2f} – {:.2f}", *lo, *hi)});
  }
  return t;
}

bool has_knees(const json& knees) {
  return knees.is_object() && knees.contains("knees") && knees["knees"].is_array() && !knees["knees"].empty();
}

std::string knees_markdown(const json& knees) {
  if (!has_knees(knees)) return "";
  return "## The knee\n\n" + knees_intro(knees) + "\n\n" + knees_table(knees).markdown() + "\n";
}

std::string knees_html(const json& knees) {
  if (!has_knees(knees)) return "";
  return "<h2 id=\"knee\">The knee</h2>\n<p>" + detail::html_escape(knees_intro(knees)) + "</p>\n" +
         knees_table(knees).html();
}

}  // namespace lockbench::report
