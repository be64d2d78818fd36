// plan's text, JSON and properties diff (plan/render.hpp).
#include "plan/render.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include <fmt/format.h>

#include "strategies/registry.hpp"

namespace lockbench::plan {

namespace {

std::string ms_cell(double ms) {
  if (!std::isfinite(ms)) return "-";
  return ms >= 1000 ? fmt::format("{:.2f} s", ms / 1000) : fmt::format("{:.0f} ms", ms);
}

// min..max of the seeds' p99 (one value for one seed).
std::string range_text(const std::vector<double>& v) {
  if (v.empty()) return "-";
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return v.size() == 1 || *lo == *hi ? ms_cell(*lo) : ms_cell(*lo) + " .. " + ms_cell(*hi);
}

// The seeds' p99: their range, and with two or more the mean's 95 % interval (core/stats).
std::string p99_text(const Evidence& e) {
  std::string out = range_text(e.p99_ms);
  const auto s = p99_summary(e);
  if (s && s->n >= 2)
    out += fmt::format(" (mean {}, 95 % interval {} .. {})", ms_cell(s->mean), ms_cell(s->ci95_low), ms_cell(s->ci95_high));
  return out;
}

std::string evidence_text(const Evidence& e, const char* what) {
  std::string out = fmt::format("    {}: pool {} at {:.2f}/s, {} seed(s): p99 {}{}", what, e.settings.maximum_pool_size,
                                e.settings.rate_per_s, e.run_lines.size(), p99_text(e),
                                e.met ? ", meets the targets" : ", breaks: ");
  if (!e.met)
    for (std::size_t i = 0; i < e.broken.size() && i < 3; ++i) out += (i ? "; " : "") + e.broken[i];
  if (!e.recovery_ms.empty()) out += ", recovery " + range_text(e.recovery_ms);
  out += "\n";
  for (const auto& line : e.run_lines) out += "      " + line + "\n";
  return out;
}

struct Key {
  const char* setting;
  const char* spring;  // Spring's usual key when the file has none
  bool millis;         // written as a number of milliseconds (Hikari, Feign)
};
constexpr Key kKeys[] = {
    {"strategy", "lockbench.strategy", false},
    {"maximum-pool-size", "spring.datasource.hikari.maximum-pool-size", false},
    {"connection-timeout", "spring.datasource.hikari.connection-timeout", true},
    {"partner-read-timeout", "spring.cloud.openfeign.client.config.default.read-timeout", true},
    {"partner-max-attempts", "resilience4j.retry.instances.partner.max-attempts", false},
    {"lease-ttl", "lockbench.lease-ttl", false},
    {"max-threads", "server.tomcat.threads.max", false},
};

std::string value_text(Duration d, bool millis) {
  return millis ? std::to_string(std::llround(to_ms(d))) : format_duration(d);
}

std::string esc(const std::string& t) {
  std::string out;
  for (char c : t) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else if (c == '"') out += "&quot;";
    else out += c;
  }
  return out;
}

std::string evidence_html(const Evidence& e, const char* what) {
  if (e.run_lines.empty()) return "";
  std::string out = fmt::format("<p><b>{}</b>: pool {} at {:.2f}/s, {} seed(s), p99 {}: {}</p>\n<pre>", what,
                                e.settings.maximum_pool_size, e.settings.rate_per_s, e.run_lines.size(),
                                esc(p99_text(e)), e.met ? "meets the targets" : "breaks " + esc(e.broken.empty() ? "" : e.broken[0]));
  for (const auto& line : e.run_lines) out += esc(line) + "\n";
  return out + "</pre>\n";
}

}  // namespace

bool meets(const Confirmed& c) { return c.feasible && (c.real.run_lines.empty() || c.real.met); }

bool confirmed_in_real_world(const PlanResult& p) {
  return std::any_of(p.confirmed.begin(), p.confirmed.end(), [](const Confirmed& c) { return !c.real.run_lines.empty(); });
}

int recommended(const PlanResult& p) {
  int best = -1;
  for (std::size_t i = 0; i < p.confirmed.size(); ++i) {
    if (!meets(p.confirmed[i])) continue;
    if (best < 0) {
      best = static_cast<int>(i);
      continue;
    }
    const auto& a = p.confirmed[i];
    const auto& b = p.confirmed[static_cast<std::size_t>(best)];
    const bool higher = a.headroom_per_s > b.headroom_per_s * 1.0001;
    const bool tie = std::abs(a.headroom_per_s - b.headroom_per_s) <= b.headroom_per_s * 1e-4;
    if (higher || (tie && a.strategy == p.current)) best = static_cast<int>(i);
  }
  return best;
}

