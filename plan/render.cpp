// plan's text, JSON and properties diff (plan/render.hpp).
#include "plan/render.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
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
  if (e.stopped_early > 0)
    out += fmt::format(" ({} of {} seed(s) stopped once a target broke: {} of virtual time run in all)", e.stopped_early,
                       e.run_lines.size(), format_duration(from_s(e.exposure_s)));
  out += "\n";
  for (const auto& line : e.run_lines) out += "      " + line + "\n";
  return out;
}

struct Key {
  const char* setting;
  const char* spring;  // Spring's usual key when the file has none
  bool millis;         // written as a number of milliseconds (Hikari, Feign)
};
// Only real Spring Boot, HikariCP, Tomcat, Feign and resilience4j keys.
constexpr Key kKeys[] = {
    {"maximum-pool-size", "spring.datasource.hikari.maximum-pool-size", false},
    {"connection-timeout", "spring.datasource.hikari.connection-timeout", true},
    {"partner-read-timeout", "spring.cloud.openfeign.client.config.default.read-timeout", true},
    {"partner-max-attempts", "resilience4j.retry.instances.partner.max-attempts", false},
    {"max-threads", "server.tomcat.threads.max", false},
};

std::string value_text(Duration d, bool millis) {
  return millis ? std::to_string(std::llround(to_ms(d))) : format_duration(d);
}

std::string trim(const std::string& t) {
  const auto a = t.find_first_not_of(" \t\r");
  if (a == std::string::npos) return "";
  return t.substr(a, t.find_last_not_of(" \t\r") - a + 1);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::string line;
  std::istringstream in(text);
  while (std::getline(in, line)) out.push_back(line);
  return out;
}

// A YAML line's mapping key and whether a scalar follows it (block style only; "" for anything else).
struct YamlLine {
  int indent = 0;
  std::string key;
  bool scalar = false;
  std::size_t value_at = 0, value_end = 0;  // the scalar's text in the line
};

YamlLine yaml_line(const std::string& line) {
  YamlLine y;
  const auto first = line.find_first_not_of(' ');
  if (first == std::string::npos || line[first] == '#' || line[first] == '-') return y;
  const auto colon = line.find(':', first);
  if (colon == std::string::npos || (colon + 1 < line.size() && line[colon + 1] != ' ' && line[colon + 1] != '\t'))
    return y;
  y.indent = static_cast<int>(first);
  y.key = trim(line.substr(first, colon - first));
  const auto v = line.find_first_not_of(" \t", colon + 1);
  if (v != std::string::npos && line[v] != '#') {
    y.scalar = true;
    y.value_at = v;
    auto end = line.find(" #", v);
    if (end == std::string::npos) end = line.size();
    y.value_end = line.find_last_not_of(" \t", end - 1) + 1;
  }
  return y;
}

// Each line's full dotted path ("" for a line that holds no key).
std::vector<std::string> yaml_paths(const std::vector<std::string>& lines, std::vector<YamlLine>& parsed) {
  std::vector<std::pair<int, std::string>> stack;
  std::vector<std::string> paths;
  for (const auto& line : lines) {
    const YamlLine y = yaml_line(line);
    parsed.push_back(y);
    if (y.key.empty()) {
      paths.emplace_back();
      continue;
    }
    while (!stack.empty() && stack.back().first >= y.indent) stack.pop_back();
    const std::string path = stack.empty() ? y.key : stack.back().second + "." + y.key;
    paths.push_back(path);
    if (!y.scalar) stack.emplace_back(y.indent, path);
  }
  return paths;
}

