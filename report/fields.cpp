#include "report/fields.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "fake_partner/model/check.hpp"

namespace lockbench::report::detail {

const std::vector<std::string>& required_fields() {
  // Only the contract of docs/reference/result.md is required; the extras (timeline, trace,
  // time_split_ms, faults...) are optional and each consumer says when absent.
  static const std::vector<std::string> fields = {
      "schema", "world", "scenario", "strategy", "seed", "settings", "offered_per_s", "duration_s",
      "requests.total", "requests.ok", "requests.conflict", "requests.pool_timeout", "requests.rejected",
      "requests.error", "throughput_ok_per_s", "latency_ms.p50", "latency_ms.p90", "latency_ms.p99",
      "latency_ms.p999", "latency_ms.max", "pool.size", "pool.active_max", "pool.pending_max",
      "pool.utilization", "pool.wait_ms.p50", "pool.wait_ms.p99", "pool.wait_ms.max", "pool.hold_ms.p50",
      "pool.hold_ms.p99", "pool.hold_ms.max", "pool.timeouts", "pool.leaks", "probe.total", "probe.failed",
      "locks.acquired", "locks.denied", "locks.lease_steals", "locks.version_conflicts",
      "locks.unlock_failures", "locks.leaked", "partner.calls", "partner.violations",
      "prediction.littles_law_ceiling_per_s"};
  return fields;
}

const std::vector<std::string>& contract_violation_kinds() {
  // The kinds every switch-primary run can show; other kinds (new scenarios,
  // new checks) get a column when some run counted them.
  static const std::vector<std::string> kinds = {"overlap_person", "flow_interleaving", "person_split",
                                                 "lost_promotion"};
  return kinds;
}

const json* find(const json& j, std::string_view dotted) {
  const json* at = &j;
  while (!dotted.empty()) {
    const auto dot = dotted.find('.');
    const std::string key(dotted.substr(0, dot));
    if (!at->is_object()) return nullptr;
    const auto it = at->find(key);
    if (it == at->end()) return nullptr;
    at = &*it;
    dotted = dot == std::string_view::npos ? std::string_view{} : dotted.substr(dot + 1);
  }
  return at;
}

std::optional<double> num(const json& j, std::string_view dotted) {
  const json* v = find(j, dotted);
  if (v == nullptr || !v->is_number()) return std::nullopt;
  return v->get<double>();
}

double num_or(const json& j, std::string_view dotted, double fallback) {
  return num(j, dotted).value_or(fallback);
}

std::string str(const json& j, std::string_view dotted, std::string fallback) {
  const json* v = find(j, dotted);
  if (v == nullptr || v->is_null()) return fallback;
  if (v->is_string()) return v->get<std::string>();
  return v->dump();
}

std::string fmt(std::optional<double> v, int decimals) {
  if (!v || !std::isfinite(*v)) return "–";
  const double x = *v;
  // Integers print without decimals: counts stay counts.
  if (x == std::round(x) && std::fabs(x) < 1e15) return fmt::format("{:.0f}", x);
  return fmt::format("{:.{}f}", x, decimals);
}

std::vector<std::string> violation_kinds(const std::vector<json>& results) {
  std::vector<std::string> kinds = contract_violation_kinds();
  std::set<std::string> extra;
  for (const auto& r : results) {
    const json* v = find(r, "partner.violations");
    if (v == nullptr || !v->is_object()) continue;
    for (const auto& [k, _] : v->items())
      if (std::find(kinds.begin(), kinds.end(), k) == kinds.end()) extra.insert(k);
  }
  kinds.insert(kinds.end(), extra.begin(), extra.end());
  return kinds;
}

KindClass classify_kind(std::string_view kind) {
  // docs/reference/partner-api.md: an ambiguous commit is counted, not a violation; a stale
  // token refused is the fencing doing its job; a request overlapping its own
  // earlier attempt is the client's retry policy, not a lock failure; nor is
  // a call overlapping one its client had abandoned (overlap_abandoned: the fix
  // is an idempotency key or fencing, see abandoned_call_fix()).
  // Effects on one side only: the partner did it and the service never
  // recorded it (or the service recorded a payment the partner never took).
  // abandoned_effect: an effect applied after its client gave up left the
  // person corrupted; the service rolled back and has no record of it.
  static const std::set<std::string, std::less<>> orphans = {"orphan_charge", "db_partner_divergence",
                                                             "paid_without_charge", "abandoned_effect"};
  if (!partner::is_violation_kind(kind)) return KindClass::note;  // the oracle's list (fake_partner/model/check.hpp)
  if (orphans.count(kind)) return KindClass::orphan;
  return KindClass::exclusion;
}

bool is_count_not_violation(std::string_view kind) { return classify_kind(kind) == KindClass::note; }

std::string abandoned_call_fix(const json& result) {
  const double n = num_or(result, "partner.violations.overlap_abandoned", 0);
  const double effects = num_or(result, "partner.violations.abandoned_effect", 0);
  if (n <= 0 && effects <= 0) return "";
  std::string text = fmt::format(
      "{} call(s) arrived while another request's call was still running at the partner after its client had "
      "given up on it (read timeout shorter than the partner's work): the lock held",
      fmt(n, 0));
  if (effects > 0)
    text += fmt::format(", and {} person(s) were left corrupted by effects applied after their client gave up "
                        "(abandoned_effect, among the orphan effects)",
                        fmt(effects, 0));
  return text + "; fix with an idempotency key or a fencing token, not another lock";
}

Violations violations_of(const json& result) {
  Violations v;
  const json* counts = find(result, "partner.violations");
  if (counts == nullptr || !counts->is_object()) return v;
  for (const auto& [kind, n] : counts->items()) {
    if (!n.is_number()) continue;
    const double x = n.get<double>();
    if (x <= 0) continue;
    switch (classify_kind(kind)) {
      case KindClass::note: v.notes += x, v.note_kinds.emplace_back(kind, x); continue;
      case KindClass::orphan: v.orphan += x; break;
      case KindClass::exclusion: v.exclusion += x; break;
    }
    v.total += x;
    v.kinds.emplace_back(kind, x);
  }
  const auto largest = [](const auto& a, const auto& b) { return a.second > b.second; };
  std::stable_sort(v.kinds.begin(), v.kinds.end(), largest);
  std::stable_sort(v.note_kinds.begin(), v.note_kinds.end(), largest);
  return v;
}

double violations_total(const json& result) { return violations_of(result).total; }

std::string kinds_text(const std::vector<std::pair<std::string, double>>& kinds, std::size_t limit) {
  std::string out;
  for (std::size_t i = 0; i < kinds.size() && i < limit; ++i)
    out += (i ? ", " : "") + kinds[i].first + " " + fmt(kinds[i].second, 0);
  if (kinds.size() > limit) out += fmt::format(", +{} more", kinds.size() - limit);
  return out;
}

namespace {

void scale_at(json& j, std::string_view dotted, double factor) {
  json* at = const_cast<json*>(find(j, dotted));
  if (at != nullptr && at->is_number()) *at = at->get<double>() * factor;
}

void scale_all(json& j, std::string_view dotted, double factor) {
  json* at = const_cast<json*>(find(j, dotted));
  if (at == nullptr || !at->is_object()) return;
  for (auto& [_, v] : at->items())
    if (v.is_number()) v = v.get<double>() * factor;
}

}  // namespace

json configured_view(const json& result) {
  json v = result;
  const double f = num_or(result, "time_scale", 1.0);
  if (f == 1.0 || !(f > 0)) return v;
  for (const char* rate : {"offered_per_s", "throughput_ok_per_s", "prediction.littles_law_ceiling_per_s",
                           "prediction.configured_ceiling_per_s"})
    scale_at(v, rate, f);
  for (const char* time : {"duration_s", "prediction.mean_hold_ms", "prediction.configured_hold_ms",
                           "prediction.erlang_c_wait_ms", "faults.recovery_ms"})
    scale_at(v, time, 1 / f);
  for (const char* block : {"latency_ms", "latency_ok_ms", "pool.wait_ms", "pool.hold_ms", "time_split_ms"})
    scale_all(v, block, 1 / f);
  if (json* tl = const_cast<json*>(find(v, "timeline")); tl != nullptr && tl->is_array())
    for (auto& row : *tl) {
      scale_at(row, "t_s", 1 / f);
      scale_at(row, "dt_s", 1 / f);
    }
  // A real run's pods.events are measured: [t_s, pod, what] in configured seconds, as the timeline.
  if (json* evs = const_cast<json*>(find(v, "pods.events")); evs != nullptr && evs->is_array())
    for (auto& e : *evs)
      if (e.is_array() && !e.empty() && e[0].is_number()) e[0] = e[0].get<double>() / f;
  if (json* evs = const_cast<json*>(find(v, "trace.events")); evs != nullptr && evs->is_array())
    for (auto& e : *evs) {
      scale_at(e, "start_ms", 1 / f);
      scale_at(e, "end_ms", 1 / f);
    }
  v["units"] = "configured";
  return v;
}

std::vector<json> configured_views(const std::vector<json>& results) {
  std::vector<json> out;
  out.reserve(results.size());
  for (const auto& r : results) out.push_back(configured_view(r));
  return out;
}

bool has_faults(const json& result) {
  for (const char* key : {"settings.crash-at", "settings.pause-at"})
    if (const json* v = find(result, key); v != nullptr && !v->is_null()) return true;
  const json* f = find(result, "faults");
  if (f == nullptr || f->is_null()) return false;
  if (!f->is_object()) return true;
  // A faults block whose every entry is null or 0 injected nothing.
  for (const auto& [k, v] : f->items()) {
    if (k == "recovery_ms") continue;
    if (v.is_number() && v.get<double>() != 0) return true;
    if (v.is_string() && !v.get<std::string>().empty() && v.get<std::string>() != "0") return true;
  }
  return false;
}

std::optional<bool> strategy_fact(const json& result, std::string_view fact) {
  const json* info = find(result, "strategy_info");
  if (info == nullptr || !info->is_object()) return std::nullopt;
  const auto it = info->find(std::string(fact));
  if (it == info->end() || !it->is_boolean()) return std::nullopt;
  return it->get<bool>();
}

bool holds_connection(const json& result) {
  if (auto fact = strategy_fact(result, "holds_connection_during_call")) return *fact;
  return num(result, "prediction.configured_ceiling_per_s").has_value();
}

std::optional<double> ceiling_per_s(const json& result) {
  if (!holds_connection(result)) return std::nullopt;
  return num(result, "prediction.littles_law_ceiling_per_s");
}

std::vector<StrategyGroup> group_by_strategy(const std::vector<json>& results) {
  std::vector<StrategyGroup> groups;
  for (const auto& r : results) {
    const std::string s = str(r, "strategy", "?");
    auto it = std::find_if(groups.begin(), groups.end(), [&](const StrategyGroup& g) { return g.strategy == s; });
    if (it == groups.end()) {
      groups.push_back({s, {}});
      it = groups.end() - 1;
    }
    it->results.push_back(&r);
  }
  for (auto& g : groups)
    std::stable_sort(g.results.begin(), g.results.end(), [](const json* a, const json* b) {
      return num_or(*a, "offered_per_s", 0) < num_or(*b, "offered_per_s", 0);
    });
  return groups;
}

std::vector<Headline> headline_runs(const std::vector<json>& views) {
  std::vector<std::string> worlds;
  for (const auto& r : views) {
    const std::string w = str(r, "world", "?") + "\n" + str(r, "scenario", "?");
    if (std::find(worlds.begin(), worlds.end(), w) == worlds.end()) worlds.push_back(w);
  }
  const auto groups = group_by_strategy(views);
  std::vector<Headline> out;
  for (const auto& w : worlds) {
    const auto in_world = [&](const json& r) { return str(r, "world", "?") + "\n" + str(r, "scenario", "?") == w; };
    std::optional<double> headline;
    for (const auto& r : views)
      if (in_world(r) && !has_faults(r))
        headline = std::max(headline.value_or(0), num_or(r, "offered_per_s", 0));
    for (const auto& g : groups) {
      const json* best = nullptr;
      bool at_headline = false;
      for (const json* r : g.results) {
        if (!in_world(*r)) continue;
        const bool here = headline && !has_faults(*r) && std::fabs(num_or(*r, "offered_per_s", 0) - *headline) <= 1e-9 * *headline;
        const auto better = [&] {
          if (best == nullptr) return true;
          if (here != at_headline) return here;
          if (has_faults(*best) != has_faults(*r)) return !has_faults(*r);
          const double a = num_or(*r, "offered_per_s", 0), b = num_or(*best, "offered_per_s", 0);
          if (a != b) return a > b;
          return num_or(*r, "requests.total", 0) > num_or(*best, "requests.total", 0);
        };
        if (better()) best = r, at_headline = here;
      }
      if (best == nullptr) continue;
      out.push_back({str(*best, "world", "?"), str(*best, "scenario", "?"), g.strategy, best, !at_headline});
    }
  }
  return out;
}

std::string world_label(const json& result) {
  std::string label = str(result, "world", "?");
  const double f = num_or(result, "time_scale", 1.0);
  if (f != 1.0) label += fmt::format(" x{:g}", f);
  const double pods = num_or(result, "settings.pods", 1);
  if (pods > 1) label += fmt::format(", {} pods", fmt(pods, 0));
  return label;
}

std::string duration_text(std::optional<double> ms) {
  if (!ms || !std::isfinite(*ms)) return "–";
  if (std::fabs(*ms) >= 120000) return fmt::format("{:.1f} min", *ms / 60000);
  if (std::fabs(*ms) >= 1000) return fmt::format("{:.1f} s", *ms / 1000);
  if (std::fabs(*ms) >= 10) return fmt::format("{:.0f} ms", *ms);
  return fmt::format("{:.1f} ms", *ms);
}

std::string base_strategy(std::string_view strategy) {
  return std::string(strategy.substr(0, strategy.find(':')));
}

std::string md_cell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += "\\|";
    else if (c == '\n' || c == '\r') out += ' ';
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else out += c;
  }
  return out;
}

std::string html_escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace lockbench::report::detail