int closest(const PlanResult& p) {
  int best = -1;
  std::size_t fewest = 0;
  for (std::size_t i = 0; i < p.confirmed.size(); ++i) {
    const auto& e = p.confirmed[i].chosen;
    if (e.run_lines.empty()) continue;
    if (best < 0 || e.broken.size() < fewest) best = static_cast<int>(i), fewest = e.broken.size();
  }
  return best;
}

int exit_code(const PlanResult& p) { return recommended(p) >= 0 ? 0 : 1; }

std::string properties_diff(const PlanResult& p, int index, const std::map<std::string, std::string>& key_of,
                            const std::string& from) {
  if (index < 0) return "";
  const auto& rec = p.paper[static_cast<std::size_t>(index)].settings;
  const Evidence& chosen = p.confirmed[static_cast<std::size_t>(index)].chosen;
  const Settings& was = p.base;
  std::ostringstream out;
  out << "--- " << from << "\n+++ " << from << " (lockbench plan: " << p.paper[static_cast<std::size_t>(index)].strategy
      << ")\n";
  for (const Key& k : kKeys) {
    std::string before, after;
    const std::string name = k.setting;
    if (name == "strategy") before = p.current, after = p.paper[static_cast<std::size_t>(index)].strategy;
    if (name == "maximum-pool-size")
      before = std::to_string(was.maximum_pool_size), after = std::to_string(chosen.settings.maximum_pool_size);
    if (name == "connection-timeout")
      before = value_text(was.connection_timeout, k.millis), after = value_text(rec.connection_timeout, k.millis);
    if (name == "partner-read-timeout")
      before = value_text(was.partner_read_timeout, k.millis), after = value_text(rec.read_timeout, k.millis);
    if (name == "partner-max-attempts")
      before = std::to_string(was.partner_max_attempts), after = std::to_string(rec.attempts);
    if (name == "lease-ttl") {
      if (rec.lease_ttl.count() == 0) continue;
      before = value_text(was.lease_ttl, false), after = value_text(rec.lease_ttl, false);
    }
    if (name == "max-threads") before = std::to_string(was.max_threads), after = std::to_string(rec.max_threads);
    if (before == after) continue;
    const auto it = key_of.find(name);
    const std::string key = it != key_of.end() ? it->second : k.spring;
    if (it != key_of.end() && !before.empty()) out << "-" << key << "=" << before << "\n";
    out << "+" << key << "=" << after << "\n";
  }
  return out.str();
}

