#include "report/knee.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "report/fields.hpp"
#include "report/table.hpp"

namespace lockbench::report {

using nlohmann::json;

double knee_ok_share(const json& result) {
  // ok/s and arrivals/s over the same arrival window: their ratio is the ratio of the counts.
  const double total = detail::num_or(result, "requests.total", 0);
  return total > 0 ? detail::num_or(result, "requests.ok", 0) / total : 0;
}

bool below_knee(const json& result, Duration p99_target) {
  const auto p99 = detail::num(result, "latency_ms.p99");
  return knee_ok_share(result) >= kKneeOkShareMin && p99 && *p99 <= to_ms(p99_target);
}

namespace {

struct Bracket {
  double lo = 0;  // passed (0: nothing passed)
  double hi = 0;  // failed, unless !bounded
  bool bounded = true;
};

Bracket bisect(const std::function<bool(double)>& passes, double start, int steps, int doublings) {
  Bracket b{0, start, true};
  while (passes(b.hi)) {
    b.lo = b.hi;
    if (doublings-- <= 0) {
      b.bounded = false;
      return b;
    }
    b.hi *= 2;
  }
  for (int i = 0; i < steps; ++i) {
    const double mid = (b.lo + b.hi) / 2;
    (passes(mid) ? b.lo : b.hi) = mid;
  }
  return b;
}

}  // namespace

KneeSearch find_knee(const std::function<int(double)>& passed, int seeds, double start, int steps, int doublings) {
  KneeSearch k;
  k.seeds = seeds;
  // The two bisections compute the same rates, bit for bit, for as long as they take the same turns.
  std::map<double, int> tried;
  const auto probe = [&](double rate) {
    auto it = tried.find(rate);
    if (it == tried.end()) {
      it = tried.emplace(rate, passed(rate)).first;
      k.probes.push_back({rate, it->second});
    }
    return it->second;
  };
  const Bracket every = bisect([&](double r) { return seeds > 0 && probe(r) >= seeds; }, start, steps, doublings);
  const Bracket some = bisect([&](double r) { return probe(r) > 0; }, start, steps, doublings);
  k.knee_per_s = every.lo;
  k.upper_per_s = some.lo;
  k.bounded = every.bounded;
  k.upper_bounded = some.bounded;
  k.seeds_agree = every.lo == some.lo && every.bounded == some.bounded;
  k.resolution_per_s = std::max(every.bounded ? every.hi - every.lo : 0, some.bounded ? some.hi - some.lo : 0);
  return k;
}

json knees_json(const std::vector<Knee>& knees, Duration p99_target) {
  json list = json::array();
  for (const auto& k : knees) {
    if (k.seeds.empty()) continue;
    json probes = json::array();
    for (const auto& p : k.search.probes) probes.push_back({{"rate_per_s", p.rate_per_s}, {"passed", p.passed}});
    list.push_back({{"strategy", k.strategy},
                    {"n", k.seeds.size()},
                    {"seeds", k.seeds},
                    {"knee_per_s", k.search.knee_per_s},
                    {"upper_per_s", k.search.upper_per_s},
                    {"resolution_per_s", k.search.resolution_per_s},
                    {"seeds_agree", k.search.seeds_agree},
                    {"bounded", k.search.bounded},
                    {"upper_bounded", k.search.upper_bounded},
                    {"probes", probes}});
  }
  return {{"schema", kKneesSchema},
          {"criteria",
           {{"ok_share_min", kKneeOkShareMin},
            {"ok_share_of", "the requests offered: ok / arrivals, both over the arrival window"},
            {"p99_max_ms", to_ms(p99_target)}}},
          {"method", "simulator, bisection over the rate, each rate tried on every repetition's seed"},
          {"knees", list}};
}

std::string knee_figure(const json& k, const std::string& unit) {
  if (!k.is_object()) return "?";
  const double knee = detail::num_or(k, "knee_per_s", 0), upper = detail::num_or(k, "upper_per_s", 0);
  if (k.value("seeds_agree", true))
    return fmt::format("{:.2f}", knee) + unit + (k.value("bounded", true) ? "" : " (above the highest rate tried)");
  return fmt::format("seeds disagree: knee between {:.2f} and {:.2f}", knee, upper) + unit +
         (k.value("upper_bounded", true) ? "" : " or above (the highest rate tried)");
}

std::string knee_summary(const json& k) {
  const double res = detail::num_or(k, "resolution_per_s", 0);
  std::string text = knee_figure(k, " /s");
  const std::string tail =
      fmt::format("n={}", detail::num_or(k, "n", 0)) + (res > 0 ? fmt::format(", resolution {:.2f} /s", res) : "");
  if (!text.empty() && text.back() == ')') return text.insert(text.size() - 1, "; " + tail);
  return text + " (" + tail + ")";
}

namespace {

std::string knees_intro(const json& knees) {
  return fmt::format(
      "The highest offered rate at which a strategy still serves: ok/s at least {:.0f} % of the requests offered "
      "(the arrivals the run counted; both over the arrival window, not the drain after it) and p99 (every "
      "request, from its intended start) at most {}. Found in the simulator by bisection over the rate, each rate "
      "tried on every repetition's seed: the knee is the highest rate tried at which every seed passed, within "
      "the resolution shown. When a rate passes on some seeds and fails on others, the seeds disagree: the knee "
      "lies between that figure and the highest rate at which some seed passed, depending on the seed.",
      100 * detail::num_or(knees, "criteria.ok_share_min", kKneeOkShareMin),
      detail::duration_text(detail::num(knees, "criteria.p99_max_ms")));
}

detail::Table knees_table(const json& knees) {
  detail::Table t;
  t.headers = {"strategy", "knee /s", "seeds", "resolution /s"};
  t.numeric = {false, true, true, true};
  for (const auto& k : knees["knees"]) {
    if (!k.is_object()) continue;
    const double res = detail::num_or(k, "resolution_per_s", 0);
    t.rows.push_back({k.value("strategy", "?"), knee_figure(k), fmt::format("{}", detail::num_or(k, "n", 0)),
                      res > 0 ? fmt::format("{:.2f}", res) : "–"});
  }
  return t;
}

bool has_knees(const json& knees) {
  return knees.is_object() && knees.contains("knees") && knees["knees"].is_array() && !knees["knees"].empty();
}

// knees.json of another schema (an older lockbench's lockbench.knees/1 compared ok/s with the nominal rate).
std::string other_schema(const json& knees) {
  const auto* schema = knees.is_object() && knees.contains("schema") && knees["schema"].is_string()
                           ? knees["schema"].get_ptr<const std::string*>()
                           : nullptr;
  if (schema && *schema == kKneesSchema) return "";
  return fmt::format("knees.json is {}, not {}: rerun `sweep --knee-p99` to find the knee.", schema ? *schema : "?",
                     kKneesSchema);
}

}  // namespace

std::string knees_markdown(const json& knees) {
  if (!has_knees(knees)) return "";
  if (const auto note = other_schema(knees); !note.empty()) return "## The knee\n\n" + note + "\n\n";
  return "## The knee\n\n" + knees_intro(knees) + "\n\n" + knees_table(knees).markdown() + "\n";
}

std::string knees_html(const json& knees) {
  if (!has_knees(knees)) return "";
  if (const auto note = other_schema(knees); !note.empty())
    return "<h2 id=\"knee\">The knee</h2>\n<p>" + detail::html_escape(note) + "</p>\n";
  return "<h2 id=\"knee\">The knee</h2>\n<p>" + detail::html_escape(knees_intro(knees)) + "</p>\n" +
         knees_table(knees).html();
}

}  // namespace lockbench::report
