#include "report/sections.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include <fmt/format.h>

#include "fake_partner/model/check.hpp"
#include "report/fields.hpp"
#include "report/repetitions.hpp"
#include "strategies/registry.hpp"

namespace lockbench::report::detail {

namespace {

// The repetitions of a headline run among the views (report/repetitions.hpp): a
// figure of a run with repetitions is their mean with its 95 % interval.
class Repetitions {
 public:
  explicit Repetitions(const std::vector<json>& views) : groups_(repetition_groups(views)) {}
  // The run's set when it has more than one run; nullptr otherwise.
  const RepetitionGroup* of(const json* r) const {
    for (const auto& g : groups_)
      if (g.runs.size() > 1 && std::find(g.runs.begin(), g.runs.end(), r) != g.runs.end()) return &g;
    return nullptr;
  }
  std::optional<stats::Summary> summary(const json* r, std::string_view metric) const {
    return summary_over_repetitions(groups_, r, metric);
  }

 private:
  std::vector<RepetitionGroup> groups_;
};

std::string count(const json& r, std::string_view path) { return fmt(num(r, path), 0); }

std::optional<double> mean_hold_ms(const json& r) {
  if (auto v = num(r, "pool.hold_ms.mean")) return v;
  return num(r, "prediction.mean_hold_ms");
}

// Latency of ok requests (what a served user waited); results written before
// latency_ok_ms existed fall back to every request's figure.
std::optional<double> ok_latency(const json& r, const char* q) {
  if (auto v = num(r, std::string("latency_ok_ms.") + q)) return v;
  return num(r, std::string("latency_ms.") + q);
}

// Requests that timed out waiting for a connection (pool.timeouts also counts
// the health probes' timeouts, which have a column of their own).
double pool_timeouts(const json& r) {
  if (auto n = num(r, "requests.pool_timeout")) return *n;
  return num_or(r, "pool.timeouts", 0);
}

bool pool_safe(const json& r) { return pool_timeouts(r) == 0 && num_or(r, "probe.failed", 0) == 0; }

std::string pct(double part, double whole) {
  if (!(whole > 0)) return "–";
  return fmt::format("{:.0f} %", 100.0 * part / whole);
}

// "2.97" or "2.97–3.02".
std::string range(std::vector<double> v, int decimals = 2) {
  if (v.empty()) return "–";
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  const auto one = [&](double x) { return fmt::format("{:.{}f}", x, decimals); };
  return one(*lo) == one(*hi) ? one(*lo) : one(*lo) + "–" + one(*hi);
}

// "`a`", "`a` and `b`", "`a`, `b` and `c`".
std::string names(const std::vector<std::string>& n) {
  std::string out;
  for (std::size_t i = 0; i < n.size(); ++i)
    out += (i == 0 ? "" : i + 1 == n.size() ? " and " : ", ") + ("`" + n[i] + "`");
  return out;
}

// What the runs injected, from the settings and the faults block: "" for none.
std::string faults_text(const json& r) {
  std::vector<std::string> parts;
  const auto set = [&](const char* key) {
    const json* v = find(r, std::string("settings.") + key);
    if (v == nullptr || v->is_null()) return std::string();
    const std::string s = v->is_string() ? v->get<std::string>() : v->dump();
    return s == "0" || s == "{}" || s.empty() ? std::string() : s;
  };
  if (auto v = set("crash-at"); !v.empty()) parts.push_back("crash at " + v);
  if (auto v = set("pause-at"); !v.empty()) parts.push_back("pause at " + v + " for " + set("pause-for"));
  if (auto v = set("clock-skew"); !v.empty()) parts.push_back("clock skew " + v);
  if (const json* pf = find(r, "settings.partner-faults"); pf != nullptr && pf->is_object() && !pf->empty()) {
    std::string keys;
    for (const auto& [k, _] : pf->items()) keys += (keys.empty() ? "" : ", ") + k;
    parts.push_back("partner faults (" + keys + ")");
  }
  if (parts.empty() && has_faults(r)) {
    if (auto crash = num(r, "faults.crash_at_s")) parts.push_back(fmt::format("crash at {} s", fmt(crash)));
    else parts.push_back("faults injected");
  }
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

// 1-based position of a result in the input: the run number every table shares.
std::size_t run_number(const std::vector<json>& views, const json* r) {
  return static_cast<std::size_t>(r - views.data()) + 1;
}

bool uniform(const std::vector<json>& views, std::string_view field) {
  for (const auto& r : views)
    if (str(r, field) != str(views.front(), field)) return false;
  return true;
}

// Settings whose values differ between runs (strategy and seed have columns
// of their own): these tell otherwise equal rows apart.
std::vector<std::string> differing_settings(const std::vector<json>& views) {
  std::set<std::string> keys;
  for (const auto& r : views)
    if (const json* s = find(r, "settings"); s != nullptr && s->is_object())
      for (const auto& [k, _] : s->items()) keys.insert(k);
  std::vector<std::string> out;
  for (const auto& k : keys) {
    if (k == "strategy" || k == "seed" || k == "world" || k == "scenario") continue;
    const std::string first = str(views.front(), "settings." + k, "–");
    for (const auto& r : views)
      if (str(r, "settings." + k, "–") != first) {
        out.push_back(k);
        break;
      }
  }
  return out;
}

std::string exclusion_cell(const json& r) {
  const Violations v = violations_of(r);
  std::string cell;
  const double excl = v.exclusion;
  if (excl == 0) cell = fmt::format("✅ 0 in {} partner calls", fmt(num(r, "partner.calls"), 0));
  else {
    std::vector<std::pair<std::string, double>> kinds;
    for (const auto& k : v.kinds)
      if (classify_kind(k.first) == KindClass::exclusion) kinds.push_back(k);
    cell = fmt::format("❌ {} ({})", fmt(excl, 0), kinds_text(kinds, 2));
  }
  if (!v.note_kinds.empty()) cell += "; notes, not violations: " + kinds_text(v.note_kinds);
  if (const auto fix = abandoned_call_fix(r); !fix.empty()) cell += " (" + fix + ")";
  if (has_faults(r)) cell += " (fault run)";
  return cell;
}

std::string pool_cell(const json& r) {
  std::string cell = fmt::format("{} {} pool timeouts, {}/{} probes failed", pool_safe(r) ? "✅" : "❌",
                                 fmt(pool_timeouts(r), 0), count(r, "probe.failed"), count(r, "probe.total"));
  if (holds_connection(r)) cell += "; holds a connection during the call";
  return cell;
}

std::string ceiling_cell(const json& r) {
  const auto ceiling = ceiling_per_s(r);
  const auto ok = num(r, "throughput_ok_per_s");
  if (!ceiling || !ok) return "– (no connection held during the call)";
  return fmt::format("{} of {} ({})", fmt(ok, 2), fmt(ceiling, 2), pct(*ok, *ceiling));
}

std::string leaks_cell(const json& r) {
  std::string cell = count(r, "locks.leaked");
  if (num_or(r, "locks.unlock_failures", 0) > 0) cell += fmt::format(" ({} failed unlocks)", count(r, "locks.unlock_failures"));
  return cell;
}

std::string orphan_cell(const json& r) {
  const Violations v = violations_of(r);
  if (v.orphan == 0) return "✅ 0";
  std::vector<std::pair<std::string, double>> kinds;
  for (const auto& k : v.kinds)
    if (classify_kind(k.first) == KindClass::orphan) kinds.push_back(k);
  return fmt::format("❌ {} ({})", fmt(v.orphan, 0), kinds_text(kinds));
}

// Kubernetes' probes acting (--readiness, --liveness): restarts, requests
// lost to kills and to no pod ready, and how long no pod was ready.
std::string pods_cell(const json& r) {
  if (!r.contains("pods")) return "–";
  const double restarts = num_or(r, "pods.restarts", 0), lost = num_or(r, "pods.requests_lost", 0);
  const double none_ready = num_or(r, "pods.unavailable_s", 0);
  std::string cell = fmt::format("{} {} restarts, {} lost", restarts == 0 && lost == 0 ? "✅" : "❌", fmt(restarts, 0),
                                 fmt(lost, 0));
  if (none_ready > 0) cell += fmt::format(", no pod ready {}", duration_text(none_ready * 1000));
  return cell;
}

// A partner fault window that ends: the time back to the service before it (core/recovery.hpp).
std::string recovery_cell(const json& r) {
  if (!r.contains("recovery")) return "–";
  const json& rec = r["recovery"];
  if (rec.value("recovered", false) && rec["recovery_s"].is_number())
    return fmt::format("{} after the window", duration_text(rec["recovery_s"].get<double>() * 1000));
  return "❌ " + rec.value("reason", std::string("not recovered"));
}

bool any_has(const std::vector<json>& views, const char* block) {
  return std::any_of(views.begin(), views.end(), [block](const json& r) { return r.contains(block); });
}

}  // namespace

Table verdict_table(const std::vector<json>& views) {
  Table t;
  const bool one_scenario = uniform(views, "scenario");
  t.headers = {"strategy", "world"};
  if (!one_scenario) t.headers.push_back("scenario");
  for (const char* h : {"offered /s", "exclusion held?", "pool-safe?", "ok /s of offered",
                        "ok /s of Little's-law ceiling", "ok p99", "lease steals", "leaked locks", "orphan effects"})
    t.headers.push_back(h);
  // Columns of their own only where a run has them, so a table of today's runs keeps its shape.
  const bool pods = any_has(views, "pods"), recovery = any_has(views, "recovery");
  if (pods) t.headers.push_back("pods (probes acting)");
  if (recovery) t.headers.push_back("recovery");
  t.numeric.assign(t.headers.size(), false);
  const Repetitions reps(views);
  for (const auto& h : headline_runs(views)) {
    const json& r = *h.run;
    std::vector<std::string> row = {h.strategy, world_label(r)};
    if (!one_scenario) row.push_back(h.scenario);
    row.push_back(fmt(num(r, "offered_per_s")) + (h.off_headline ? " (not at the headline load)" : ""));
    std::string excl = exclusion_cell(r);
    if (const auto v = reps.summary(&r, "violations"); v && v->mean > 0)
      excl += fmt::format(" (over {} repetitions: {} a run)", v->n, plus_minus(*v, 1));
    row.push_back(excl);
    row.push_back(pool_cell(r));
    const auto ok = reps.summary(&r, "ok_per_s");
    const double ok_mean = ok ? ok->mean : num_or(r, "throughput_ok_per_s", 0);
    row.push_back(fmt::format("{} of {} ({}){}", ok ? plus_minus(*ok, 2) : fmt(num(r, "throughput_ok_per_s"), 2),
                              fmt(num(r, "offered_per_s")), pct(ok_mean, num_or(r, "offered_per_s", 0)),
                              ok ? fmt::format(", n={}", ok->n) : std::string()));
    row.push_back(ceiling_cell(r));
    if (const auto p99 = reps.summary(&r, "latency_ok_ms.p99"))
      row.push_back(duration_text(p99->mean) + " ± " + duration_text(p99->half_width()));
    else
      row.push_back(duration_text(ok_latency(r, "p99")));
    row.push_back(count(r, "locks.lease_steals"));
    row.push_back(leaks_cell(r));
    row.push_back(orphan_cell(r));
    if (pods) row.push_back(pods_cell(r));
    if (recovery) row.push_back(recovery_cell(r));
    t.rows.push_back(std::move(row));
  }
  return t;
}

namespace {

// What else a strategy's run did (leaks, failed unlocks, steals, false conflicts,
// orphans, notes), as one sentence; "" when nothing.
std::string extras_sentence(const Headline& h) {
  const json& r = *h.run;
  std::vector<std::string> extra;
  if (num_or(r, "locks.leaked", 0) > 0) extra.push_back(fmt::format("leaked {} locks", count(r, "locks.leaked")));
  if (num_or(r, "locks.unlock_failures", 0) > 0)
    extra.push_back(fmt::format("failed {} unlocks", count(r, "locks.unlock_failures")));
  if (num_or(r, "locks.lease_steals", 0) > 0)
    extra.push_back(fmt::format("had {} leases stolen", count(r, "locks.lease_steals")));
  if (num_or(r, "locks.false_conflicts", 0) > 0)  // --key-hash: two keys on one lock number
    extra.push_back(fmt::format("denied {} requests for another key's lock (false conflicts, --key-hash {})",
                                count(r, "locks.false_conflicts"),
                                r["settings"].value("key-hash", std::string("?"))));
  const Violations v = violations_of(r);
  if (v.orphan > 0) extra.push_back(fmt::format("left {} orphan effects", fmt(v.orphan, 0)));
  if (!v.note_kinds.empty()) extra.push_back("counted " + kinds_text(v.note_kinds) + " (notes, not violations)");
  if (extra.empty()) return "";
  std::string s = "`" + h.strategy + "` ";
  for (std::size_t i = 0; i < extra.size(); ++i)
    s += (i == 0 ? "" : i + 1 == extra.size() ? " and " : ", ") + extra[i];
  return s;
}

// Which clean strategy was fastest, and whether its lead is inside the repetitions' noise.
std::string fastest_sentence(const std::vector<std::string>& clean, const std::vector<double>& clean_ok,
                             const std::vector<std::optional<stats::Summary>>& clean_interval) {
  if (clean.empty()) return "no strategy both held exclusion and kept the pool at this load";
  if (clean.size() == 1) return "";
  const auto best = std::max_element(clean_ok.begin(), clean_ok.end()) - clean_ok.begin();
  // With repetitions, a lead inside the noise is said as such: the other intervals that overlap the best's.
  std::vector<std::string> tied;
  if (const auto& b = clean_interval[best])
    for (std::size_t i = 0; i < clean.size(); ++i)
      if (static_cast<std::ptrdiff_t>(i) != best && clean_interval[i] &&
          clean_interval[i]->ci95_high >= b->ci95_low && b->ci95_high >= clean_interval[i]->ci95_low)
        tied.push_back(clean[i]);
  if (tied.empty())
    return fmt::format("the fastest strategy without a failure was `{}`{}", clean[best],
                       clean_interval[best] ? " (outside the others' 95 % intervals of ok/s)" : "");
  return fmt::format("the fastest strategy without a failure was `{}`, but its ok/s is within noise of {} (their "
                     "95 % intervals overlap)",
                     clean[best], names(tied));
}

// One world and scenario's paragraph: which strategies held exclusion and the
// pool, which ran it dry, which did not exclude, and what else each did.
std::string world_paragraph(const std::vector<const Headline*>& in, const Repetitions& reps) {
  const json& first = *in.front()->run;
  std::string p = fmt::format("**{}** (`{}`, {} requests/s offered, {} of load{}): ", world_label(first),
                              in.front()->scenario, fmt(num(first, "offered_per_s")),
                              duration_text(num_or(first, "duration_s", 0) * 1000),
                              num_or(first, "time_scale", 1) != 1 ? ", figures in configured units" : "");
  std::vector<std::string> clean, dry, racy, both;
  std::vector<double> clean_ok, dry_ok, dry_ratio, racy_v, both_v;
  std::vector<std::optional<stats::Summary>> clean_interval;  // ok/s over repetitions, when there are some
  double dry_timeouts = 0, dry_probes = 0, dry_probe_total = 0;
  std::map<std::string, double> racy_kinds;
  for (const Headline* h : in) {
    const json& r = *h->run;
    const Violations v = violations_of(r);
    const bool excl = v.exclusion == 0, pool = pool_safe(r);
    const auto interval = reps.summary(&r, "ok_per_s");  // with repetitions: their mean, as the table shows
    const double ok = interval ? interval->mean : num_or(r, "throughput_ok_per_s", 0);
    if (excl && pool) clean.push_back(h->strategy), clean_ok.push_back(ok), clean_interval.push_back(interval);
    if (excl && !pool) {
      dry.push_back(h->strategy), dry_ok.push_back(ok);
      if (auto c = ceiling_per_s(r); c && *c > 0)
        dry_ratio.push_back(100 * ok / *c);
      dry_timeouts += pool_timeouts(r);
      dry_probes += num_or(r, "probe.failed", 0);
      dry_probe_total += num_or(r, "probe.total", 0);
    }
    if (!excl) {
      (pool ? racy : both).push_back(h->strategy);
      (pool ? racy_v : both_v).push_back(v.exclusion);
      for (const auto& [k, n] : v.kinds) racy_kinds[k] += n;
    }
  }
  const double offered = num_or(first, "offered_per_s", 0);
  std::vector<std::string> sentences;
  if (!clean.empty())
    sentences.push_back(fmt::format("{} held exclusion and kept the pool healthy, at {} ok/s ({} of offered)",
                                    names(clean), range(clean_ok),
                                    range([&] {
                                      std::vector<double> r;
                                      for (double x : clean_ok) r.push_back(offered > 0 ? 100 * x / offered : 0);
                                      return r;
                                    }(), 0) + " %"));
  if (!dry.empty()) {
    std::string s = fmt::format("{} held exclusion but ran the pool dry: {} ok/s", names(dry), range(dry_ok));
    if (!dry_ratio.empty()) s += fmt::format(", {} % of their Little's-law ceiling", range(dry_ratio, 0));
    s += fmt::format(", {} pool timeouts and {} of {} health probes failed", fmt(dry_timeouts, 0),
                     fmt(dry_probes, 0), fmt(dry_probe_total, 0));
    sentences.push_back(s);
  }
  std::vector<std::pair<std::string, double>> kinds(racy_kinds.begin(), racy_kinds.end());
  std::stable_sort(kinds.begin(), kinds.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  const std::string most = kinds.empty() ? "" : ", mostly " + kinds.front().first;
  if (!racy.empty())
    sentences.push_back(fmt::format("{} did not exclude: {} violations per run{}", names(racy), range(racy_v, 0),
                                    most));
  if (!both.empty())
    sentences.push_back(fmt::format("{} neither excluded ({} violations) nor kept the pool", names(both),
                                    range(both_v, 0)));
  for (const Headline* h : in)
    if (auto s = extras_sentence(*h); !s.empty()) sentences.push_back(s);
  if (auto s = fastest_sentence(clean, clean_ok, clean_interval); !s.empty()) sentences.push_back(s);
  for (std::size_t i = 0; i < sentences.size(); ++i) {
    std::string s = sentences[i];
    if (!s.empty() && s[0] >= 'a' && s[0] <= 'z') s[0] = static_cast<char>(s[0] - 'a' + 'A');
    p += s + ". ";
  }
  return p.substr(0, p.size() - 1) + "\n\n";
}

// The worlds side by side: the same strategy and scenario at the same configured load.
std::string worlds_agreement(const std::vector<Headline>& rows) {
  std::string out;
  struct Pair {
    std::string strategy, world;
    double sim, other;
  };
  std::vector<Pair> pairs;
  for (const auto& a : rows)
    for (const auto& b : rows) {
      if (a.world != "sim" || b.world == "sim" || a.strategy != b.strategy || a.scenario != b.scenario) continue;
      const double oa = num_or(*a.run, "offered_per_s", 0), ob = num_or(*b.run, "offered_per_s", 0);
      const double ka = num_or(*a.run, "throughput_ok_per_s", 0), kb = num_or(*b.run, "throughput_ok_per_s", 0);
      if (oa <= 0 || std::fabs(oa - ob) > 1e-6 * oa || ka <= 0) continue;
      pairs.push_back({a.strategy, world_label(*b.run), ka, kb});
    }
  if (!pairs.empty()) {
    constexpr double kClose = 0.10;
    std::size_t close = 0;
    std::string apart;
    for (const auto& p : pairs) {
      if (std::fabs(p.other / p.sim - 1) <= kClose) {
        ++close;
        continue;
      }
      apart += fmt::format("{}`{}` ({} ok/s in {}, {} in sim)", apart.empty() ? "" : "; ", p.strategy,
                           fmt(p.other, 2), p.world, fmt(p.sim, 2));
    }
    out += fmt::format("At the same configured load, ok/s in the other world was within {:.0f} % of the "
                       "simulator's for {} of {} strategies{}.\n\n",
                       100 * kClose, close, pairs.size(), apart.empty() ? "" : "; apart: " + apart);
  }
  return out;
}

}  // namespace

std::string verdict_paragraphs(const std::vector<json>& views) {
  const auto rows = headline_runs(views);
  const Repetitions reps(views);
  std::vector<std::string> worlds;
  for (const auto& h : rows)
    if (std::find(worlds.begin(), worlds.end(), h.world + "\n" + h.scenario) == worlds.end())
      worlds.push_back(h.world + "\n" + h.scenario);
  std::string out;
  for (const auto& w : worlds) {
    std::vector<const Headline*> in;
    for (const auto& h : rows)
      if (h.world + "\n" + h.scenario == w) in.push_back(&h);
    out += world_paragraph(in, reps);
  }
  return out + worlds_agreement(rows);
}

Table detail_table(const std::vector<json>& views) {
  Table t;
  const bool one_scenario = uniform(views, "scenario");
  const auto differ = differing_settings(views);
  t.headers = {"run", "strategy", "world"};
  if (!one_scenario) t.headers.push_back("scenario");
  for (const char* h : {"pods", "offered /s", "duration s", "faults", "seed"}) t.headers.push_back(h);
  std::vector<std::string> shown_settings;
  for (const auto& k : differ)
    if (k != "pods" && k != "rate" && k != "duration" && k != "time-scale" && k != "crash-at" && k != "pause-at" &&
        k != "pause-for" && k != "clock-skew" && k != "partner-faults")
      shown_settings.push_back(k);
  if (!shown_settings.empty()) t.headers.push_back("other settings that differ");
  const std::size_t names = t.headers.size();
  for (const char* h : {"ok /s", "ok p50 ms", "ok p99 ms", "all p99 ms", "conflicts", "pool timeouts",
                        "probes failed", "violations", "violation kinds", "notes (not violations)", "lease steals",
                        "unlock failures", "locks leaked", "recovery after crash ms"})
    t.headers.push_back(h);
  t.numeric.assign(t.headers.size(), true);
  for (std::size_t i = 0; i < names; ++i) t.numeric[i] = false;
  t.numeric[names + 8] = t.numeric[names + 9] = false;
  for (const auto& g : group_by_strategy(views)) {
    for (const json* rp : g.results) {
      const json& r = *rp;
      const Violations v = violations_of(r);
      std::vector<std::string> row = {std::to_string(run_number(views, rp)), g.strategy, world_label(r)};
      if (!one_scenario) row.push_back(str(r, "scenario"));
      row.insert(row.end(), {fmt(num(r, "settings.pods").value_or(1), 0), fmt(num(r, "offered_per_s")),
                             fmt(num(r, "duration_s"), 0), faults_text(r).empty() ? "none" : faults_text(r),
                             str(r, "seed")});
      if (!shown_settings.empty()) {
        std::string s;
        for (const auto& k : shown_settings) s += (s.empty() ? "" : ", ") + k + "=" + str(r, "settings." + k, "–");
        row.push_back(s);
      }
      row.insert(row.end(), {fmt(num(r, "throughput_ok_per_s"), 2), fmt(ok_latency(r, "p50")), fmt(ok_latency(r, "p99")),
                             fmt(num(r, "latency_ms.p99")), count(r, "requests.conflict"), fmt(pool_timeouts(r), 0),
                             count(r, "probe.failed") + "/" + count(r, "probe.total"), fmt(v.total, 0),
                             v.kinds.empty() ? "–" : kinds_text(v.kinds, 3),
                             v.note_kinds.empty() ? "–" : kinds_text(v.note_kinds), count(r, "locks.lease_steals"),
                             count(r, "locks.unlock_failures"), count(r, "locks.leaked"),
                             num(r, "faults.recovery_ms") ? fmt(num(r, "faults.recovery_ms")) : "not measured"});
      t.rows.push_back(std::move(row));
    }
  }
  return t;
}

std::string uncounted_kinds_note(const std::vector<json>& views) {
  std::string zero;
  for (const auto& k : violation_kinds(views)) {
    if (is_count_not_violation(k)) continue;
    bool counted = false;
    for (const auto& r : views) counted = counted || num_or(r, "partner.violations." + k, 0) > 0;
    if (!counted) zero += (zero.empty() ? "" : ", ") + k;
  }
  std::string note;
  if (!zero.empty()) note += "Violation kinds the partner checks, counted 0 in every run: " + zero + ". ";
  std::string notes;
  for (const auto& n : partner::kNoteKinds)
    notes += fmt::format("{}{} ({})", notes.empty() ? "" : ", ", n.kind, n.meaning);
  note += "Counted as notes, not violations: " + notes + ".";
  return note;
}

Table prediction_table(const std::vector<json>& views) {
  Table t;
  t.headers = {"run", "strategy", "world", "offered /s", "pool size", "mean hold ms", "Little's-law ceiling /s",
               "measured ok /s", "ok / ceiling", "Erlang-C wait ms", "measured pool wait p50 ms", "note"};
  t.numeric = {false, false, false, true, true, true, true, true, true, true, true, false};
  for (const auto& g : group_by_strategy(views)) {
    for (const json* rp : g.results) {
      const json& r = *rp;
      const auto ceiling = num(r, "prediction.littles_law_ceiling_per_s");
      const auto ok = num(r, "throughput_ok_per_s");
      std::string ratio = "–";
      if (ceiling && ok && *ceiling > 0) ratio = fmt::format("{:.0f}%", 100.0 * *ok / *ceiling);
      t.rows.push_back({std::to_string(run_number(views, rp)), g.strategy, world_label(r),
                        fmt(num(r, "offered_per_s")), count(r, "pool.size"), fmt(mean_hold_ms(r)), fmt(ceiling),
                        fmt(ok, 2), ratio, fmt(num(r, "prediction.erlang_c_wait_ms")), fmt(num(r, "pool.wait_ms.p50")),
                        str(r, "prediction.note")});
    }
  }
  return t;
}

namespace {

// A fact of the strategy's registry row (in its file under strategies/), as the
// result states it (its strategy_info, written from the row when it ran) or,
// for a result without one, as this build's registry states it.
std::optional<json> registry_fact(const json& r, const std::string& fact) {
  if (const json* info = find(r, "strategy_info"); info != nullptr && info->is_object() && info->contains(fact))
    return (*info)[fact];
  try {
    return strategy_info_json(strategy_info(str(r, "strategy")))[fact];
  } catch (const std::exception&) {  // a strategy this build does not know
    return std::nullopt;
  }
}

std::optional<bool> registry_flag(const json& r, const std::string& fact) {
  auto v = registry_fact(r, fact);
  if (!v || !v->is_boolean()) return std::nullopt;
  return v->get<bool>();
}

// What the seeds' table says for rows that are design facts, not measurements:
// the registry row's, shown where no run measured them.
std::string expected_for_missing_records(const json& r) {
  auto needs = registry_flag(r, "needs_existing_row");
  if (!needs) return "not stated";
  return *needs ? "❌ No: needs an existing row" : "✅ Yes: no row needed";
}

std::string expected_on_crash(const json& r) {
  auto safe = registry_flag(r, "crash_safe");
  if (!safe) return "not stated";
  return *safe ? "✅ crash-safe by design" : "⚠️ not crash-safe by design";
}

// Exclusion is judged on runs without injected faults (a pod that crashes
// between unlink and link splits a person whatever the lock did); the fault
// runs' counts are named beside it, from the same function. A run whose
// partner was lost has no verdict to count.
std::string exclusion_measured(const StrategyGroup& g) {
  double violations = 0, calls = 0, steals = 0, unlock_failures = 0, fault_violations = 0;
  std::map<std::string, double> notes;
  int fault_runs = 0, unavailable_runs = 0;
  for (const json* r : g.results) {
    const Violations v = violations_of(*r);
    for (const auto& [k, n] : v.note_kinds) notes[k] += n;
    if (has_faults(*r)) {
      ++fault_runs;
      fault_violations += v.total;
      continue;
    }
    if (str(*r, "partner.available") == "false") {  // no verdict to count
      ++unavailable_runs;
      continue;
    }
    violations += v.total;
    calls += num_or(*r, "partner.calls", 0);
    steals += num_or(*r, "locks.lease_steals", 0);
    unlock_failures += num_or(*r, "locks.unlock_failures", 0);
  }
  if (unavailable_runs > 0 && unavailable_runs + fault_runs == static_cast<int>(g.results.size()))
    return "unavailable: the partner's checks could not be read";
  std::string cell = violations == 0
                         ? fmt::format("✅ 0 violations in {} partner calls", fmt(calls, 0))
                         : fmt::format("❌ {} violations in {} partner calls", fmt(violations, 0), fmt(calls, 0));
  if (steals > 0) cell += fmt::format(", {} leases stolen", fmt(steals, 0));
  if (unlock_failures > 0) cell += fmt::format(", {} failed unlocks", fmt(unlock_failures, 0));
  if (fault_runs > 0)
    cell += fmt::format("; {} crash/pause runs counted apart: {} violations", fault_runs, fmt(fault_violations, 0));
  if (!notes.empty()) {
    std::vector<std::pair<std::string, double>> n(notes.begin(), notes.end());
    cell += "; notes, not violations: " + kinds_text(n);
  }
  if (unavailable_runs > 0) cell += fmt::format(" ({} runs with the partner's checks unavailable)", unavailable_runs);
  return cell;
}

// Clustered: only runs with two pods or more can show a lock that stays in one pod.
std::string cluster_measured(const StrategyGroup& g) {
  double pod_runs = 0, pod_violations = 0, pod_calls = 0, pods_max = 0;
  for (const json* r : g.results) {
    const double pods = num_or(*r, "settings.pods", 1);
    if (pods < 2 || has_faults(*r)) continue;
    ++pod_runs;
    pod_violations += violations_of(*r).total;
    pod_calls += num_or(*r, "partner.calls", 0);
    pods_max = std::max(pods_max, pods);
  }
  if (pod_runs == 0) return "not measured (no run with 2+ pods)";
  return fmt::format("{} {} violations in {} partner calls ({} runs, up to {} pods)", pod_violations == 0 ? "✅" : "❌",
                     fmt(pod_violations, 0), fmt(pod_calls, 0), fmt(pod_runs, 0), fmt(pods_max, 0));
}

// Non-existent records: the reward claim, whose row appears only with the first claim.
std::string missing_records_measured(const StrategyGroup& g) {
  double claim_runs = 0, duplicates = 0, credits = 0, unique_divergence = 0;
  bool unique_key = false;
  for (const json* r : g.results) {
    const std::string scenario = str(*r, "scenario");
    if (scenario.rfind("reward-claim", 0) != 0 || has_faults(*r)) continue;
    ++claim_runs;
    duplicates += num_or(*r, "partner.violations.duplicate_reward", 0);
    credits += num_or(*r, "partner.calls", 0);
    if (scenario == "reward-claim:unique") {
      unique_key = true;
      unique_divergence += num_or(*r, "partner.violations.claim_divergence", 0);
    }
  }
  if (claim_runs == 0) return "not measured (expected: " + expected_for_missing_records(*g.results.front()) + ")";
  std::string cell = fmt::format("{} {} duplicate rewards in {} credits ({} runs)", duplicates == 0 ? "✅" : "❌",
                                 fmt(duplicates, 0), fmt(credits, 0), fmt(claim_runs, 0));
  if (unique_key && duplicates > 0)
    cell += fmt::format("; a unique key kept one claim row where the partner credited twice ({} claim_divergence)",
                        fmt(unique_divergence, 0));
  return cell;
}

// What the strategy needs beside the service and its PostgreSQL, from its registry row.
std::string infrastructure_needed(const StrategyGroup& g) {
  const json& r = *g.results.front();
  if (registry_flag(r, "needs_lease_store").value_or(false)) {
    const auto store = registry_fact(r, "lease_store");
    return store && store->is_string() && *store == "etcd" ? "etcd (a lease store beside PostgreSQL)"
                                                           : "Redis (a lease store beside PostgreSQL)";
  }
  if (auto e = registry_fact(r, "exclusion"); e && *e == "one-pod") return "None (the pod's own memory)";
  return "None (uses the existing PostgreSQL)";
}

// Crash recovery is measured only when a run injected a crash; each world
// that crashed a pod says its own figure (the longest of its runs).
std::string crash_recovery_measured(const StrategyGroup& g) {
  std::vector<std::pair<std::string, double>> recovery;  // world label -> ms, in first-seen order
  for (const json* r : g.results)
    if (auto v = num(*r, "faults.recovery_ms")) {
      const std::string world = world_label(*r);
      auto it = std::find_if(recovery.begin(), recovery.end(), [&](const auto& p) { return p.first == world; });
      if (it == recovery.end()) recovery.emplace_back(world, *v);
      else it->second = std::max(it->second, *v);
    }
  if (recovery.empty()) return "not measured (expected: " + expected_on_crash(*g.results.front()) + ")";
  double worst = 0;
  std::string parts;
  for (const auto& [world, ms] : recovery) {
    worst = std::max(worst, ms);
    parts += (parts.empty() ? "" : "; ") + world + " " + fmt(ms) + " ms";
  }
  return fmt::format("{} key free again after the crash: {}", worst <= 1000 ? "✅" : "⚠️", parts);
}

std::string slow_io_measured(const StrategyGroup& g) {
  double timeouts = 0, probes_failed = 0;
  for (const json* r : g.results) timeouts += pool_timeouts(*r), probes_failed += num_or(*r, "probe.failed", 0);
  if (timeouts + probes_failed == 0) return "✅ 0 pool timeouts, 0 failed probes";
  return fmt::format("❌ {} pool timeouts, {} failed probes", fmt(timeouts, 0), fmt(probes_failed, 0));
}

// The headline runs' ok /s of offered /s, per world ("–" without one).
std::string capacity_at_headline(const StrategyGroup& g, const std::vector<Headline>& headlines) {
  std::string cap;
  for (const auto& h : headlines) {
    if (h.strategy != g.strategy) continue;
    const json& r = *h.run;
    std::string one =
        fmt::format("{}: {} of {}", world_label(r), fmt(num(r, "throughput_ok_per_s"), 2), fmt(num(r, "offered_per_s")));
    if (auto ceiling = ceiling_per_s(r))
      one += fmt::format(" (ceiling {})", fmt(ceiling, 2));
    cap += (cap.empty() ? "" : "; ") + one;
  }
  return cap.empty() ? "–" : cap;
}

// The headline runs' mean connection hold, per world ("–" without one).
std::string hold_at_headline(const StrategyGroup& g, const std::vector<Headline>& headlines) {
  std::string hold;
  for (const auto& h : headlines)
    if (h.strategy == g.strategy) hold += (hold.empty() ? "" : "; ") + world_label(*h.run) + ": " + fmt(mean_hold_ms(*h.run));
  return hold.empty() ? "–" : hold;
}

std::string refused_measured(const StrategyGroup& g) {
  double conflicts = 0;
  for (const json* r : g.results) conflicts += num_or(*r, "requests.conflict", 0);
  return fmt(conflicts, 0);
}

}  // namespace

Table comparison_table(const std::vector<json>& views) {
  const auto groups = group_by_strategy(views);
  const auto headlines = headline_runs(views);
  const auto capacity = [&](const StrategyGroup& g) { return capacity_at_headline(g, headlines); };
  const auto hold = [&](const StrategyGroup& g) { return hold_at_headline(g, headlines); };
  // One row per requirement of the seeds' table, one cell per strategy.
  struct Requirement {
    const char* label;
    std::function<std::string(const StrategyGroup&)> cell;
  };
  const std::vector<Requirement> requirements = {
      {"Exclusion of two requests for one key: measured partner violations (all runs)", exclusion_measured},
      {"Clustered / multi-node: measured partner violations in runs with 2+ pods", cluster_measured},
      {"Protects non-existent records: duplicate rewards measured in reward-claim runs", missing_records_measured},
      {"External infrastructure", infrastructure_needed},
      {"Auto clean-up on crash", crash_recovery_measured},
      {"Safe with slow HTTP I/O: measured pool timeouts and failed probes", slow_io_measured},
      {"Throughput at the headline load (ok /s of offered /s, configured units)", capacity},
      {"Connection held per request at the headline load (mean ms)", hold},
      {"Requests refused (409 conflict)", refused_measured},
  };
  Table t;
  t.headers = {"Requirement"};
  for (const auto& g : groups) t.headers.push_back(g.strategy);
  t.numeric.assign(t.headers.size(), false);
  for (const auto& [label, cell] : requirements) {
    std::vector<std::string> row = {label};
    for (const auto& g : groups) row.push_back(cell(g));
    t.rows.push_back(std::move(row));
  }
  return t;
}

Table violation_details_table(const std::vector<json>& views, std::size_t limit) {
  Table t;
  t.headers = {"run", "strategy", "kind", "subject", "detail", "requests"};
  t.numeric.assign(t.headers.size(), false);
  for (const auto& r : views) {
    const json* details = find(r, "partner.details");
    if (details == nullptr || !details->is_array()) continue;
    for (const auto& d : *details) {
      if (t.rows.size() >= limit) return t;
      std::string ids;
      if (d.contains("request_ids") && d["request_ids"].is_array())
        for (const auto& id : d["request_ids"]) ids += (ids.empty() ? "" : ", ") + str(id, "");
      std::string kind = str(d, "kind");
      if (is_count_not_violation(kind)) kind += " (note)";
      t.rows.push_back({std::to_string(run_number(views, &r)), str(r, "strategy"), kind, str(d, "subject"),
                        str(d, "detail"), ids});
    }
  }
  return t;
}

Table runs_table(const std::vector<json>& views) {
  Table t;
  t.headers = {"run", "strategy", "world", "scenario", "seed", "offered /s", "duration s", "requests", "time scale",
               "lockbench", "settings"};
  t.numeric = {false, false, false, false, true, true, true, true, true, false, false};
  for (const auto& r : views) {
    std::string settings;
    if (const json* s = find(r, "settings"); s != nullptr && s->is_object())
      for (const auto& [k, v] : s->items())
        settings += (settings.empty() ? "" : ", ") + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
    std::string version = str(r, "provenance.lockbench_version", "–");
    if (auto commit = str(r, "provenance.git_commit"); !commit.empty()) version += " (" + commit + ")";
    t.rows.push_back({std::to_string(run_number(views, &r)), str(r, "strategy"), str(r, "world"),
                      str(r, "scenario"), str(r, "seed"), fmt(num(r, "offered_per_s")), fmt(num(r, "duration_s"), 0),
                      count(r, "requests.total"), fmt::format("{:g}", num_or(r, "time_scale", 1)), version, settings});
  }
  return t;
}

std::string scope_line(const std::vector<json>& views) {
  if (views.empty()) return "";
  std::string line;
  if (uniform(views, "world")) line += "world `" + str(views.front(), "world") + "`";
  if (uniform(views, "scenario"))
    line += (line.empty() ? "" : ", ") + std::string("scenario `") + str(views.front(), "scenario") + "`";
  return line.empty() ? "" : "All runs: " + line + ".";
}

std::string time_scale_note(const std::vector<json>& views) {
  for (const auto& r : views) {
    const auto scale = num(r, "time_scale");
    if (scale && *scale != 1.0)
      return "Some runs were time-scaled (world \"real x0.1\" and the like): every configured duration was "
             "multiplied by the scale. Every rate, time and duration in this report is in configured units "
             "(measured rates times the scale, measured times divided by it), so a time-scaled run sits beside an "
             "unscaled one at the load it was configured for; summary.csv keeps the measured values.";
  }
  return "";
}

std::string markdown_inline_to_html(const std::string& text) {
  std::string out;
  bool code = false, bold = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '`') out += (code = !code) ? "<code>" : "</code>";
    else if (c == '*' && i + 1 < text.size() && text[i + 1] == '*' && !code) {
      out += (bold = !bold) ? "<b>" : "</b>";
      ++i;
    } else out += html_escape(std::string_view(&text[i], 1));
  }
  return out;
}

}  // namespace lockbench::report::detail