std::string apply_yaml(const std::string& text, const std::vector<ConfigChange>& changes,
                       const std::vector<std::string>& notes) {
  std::vector<std::string> lines = lines_of(text);
  for (const auto& c : changes) {
    std::vector<YamlLine> parsed;
    const std::vector<std::string> paths = yaml_paths(lines, parsed);
    bool done = false;
    for (std::size_t i = 0; i < lines.size() && !done; ++i)
      if (paths[i] == c.key && parsed[i].scalar) {
        lines[i] = lines[i].substr(0, parsed[i].value_at) + c.after + lines[i].substr(parsed[i].value_end);
        done = true;
      }
    if (done) continue;
    // The deepest mapping the key lies under; the rest is added at the end of its block.
    std::size_t parent = lines.size();
    for (std::size_t i = 0; i < lines.size(); ++i)
      if (!parsed[i].key.empty() && !parsed[i].scalar && c.key.rfind(paths[i] + ".", 0) == 0 &&
          (parent == lines.size() || paths[i].size() > paths[parent].size()))
        parent = i;
    std::string rest = c.key;
    int indent = 0;
    std::size_t insert_at = lines.size();
    while (insert_at > 0 && trim(lines[insert_at - 1]).empty()) --insert_at;
    if (parent < lines.size()) {
      rest = c.key.substr(paths[parent].size() + 1);
      indent = parsed[parent].indent + 2;
      std::size_t last = parent;
      bool indent_known = false;
      for (std::size_t i = parent + 1; i < lines.size(); ++i) {
        if (parsed[i].key.empty()) {
          const std::string t = trim(lines[i]);
          if (!t.empty() && t[0] != '#') last = i;  // a list item of the block
          continue;
        }
        if (parsed[i].indent <= parsed[parent].indent) break;
        if (!indent_known) indent = parsed[i].indent, indent_known = true;
        last = i;
      }
      insert_at = last + 1;
    }
    std::vector<std::string> added;
    std::stringstream parts(rest);
    std::string part;
    std::vector<std::string> names;
    while (std::getline(parts, part, '.')) names.push_back(part);
    for (std::size_t k = 0; k < names.size(); ++k)
      added.push_back(std::string(static_cast<std::size_t>(indent + 2 * static_cast<int>(k)), ' ') + names[k] + ":" +
                      (k + 1 == names.size() ? " " + c.after : ""));
    lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(insert_at), added.begin(), added.end());
  }
  for (const auto& n : notes) lines.push_back("# " + n);
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

std::string apply_properties(const std::string& text, const std::vector<ConfigChange>& changes,
                             const std::vector<std::string>& notes) {
  std::vector<std::string> lines = lines_of(text);
  for (const auto& c : changes) {
    bool done = false;
    for (auto& line : lines) {
      const std::string t = trim(line);
      if (t.empty() || t[0] == '#' || t[0] == '!') continue;
      const auto sep = t.find_first_of("=:");
      if (sep == std::string::npos || trim(t.substr(0, sep)) != c.key) continue;
      line = c.key + "=" + c.after;
      done = true;
      break;
    }
    if (!done) lines.push_back(c.key + "=" + c.after);
  }
  for (const auto& n : notes) lines.push_back("# " + n);
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

// A unified diff of two texts (an LCS of their lines; 3 lines of context).
std::string unified_diff(const std::string& name, const std::string& before, const std::string& after) {
  const std::vector<std::string> a = lines_of(before), b = lines_of(after);
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::vector<int>> lcs(n + 1, std::vector<int>(m + 1, 0));
  for (std::size_t i = n; i-- > 0;)
    for (std::size_t j = m; j-- > 0;)
      lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
  struct Op {
    char kind;
    std::size_t i, j;  // positions in a and b before the op
  };
  std::vector<Op> ops;
  std::size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] == b[j]) ops.push_back({' ', i++, j++});
    else if (i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1])) ops.push_back({'-', i++, j});
    else ops.push_back({'+', i, j++});
  }
  std::string out = "--- " + name + "\n+++ " + name + "\n";
  constexpr std::size_t kContext = 3;
  std::size_t k = 0;
  while (k < ops.size()) {
    if (ops[k].kind == ' ') {
      ++k;
      continue;
    }
    std::size_t start = k >= kContext ? k - kContext : 0;
    std::size_t end = k;  // extend while changes are within 2 x context of each other
    for (std::size_t q = k; q < ops.size(); ++q) {
      if (ops[q].kind != ' ') end = q;
      else if (q - end > 2 * kContext) break;
    }
    const std::size_t stop = std::min(ops.size(), end + kContext + 1);
    std::size_t a_len = 0, b_len = 0;
    for (std::size_t q = start; q < stop; ++q) {
      if (ops[q].kind != '+') ++a_len;
      if (ops[q].kind != '-') ++b_len;
    }
    const std::size_t a_from = ops[start].i + (a_len > 0 ? 1 : 0), b_from = ops[start].j + (b_len > 0 ? 1 : 0);
    out += fmt::format("@@ -{},{} +{},{} @@\n", a_from, a_len, b_from, b_len);
    for (std::size_t q = start; q < stop; ++q)
      out += std::string(1, ops[q].kind) + (ops[q].kind == '+' ? b[ops[q].j] : a[ops[q].i]) + "\n";
    k = stop;
  }
  return out;
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