std::string render_text(const PlanResult& p) {
  std::ostringstream out;
  const Settings& b = p.base;
  out << fmt::format("plan: {} at {:.2f}/s over {} pod(s), partner {}, {} seed(s) x {} per point in the simulator\n",
                     b.scenario, b.rate_per_s, b.pods, b.partner_latency.to_string(), p.seeds,
                     format_duration(b.duration));
  out << "targets: a point fails when any of " << p.fail_on << " holds"
      << (p.recovery_ms_max > 0 ? ", or recovery after a crash takes longer than " +
                                      format_duration(from_ms(p.recovery_ms_max))
                                : std::string())
      << "\n";
  for (const auto& line : p.inputs) out << "input: " << line << "\n";
  const bool real = confirmed_in_real_world(p);
  out << "\n"
      << fmt::format("{:<26} {:<11} {:<11} {:>5} {:>9} {:>13} {:>9} {:>8} {:>11}{}\n", "strategy", "paper", "simulator",
                     "pool", "conn.tmo", "read x tries", "lease TTL", "threads", "headroom/s", real ? "  real" : "");
  for (std::size_t i = 0; i < p.paper.size(); ++i) {
    const auto& pv = p.paper[i];
    const auto& c = p.confirmed[i];
    const auto& r = pv.settings;
    const std::string real_cell = !real ? "" : c.real.run_lines.empty() ? "  -" : c.real.met ? "  meets" : "  fails";
    out << fmt::format("{:<26} {:<11} {:<11} {:>5} {:>9} {:>13} {:>9} {:>8} {:>11}{}\n", pv.strategy,
                       pv.feasible ? "meets" : "fails", c.feasible ? "meets" : "fails",
                       c.chosen.run_lines.empty() ? r.pool_size : c.chosen.settings.maximum_pool_size,
                       format_duration(r.connection_timeout),
                       format_duration(r.read_timeout) + " x " + std::to_string(r.attempts),
                       r.lease_ttl.count() > 0 ? format_duration(r.lease_ttl) : "-", r.max_threads,
                       c.feasible ? fmt::format("{}{:.2f}", c.headroom_at_least ? ">=" : "", c.headroom_per_s)
                                  : std::string("-"),
                       real_cell);
  }
  for (std::size_t i = 0; i < p.paper.size(); ++i) {
    const auto& pv = p.paper[i];
    const auto& c = p.confirmed[i];
    out << "\n" << pv.strategy << ": "
        << (meets(c)      ? "meets the targets"
            : c.feasible ? "meets the targets in the simulator, not in the real world"
                         : "does not meet the targets")
        << "\n";
    for (const auto& w : pv.why_not) out << "  paper: fails " << w << "\n";
    if (c.no_exclusion && c.chosen.met)
      out << "  the simulator saw no violation in these runs; that proves nothing for a lock that does not exclude\n";
    for (const auto& w : pv.why) out << "  why: " << w << "\n";
    if (!c.chosen.run_lines.empty()) out << evidence_text(c.chosen, c.feasible ? "chosen" : "closest tried");
    if (!c.below.run_lines.empty()) out << evidence_text(c.below, "one connection fewer");
    if (!c.headroom.run_lines.empty())
      out << evidence_text(c.headroom, c.headroom.met ? "headroom" : "headroom (broken on a seed: only the planned rate holds)");
    if (!c.slow_partner.run_lines.empty())
      out << evidence_text(c.slow_partner, "every call at the partner's p99.9, one hot key");
    if (!c.crash.run_lines.empty()) out << evidence_text(c.crash, "crash at half time");
    if (!c.real.run_lines.empty())
      out << evidence_text(c.real, fmt::format("real world, time scale {:g}", c.real_time_scale).c_str());
  }
  const int rec = recommended(p);
  out << "\n";
  if (rec >= 0) {
    const auto& pv = p.paper[static_cast<std::size_t>(rec)];
    const auto& c = p.confirmed[static_cast<std::size_t>(rec)];
    out << fmt::format("recommended: {} with maximumPoolSize {}, connectionTimeout {}, read timeout {} x {} attempts{}, "
                       "Tomcat threads {}; headroom {}{:.2f}/s\n",
                       pv.strategy, c.chosen.settings.maximum_pool_size, format_duration(pv.settings.connection_timeout),
                       format_duration(pv.settings.read_timeout), pv.settings.attempts,
                       pv.settings.lease_ttl.count() > 0 ? ", lease TTL " + format_duration(pv.settings.lease_ttl) : "",
                       pv.settings.max_threads, c.headroom_at_least ? ">= " : "", c.headroom_per_s);
  } else {
    out << "no strategy meets the targets";
    const int near = closest(p);
    if (near >= 0) {
      const auto& e = p.confirmed[static_cast<std::size_t>(near)].chosen;
      out << "; the closest point: " << p.paper[static_cast<std::size_t>(near)].strategy << " with pool "
          << e.settings.maximum_pool_size << ", p99 " << range_text(e.p99_ms) << ", which breaks only: ";
      for (std::size_t i = 0; i < e.broken.size(); ++i) out << (i ? "; " : "") << e.broken[i];
    }
    out << "\n";
  }
  out << fmt::format("plan took {:.1f} s\n", p.elapsed_s);
  return out.str();
}

nlohmann::json render_json(const PlanResult& p) {
  nlohmann::json strategies = nlohmann::json::array();
  for (std::size_t i = 0; i < p.paper.size(); ++i)
    strategies.push_back({{"strategy", p.paper[i].strategy},
                          {"paper", to_json(p.paper[i])},
                          {"simulator", to_json(p.confirmed[i])}});
  const int rec = recommended(p);
  const int near = rec < 0 ? closest(p) : -1;
  return {{"schema", "lockbench.plan/1"},
          {"scenario", p.base.scenario},
          {"rate_per_s", p.base.rate_per_s},
          {"margin", p.margin},
          {"given_rate_per_s", p.given_rate_per_s > 0 ? p.given_rate_per_s : p.base.rate_per_s},
          {"real_world", confirmed_in_real_world(p)},
          {"pods", p.base.pods},
          {"partner_latency", p.base.partner_latency.to_string()},
          {"current_strategy", p.current.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.current)},
          {"targets", {{"fail_on", p.fail_on},
                       {"recovery_ms_max", p.recovery_ms_max > 0 ? nlohmann::json(p.recovery_ms_max) : nlohmann::json(nullptr)}}},
          {"seeds", p.seeds},
          {"duration_s", to_s(p.base.duration)},
          {"inputs", p.inputs},
          {"strategies", strategies},
          {"recommended", rec >= 0 ? nlohmann::json(p.paper[static_cast<std::size_t>(rec)].strategy) : nlohmann::json(nullptr)},
          {"closest", near >= 0 ? nlohmann::json(p.paper[static_cast<std::size_t>(near)].strategy) : nlohmann::json(nullptr)},
          {"elapsed_s", p.elapsed_s}};
}

