#include "core/prometheus.hpp"

#include <cmath>
#include <functional>
#include <sstream>

namespace lockbench {

std::string prometheus_label_value(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

namespace {

std::string labels_of(const HikariPoolMetrics& p) {
  std::string out = "{pool=\"" + prometheus_label_value(p.pool) + "\"";
  for (const auto& [k, v] : p.labels) out += "," + k + "=\"" + prometheus_label_value(v) + "\"";
  return out + "}";
}

std::string number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  std::ostringstream o;
  o.precision(9);
  o << v;
  return o.str();
}

}  // namespace

HikariPoolMetrics hikari_metrics(const std::string& pool, const PoolSample& now, const PoolStats& stats, int size) {
  HikariPoolMetrics m;
  m.pool = pool;
  m.active = now.active;
  m.idle = now.idle;
  m.pending = now.pending;
  m.total = m.max = m.min = size;
  m.timeouts = stats.timeouts;
  const auto timer = [](const Samples& ms) {
    double sum_ms = 0;
    for (double v : ms.values()) sum_ms += v;
    return HikariTimer{static_cast<std::int64_t>(ms.size()), sum_ms / 1000.0, ms.size() ? ms.max() / 1000.0 : 0};
  };
  m.acquire = timer(stats.wait_ms);
  m.usage = timer(stats.hold_ms);
  return m;
}

std::string hikaricp_exposition(const std::vector<HikariPoolMetrics>& pools) {
  std::ostringstream m;
  const auto family = [&](const std::string& name, const char* type, const char* help,
                          const std::function<std::optional<double>(const HikariPoolMetrics&)>& value) {
    bool any = false;
    for (const auto& p : pools) any = any || value(p).has_value();
    if (!any) return;
    m << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n';
    for (const auto& p : pools)
      if (const auto v = value(p)) m << name << labels_of(p) << ' ' << number(*v) << '\n';
  };
  const auto gauge = [&](const char* name, const char* help, int HikariPoolMetrics::*field) {
    family(name, "gauge", help, [field](const HikariPoolMetrics& p) { return std::optional<double>(p.*field); });
  };
  gauge("hikaricp_connections_active", "Active connections", &HikariPoolMetrics::active);
  gauge("hikaricp_connections_idle", "Idle connections", &HikariPoolMetrics::idle);
  gauge("hikaricp_connections_pending", "Pending threads", &HikariPoolMetrics::pending);
  gauge("hikaricp_connections", "Total connections", &HikariPoolMetrics::total);
  gauge("hikaricp_connections_max", "Max connections", &HikariPoolMetrics::max);
  gauge("hikaricp_connections_min", "Min connections", &HikariPoolMetrics::min);
  family("hikaricp_connections_timeout_total", "counter", "Connection timeout total count",
         [](const HikariPoolMetrics& p) { return std::optional<double>(static_cast<double>(p.timeouts)); });
  // A Micrometer Timer: a summary (count, sum) and its max as a gauge of its own.
  const auto timer = [&](const std::string& name, const char* help,
                         const std::function<std::optional<HikariTimer>(const HikariPoolMetrics&)>& of) {
    bool any = false;
    for (const auto& p : pools) any = any || of(p).has_value();
    if (!any) return;
    m << "# HELP " << name << ' ' << help << "\n# TYPE " << name << " summary\n";
    for (const auto& p : pools)
      if (const auto t = of(p))
        m << name << "_count" << labels_of(p) << ' ' << t->count << '\n'
          << name << "_sum" << labels_of(p) << ' ' << number(t->sum_s) << '\n';
    m << "# HELP " << name << "_max " << help << " (max)\n# TYPE " << name << "_max gauge\n";
    for (const auto& p : pools)
      if (const auto t = of(p)) m << name << "_max" << labels_of(p) << ' ' << number(t->max_s) << '\n';
  };
  timer("hikaricp_connections_acquire_seconds", "Connection acquire time",
        [](const HikariPoolMetrics& p) { return std::optional<HikariTimer>(p.acquire); });
  timer("hikaricp_connections_usage_seconds", "Connection usage time",
        [](const HikariPoolMetrics& p) { return std::optional<HikariTimer>(p.usage); });
  timer("hikaricp_connections_creation_seconds", "Connection creation time",
        [](const HikariPoolMetrics& p) { return p.creation; });
  return m.str();
}

}  // namespace lockbench