std::vector<ConfigChange> config_changes(const PlanResult& p, int index, const std::map<std::string, std::string>& key_of,
                                         std::vector<std::string>& notes) {
  std::vector<ConfigChange> out;
  if (index < 0) return out;
  const auto at = static_cast<std::size_t>(index);
  const PaperVerdict& pv = p.paper[at];
  const Evidence& chosen = p.confirmed[at].chosen;
  // The point recommended: the confirmed run's settings (the paper's when nothing ran).
  const bool ran = !chosen.run_lines.empty();
  const Settings& now = chosen.settings;
  const Settings& was = p.base;
  for (const Key& k : kKeys) {
    const std::string name = k.setting;
    std::string before, after;
    if (name == "maximum-pool-size")
      before = std::to_string(was.maximum_pool_size),
      after = std::to_string(ran ? now.maximum_pool_size : pv.settings.pool_size);
    if (name == "connection-timeout")
      before = value_text(was.connection_timeout, k.millis),
      after = value_text(ran ? now.connection_timeout : pv.settings.connection_timeout, k.millis);
    if (name == "partner-read-timeout")
      before = value_text(was.partner_read_timeout, k.millis),
      after = value_text(ran ? now.partner_read_timeout : pv.settings.read_timeout, k.millis);
    if (name == "partner-max-attempts")
      before = std::to_string(was.partner_max_attempts),
      after = std::to_string(ran ? now.partner_max_attempts : pv.settings.attempts);
    if (name == "max-threads")
      before = std::to_string(was.max_threads), after = std::to_string(ran ? now.max_threads : pv.settings.max_threads);
    if (before == after) continue;
    const auto it = key_of.find(name);
    out.push_back({it != key_of.end() ? it->second : k.spring, it != key_of.end() ? before : "", after});
  }
  if (!p.current.empty() && p.current != pv.strategy)
    notes.push_back(fmt::format("lockbench plan: strategy {} -> {}: a change of code, not configuration; see "
                                "`lockbench explain {}`",
                                p.current, pv.strategy, pv.strategy));
  if (pv.settings.lease_ttl.count() > 0 && (p.current != pv.strategy || was.lease_ttl != pv.settings.lease_ttl))
    notes.push_back(fmt::format("lockbench plan: {}'s lease TTL {} is set in its code (`lockbench explain {}`), not here",
                                pv.strategy, format_duration(pv.settings.lease_ttl), pv.strategy));
  return out;
}

std::string apply_changes(const std::string& text, bool yaml, const std::vector<ConfigChange>& changes,
                          const std::vector<std::string>& notes) {
  return yaml ? apply_yaml(text, changes, notes) : apply_properties(text, changes, notes);
}

std::string config_diff(const PlanResult& p, int index, const std::map<std::string, std::string>& key_of,
                        const std::string& from, const std::string& text) {
  if (index < 0) return "";
  std::vector<std::string> notes;
  const std::vector<ConfigChange> changes = config_changes(p, index, key_of, notes);
  if (changes.empty() && notes.empty()) return "";
  const std::string ext = std::filesystem::path(from).extension().string();
  const bool yaml = ext == ".yml" || ext == ".yaml";
  return unified_diff(from, text, apply_changes(text, yaml, changes, notes));
}

std::string properties_diff(const PlanResult& p, int index, const std::map<std::string, std::string>& key_of,
                            const std::string& from) {
  if (index < 0) return "";
  std::vector<std::string> notes;
  const std::vector<ConfigChange> changes = config_changes(p, index, key_of, notes);
  std::ostringstream out;
  out << "--- " << from << "\n+++ " << from << " (lockbench plan: " << p.paper[static_cast<std::size_t>(index)].strategy
      << ")\n";
  for (const auto& c : changes) {
    if (!c.before.empty()) out << "-" << c.key << "=" << c.before << "\n";
    out << "+" << c.key << "=" << c.after << "\n";
  }
  for (const auto& n : notes) out << "# " << n << "\n";
  return out.str();
}