std::string render_html(const PlanResult& p, const std::string& diff, const std::string& svg,
                        const std::string& svg_missing) {
  std::ostringstream out;
  const Settings& b = p.base;
  out << "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>lockbench plan</title>\n"
      << "<style>body{font-family:sans-serif;max-width:70em;margin:2em auto}table{border-collapse:collapse}"
         "td,th{border:1px solid #ccc;padding:.2em .5em;text-align:right}td:first-child{text-align:left}"
         "pre{background:#f6f6f6;padding:.5em;overflow-x:auto}.meets{color:#070}.fails{color:#a00}</style>"
         "</head><body>\n";
  out << "<h1>lockbench plan</h1>\n<p>"
      << esc(fmt::format("{} at {:.2f}/s over {} pod(s), partner {}; {} seed(s) x {} per point in the simulator.",
                         b.scenario, b.rate_per_s, b.pods, b.partner_latency.to_string(), p.seeds,
                         format_duration(b.duration)))
      << "</p>\n<p>Targets: a point fails when any of <code>" << esc(p.fail_on) << "</code> holds"
      << (p.recovery_ms_max > 0 ? esc(", or recovery after a crash takes longer than " +
                                      format_duration(from_ms(p.recovery_ms_max)))
                                : std::string())
      << ".</p>\n";
  for (const auto& line : p.inputs) out << "<p>Input: " << esc(line) << "</p>\n";
  const bool real = confirmed_in_real_world(p);
  out << "<table><tr><th>strategy</th><th>paper</th><th>simulator</th><th>pool</th><th>connectionTimeout</th>"
         "<th>read timeout x attempts</th><th>lease TTL</th><th>threads</th><th>headroom/s</th>"
      << (real ? "<th>real world</th>" : "") << "</tr>\n";
  for (std::size_t i = 0; i < p.paper.size(); ++i) {
    const auto& pv = p.paper[i];
    const auto& c = p.confirmed[i];
    const auto& r = pv.settings;
    const auto verdict = [](bool ok) {
      return std::string("<td class=\"") + (ok ? "meets\">meets" : "fails\">fails") + "</td>";
    };
    out << "<tr><td>" << esc(pv.strategy) << "</td>" << verdict(pv.feasible) << verdict(c.feasible) << "<td>"
        << (c.chosen.run_lines.empty() ? r.pool_size : c.chosen.settings.maximum_pool_size) << "</td><td>"
        << format_duration(r.connection_timeout) << "</td><td>" << format_duration(r.read_timeout) << " x "
        << r.attempts << "</td><td>" << (r.lease_ttl.count() > 0 ? format_duration(r.lease_ttl) : "-") << "</td><td>"
        << r.max_threads << "</td><td>"
        << (c.feasible ? fmt::format("{}{:.2f}", c.headroom_at_least ? "&ge;" : "", c.headroom_per_s) : "-")
        << "</td>" << (!real ? "" : c.real.run_lines.empty() ? "<td>-</td>" : verdict(c.real.met)) << "</tr>\n";
  }
  out << "</table>\n";
  const int rec = recommended(p);
  if (rec >= 0) {
    const auto& pv = p.paper[static_cast<std::size_t>(rec)];
    out << "<h2>Recommended: " << esc(pv.strategy) << "</h2>\n";
  } else {
    out << "<h2>No strategy meets the targets</h2>\n";
  }
  if (!diff.empty()) out << "<pre>" << esc(diff) << "</pre>\n";
  out << "<h2>The safe envelope</h2>\n";
  if (!svg.empty())
    out << "<p>Offered rate against the partner's p99: each strategy meets the targets (on paper, with the "
           "settings the simulator confirmed) below its line.</p>\n"
        << svg.substr(std::min(svg.find("<svg"), svg.size())) << "\n";
  else
    out << "<p>Not drawn: " << esc(svg_missing) << "</p>\n";
  out << "<h2>Per strategy</h2>\n";
  for (std::size_t i = 0; i < p.paper.size(); ++i) {
    const auto& pv = p.paper[i];
    const auto& c = p.confirmed[i];
    out << "<h3>" << esc(pv.strategy) << ": "
        << (meets(c)      ? "meets the targets"
            : c.feasible ? "meets the targets in the simulator, not in the real world"
                         : "does not meet the targets")
        << "</h3>\n<ul>\n";
    for (const auto& w : pv.why_not) out << "<li>paper: fails " << esc(w) << "</li>\n";
    for (const auto& w : pv.why) out << "<li>" << esc(w) << "</li>\n";
    out << "</ul>\n"
        << evidence_html(c.chosen, c.feasible ? "chosen" : "closest tried")
        << evidence_html(c.below, "one connection fewer") << evidence_html(c.headroom, "headroom")
        << evidence_html(c.slow_partner, "every call at the partner's p99.9, one hot key")
        << evidence_html(c.crash, "crash at half time")
        << evidence_html(c.real, fmt::format("real world, time scale {:g}", c.real_time_scale).c_str());
  }
  out << "</body></html>\n";
  return out.str();
}

}  // namespace lockbench::plan
