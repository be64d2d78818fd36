#include "report/fail_on.hpp"

#include <cmath>
#include <sstream>

#include "base/units.hpp"
#include "report/report.hpp"

namespace lockbench::report {

namespace {

constexpr const char* kAccepted =
    "accepted: METRIC OP VALUE, comma-separated; METRIC one of violations, pool_timeouts, errors, conflicts, "
    "rejected, leaked, lease_steals, probe_failures, ok_per_s, p50, p99, p999, max, ok_p50, ok_p99; OP one of > >= "
    "< <= ==; e.g. 'violations>0,pool_timeouts>0,p99>2s'";

bool is_latency(const std::string& m) {
  return m == "p50" || m == "p99" || m == "p999" || m == "max" || m == "ok_p50" || m == "ok_p99";
}

const nlohmann::json* at(const nlohmann::json& j, std::initializer_list<const char*> path) {
  const nlohmann::json* p = &j;
  for (const char* k : path) {
    if (!p->is_object() || !p->contains(k)) return nullptr;
    p = &(*p)[k];
  }
  return p;
}

double number(const nlohmann::json& j, std::initializer_list<const char*> path) {
  const nlohmann::json* p = at(j, path);
  return p && p->is_number() ? p->get<double>() : 0;
}

// The metric's value in configured units.
double metric_value(const nlohmann::json& r, const std::string& m) {
  const bool scaled = r.contains("unscaled") && r["unscaled"].is_object();
  const nlohmann::json& lat = scaled ? r["unscaled"] : r;
  if (m == "violations") return report::violations_total(r);
  if (m == "pool_timeouts") return number(r, {"requests", "pool_timeout"});
  if (m == "errors") return number(r, {"requests", "error"});
  if (m == "conflicts") return number(r, {"requests", "conflict"});
  if (m == "rejected") return number(r, {"requests", "rejected"});
  if (m == "leaked") return number(r, {"locks", "leaked"});
  if (m == "lease_steals") return number(r, {"locks", "lease_steals"});
  if (m == "probe_failures") return number(r, {"probe", "failed"});
  if (m == "ok_per_s") return scaled ? number(lat, {"throughput_ok_per_s"}) : number(r, {"throughput_ok_per_s"});
  if (m == "p50") return number(lat, {"latency_ms", "p50"});
  if (m == "p99") return number(lat, {"latency_ms", "p99"});
  if (m == "p999") return number(lat, {"latency_ms", "p999"});
  if (m == "max") return number(lat, {"latency_ms", "max"});
  if (m == "ok_p50") return number(lat, {"latency_ok_ms", "p50"});
  if (m == "ok_p99") return number(lat, {"latency_ok_ms", "p99"});
  return 0;
}

bool holds(double v, const std::string& op, double t) {
  if (op == ">") return v > t;
  if (op == ">=") return v >= t;
  if (op == "<") return v < t;
  if (op == "<=") return v <= t;
  return std::abs(v - t) < 1e-9;
}

std::string trim_spaces(std::string s) {
  while (!s.empty() && s.front() == ' ') s.erase(s.begin());
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

}  // namespace

std::vector<Threshold> parse_fail_on(const std::string& spec) {
  static const std::vector<std::string> metrics = {"violations", "pool_timeouts", "errors", "conflicts", "rejected",
                                                   "leaked", "lease_steals", "probe_failures", "ok_per_s", "p50",
                                                   "p99", "p999", "max", "ok_p50", "ok_p99"};
  std::vector<Threshold> out;
  std::stringstream in(spec);
  std::string part;
  while (std::getline(in, part, ',')) {
    part = trim_spaces(part);
    const auto op_at = part.find_first_of("<>=");
    if (part.empty() || op_at == std::string::npos || op_at == 0)
      throw SettingError("--fail-on: '" + part + "' is not a threshold (" + kAccepted + ")");
    Threshold t;
    t.text = part;
    t.metric = trim_spaces(part.substr(0, op_at));
    std::size_t op_len = 1;
    if (op_at + 1 < part.size() && part[op_at + 1] == '=') op_len = 2;
    t.op = part.substr(op_at, op_len);
    if (t.op == "=") throw SettingError("--fail-on: '" + part + "': write == for equality (" + kAccepted + ")");
    const std::string value = trim_spaces(part.substr(op_at + op_len));
    if (std::find(metrics.begin(), metrics.end(), t.metric) == metrics.end())
      throw SettingError("--fail-on: '" + t.metric + "' is not a metric (" + kAccepted + ")");
    if (value.empty()) throw SettingError("--fail-on: '" + part + "' has no value (" + kAccepted + ")");
    if (is_latency(t.metric)) {
      t.value = to_ms(parse_duration(value, "--fail-on"));
    } else {
      std::size_t used = 0;
      try {
        t.value = std::stod(value, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != value.size() || !std::isfinite(t.value))
        throw SettingError("--fail-on: '" + value + "' in '" + part + "' is not a number (" + kAccepted + ")");
    }
    out.push_back(t);
  }
  if (out.empty()) throw SettingError(std::string("--fail-on: no threshold given (") + kAccepted + ")");
  return out;
}

std::vector<std::string> broken_thresholds(const std::vector<Threshold>& thresholds,
                                           const std::vector<nlohmann::json>& results) {
  std::vector<std::string> out;
  for (const auto& r : results) {
    const std::string who = r.value("strategy", std::string("?")) + " (" + r.value("world", std::string("?")) + ", " +
                            r.value("scenario", std::string("?")) + ")";
    for (const auto& t : thresholds) {
      const double v = metric_value(r, t.metric);
      if (!holds(v, t.op, t.value)) continue;
      std::ostringstream line;
      line << who << ": " << t.metric << " = " << v << (is_latency(t.metric) ? " ms" : "") << ", fails " << t.text;
      out.push_back(line.str());
    }
  }
  return out;
}

}  // namespace lockbench::report