namespace {

// The settings a strategy's row shows: the confirmed point's when it ran, else the paper's.
Recommendation shown_settings(const PaperVerdict& pv, const Confirmed& c) {
  Recommendation r = pv.settings;
  if (c.chosen.run_lines.empty()) return r;
  const Settings& s = c.chosen.settings;
  r.pool_size = s.maximum_pool_size;
  r.connection_timeout = s.connection_timeout;
  r.read_timeout = s.partner_read_timeout;
  r.attempts = s.partner_max_attempts;
  r.max_threads = s.max_threads;
  return r;
}

// The Poisson bounds of a horizon point, one line per event kind the targets count.
std::vector<std::string> bound_lines(const PlanResult& p, const Evidence& e) {
  std::vector<std::string> out;
  if (!e.at_horizon || e.run_lines.empty()) return out;
  const auto has = [&p](const char* metric) { return p.fail_on.find(metric) != std::string::npos; };
  out.push_back(bound_text(e, "violations", "lock failures", true));
  if (has("pool_timeouts")) out.push_back(bound_text(e, "pool_timeouts", "pool timeouts", true));
  if (has("rejected")) out.push_back(bound_text(e, "rejected", "rejections", true));
  if (has("probe_failures")) out.push_back(bound_text(e, "probe_failures", "failed probes", false));
  if (has("lease_steals") && strategy_info(e.settings.strategy).props.lease_ttl)
    out.push_back(bound_text(e, "lease_steals", "lease steals", false));
  return out;
}

// The ambiguity of read timeouts, apart from lock failures: its rate per day and its fixes.
std::string ambiguity_line(const PlanResult& p, const PaperVerdict& pv, const Evidence& e) {
  const auto it = e.events.find("ambiguous");
  const double seen = it == e.events.end() ? 0 : it->second;
  const double per_day = e.exposure_s > 0 ? seen / e.exposure_s * 86400 : 0;
  std::string out = fmt::format("ambiguity (apart from lock failures): at read timeout {}, {:.0f} ambiguous "
                                "outcome(s) in {} x {} ({:.3g} a day; the paper: {:.3g} a day)",
                                format_duration(e.settings.partner_read_timeout), seen, e.run_lines.size(),
                                format_duration(e.settings.duration), per_day, pv.ambiguous_per_day);
  out += p.ambiguous_per_day_max >= 0 ? fmt::format(", target at most {:g} a day", p.ambiguous_per_day_max)
                                      : std::string(", not a target (--ambiguous-max N/day makes it one)");
  if (seen > 0 || pv.ambiguous_per_day >= 0.01)
    out += "; fix: an Idempotency-Key on the partner call (the partner honours it), a reconciler that settles "
           "them, or a longer read timeout within the lease TTL (--ambiguous-max sizes it)";
  return out;
}

}  // namespace

namespace {

// The plan's head: what was planned, the targets, the inputs read.
void head_text(std::ostream& out, const PlanResult& p) {
  const Settings& b = p.base;
  out << fmt::format("plan: {} at {:.2f}/s over {} pod(s), partner {}, {} seed(s) x {} per point in the simulator{}\n",
                     b.scenario, b.rate_per_s, b.pods, b.partner_latency.to_string(), p.seeds,
                     format_duration(b.duration),
                     p.horizon.count() > 0
                         ? fmt::format("; every recommended point and headroom confirmed over {} new seed(s) x {}",
                                       p.seeds, format_duration(p.horizon))
                         : std::string());
  out << "targets: a point fails when any of " << p.fail_on << " holds"
      << (p.recovery_ms_max > 0 ? ", or recovery after a crash takes longer than " +
                                      format_duration(from_ms(p.recovery_ms_max))
                                : std::string())
      << "; exclusion is always a target; ambiguous outcomes "
      << (p.ambiguous_per_day_max >= 0 ? fmt::format("at most {:g} a day (--ambiguous-max)", p.ambiguous_per_day_max)
                                       : std::string("are counted apart, not a target"))
      << "\n";
  for (const auto& line : p.inputs) out << "input: " << line << "\n";
}

// One row per strategy: the verdicts and the settings shown.
void table_text(std::ostream& out, const PlanResult& p) {
  const bool real = confirmed_in_real_world(p);
  out << "\n"
      << fmt::format("{:<26} {:<11} {:<11} {:>5} {:>9} {:>13} {:>9} {:>8} {:>11}{}\n", "strategy", "paper", "simulator",
                     "pool", "conn.tmo", "read x tries", "lease TTL", "threads", "headroom/s", real ? "  real" : "");
  for (std::size_t i = 0; i < p.paper.size(); ++i) {
    const auto& pv = p.paper[i];
    const auto& c = p.confirmed[i];
    const Recommendation r = shown_settings(pv, c);
    const std::string real_cell = !real ? "" : c.real.run_lines.empty() ? "  -" : c.real.met ? "  meets" : "  fails";
    out << fmt::format("{:<26} {:<11} {:<11} {:>5} {:>9} {:>13} {:>9} {:>8} {:>11}{}\n", pv.strategy,
                       pv.feasible ? "meets" : "fails", c.feasible ? "meets" : "fails", r.pool_size,
                       format_duration(r.connection_timeout),
                       format_duration(r.read_timeout) + " x " + std::to_string(r.attempts),
                       r.lease_ttl.count() > 0 ? format_duration(r.lease_ttl) : "-", r.max_threads,
                       c.feasible ? fmt::format("{}{:.2f}", c.headroom_at_least ? ">=" : "", c.headroom_per_s)
                                  : std::string("-"),
                       real_cell);
  }
}

// Fewest changes: what is kept and what changes, against the service's current settings.
void keep_text(std::ostream& out, const PlanResult& p, const PaperVerdict& pv, const Confirmed& c,
               const Recommendation& r) {
  const Settings& b = p.base;
  if (!c.feasible || p.minimize) return;
  const int smallest = c.shortest.run_lines.empty() ? r.pool_size : c.shortest.settings.maximum_pool_size;
  if (r.pool_size == b.maximum_pool_size)
    out << fmt::format("  keep: maximum-pool-size {}, meets the targets{} ({} to spare: {} met them in the "
                       "short runs)\n",
                       r.pool_size, c.chosen.at_horizon ? " at the horizon" : "", r.pool_size - smallest, smallest);
  if (r.max_threads == b.max_threads) out << fmt::format("  keep: Tomcat threads {}\n", r.max_threads);
  if (r.max_threads > b.max_threads)
    out << fmt::format("  change: Tomcat threads {} -> {}: the paper needs {} for the rejections over the horizon\n",
                       b.max_threads, r.max_threads, pv.required.max_threads);
}

// Where the paper's pool and the runs' disagree (at the horizon only).
void disagreement_text(std::ostream& out, const PlanResult& p, std::size_t i, const Recommendation& r) {
  const auto& pv = p.paper[i];
  const auto& c = p.confirmed[i];
  if (!c.feasible || p.paper_pool.empty() || !c.chosen.at_horizon) return;
  const int paper_pool = p.paper_pool[i];
  if (r.pool_size > paper_pool + 1)
    out << fmt::format("  paper and simulator disagree: the paper's pool {} broke a target at the horizon, {} "
                       "met them (the paper's queue is M/M/c/N with exponential holds; the simulator runs the "
                       "partner's own latency)\n",
                       paper_pool, r.pool_size);
  else if (!c.shortest.run_lines.empty() && c.shortest.settings.maximum_pool_size + 1 < pv.required.pool_size)
    out << fmt::format("  paper and simulator disagree: the short runs met the targets with pool {}, the paper "
                       "needs {} for the horizon (the paper is kept: short runs see too few tail events)\n",
                       c.shortest.settings.maximum_pool_size, pv.required.pool_size);
}

// The runs behind a strategy's verdict, each with its run lines (and bounds at the horizon).
void runs_text(std::ostream& out, const PlanResult& p, const PaperVerdict& pv, const Confirmed& c) {
  if (!c.chosen.run_lines.empty())
    out << evidence_text(c.chosen, c.feasible ? (c.chosen.at_horizon ? "chosen, at the horizon" : "chosen")
                                              : "closest tried");
  for (const auto& line : bound_lines(p, c.chosen)) out << "      confirmed: " << line << "\n";
  if (c.chosen.at_horizon) out << "  " << ambiguity_line(p, pv, c.chosen) << "\n";
  if (!c.shortest.run_lines.empty() && c.shortest.settings.maximum_pool_size != c.chosen.settings.maximum_pool_size)
    out << evidence_text(c.shortest, "the smallest pool that met them in the short runs (one seed)");
  if (!c.below.run_lines.empty()) out << evidence_text(c.below, "one connection fewer (short runs)");
  if (!c.headroom.run_lines.empty())
    out << evidence_text(c.headroom, c.headroom.met ? (c.headroom.at_horizon ? "headroom, at the horizon" : "headroom")
                                                    : "headroom (broken on a seed: only the planned rate holds)");
  for (const auto& line : bound_lines(p, c.headroom)) out << "      confirmed: " << line << "\n";
  if (!c.slow_partner.run_lines.empty())
    out << evidence_text(c.slow_partner, "every call at the partner's p99.9, one hot key");
  if (!c.crash.run_lines.empty()) out << evidence_text(c.crash, "crash at half time");
  if (!c.real.run_lines.empty())
    out << evidence_text(c.real, fmt::format("real world, time scale {:g}", c.real_time_scale).c_str());
}

// One strategy's block: its verdict, why, what is kept, and the runs.
void strategy_text(std::ostream& out, const PlanResult& p, std::size_t i) {
  const auto& pv = p.paper[i];
  const auto& c = p.confirmed[i];
  out << "\n" << pv.strategy << ": "
      << (meets(c)      ? "meets the targets"
          : c.feasible ? "meets the targets in the simulator, not in the real world"
                       : "does not meet the targets")
      << "\n";
  for (const auto& w : pv.why_not) out << "  paper: fails " << w << "\n";
  if (c.no_exclusion)
    out << "  it excludes nothing here: "
        << (c.chosen.met ? "the simulator saw no violation in these runs, which proves nothing for a lock that does "
                           "not exclude"
                         : "the runs saw the overlaps")
        << "; never recommended while the scenario needs exclusion\n";
  const Recommendation r = shown_settings(pv, c);
  keep_text(out, p, pv, c, r);
  disagreement_text(out, p, i, r);
  for (const auto& w : pv.why) out << "  why: " << w << "\n";
  runs_text(out, p, pv, c);
}

// The answer: the strategy recommended, or the closest point and what it breaks.
void answer_text(std::ostream& out, const PlanResult& p) {
  const int rec = recommended(p);
  out << "\n";
  if (rec >= 0) {
    const auto& pv = p.paper[static_cast<std::size_t>(rec)];
    const auto& c = p.confirmed[static_cast<std::size_t>(rec)];
    const Recommendation r = shown_settings(pv, c);
    out << fmt::format("recommended: {} with maximumPoolSize {}, connectionTimeout {}, read timeout {} x {} attempts{}, "
                       "Tomcat threads {}; headroom {}{:.2f}/s{}\n",
                       pv.strategy, r.pool_size, format_duration(r.connection_timeout),
                       format_duration(r.read_timeout), r.attempts,
                       r.lease_ttl.count() > 0 ? ", lease TTL " + format_duration(r.lease_ttl) : "", r.max_threads,
                       c.headroom_at_least ? ">= " : "", c.headroom_per_s,
                       c.headroom.at_horizon && c.headroom.met ? " (confirmed at the horizon)" : "");
    for (const auto& line : bound_lines(p, c.chosen)) out << "  confirmed: " << line << "\n";
    if (pv.strategy == "none" || !pv.excludes) out << "  note: " << pv.strategy << " excludes nothing\n";
    return;
  }
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

}  // namespace

std::string render_text(const PlanResult& p) {
  std::ostringstream out;
  head_text(out, p);
  table_text(out, p);
  for (std::size_t i = 0; i < p.paper.size(); ++i) strategy_text(out, p, i);
  answer_text(out, p);
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
          {"horizon_s", to_s(p.horizon)},
          {"ambiguous_per_day_max", p.ambiguous_per_day_max >= 0 ? nlohmann::json(p.ambiguous_per_day_max)
                                                                 : nlohmann::json(nullptr)},
          {"minimize", p.minimize},
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
    const Recommendation r = shown_settings(pv, c);
    const auto verdict = [](bool ok) {
      return std::string("<td class=\"") + (ok ? "meets\">meets" : "fails\">fails") + "</td>";
    };
    out << "<tr><td>" << esc(pv.strategy) << "</td>" << verdict(pv.feasible) << verdict(c.feasible) << "<td>" << r.pool_size << "</td><td>"
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
