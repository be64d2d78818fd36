// Prometheus text exposition format (version 0.0.4) with Micrometer's HikariCP
// metric names, so that Grafana dashboards built for HikariCP read lockbench's
// pools: hikaricp_connections{,_active,_idle,_pending,_max,_min},
// hikaricp_connections_timeout_total, and the timers
// hikaricp_connections_{acquire,usage,creation}_seconds (a summary with
// _count and _sum, and a _max gauge, as Micrometer exports a Timer). Every
// sample carries pool="<pod>" first, then the extra labels of its pool.
// The one writer: `serve`'s GET /metrics and `run --metrics-out` both use it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/metrics.hpp"

namespace lockbench {

struct HikariTimer {
  std::int64_t count = 0;
  double sum_s = 0;
  double max_s = 0;
};

struct HikariPoolMetrics {
  std::string pool;                                         // label pool="...": "pod1"
  std::vector<std::pair<std::string, std::string>> labels;  // more labels, e.g. {"strategy", "held-tx:wait"}
  int active = 0, idle = 0, pending = 0;
  int total = 0;     // connections open
  int max = 0;       // maximumPoolSize
  int min = 0;       // minimumIdle
  std::int64_t timeouts = 0;
  HikariTimer acquire;                  // per successful borrow: the wait
  HikariTimer usage;                    // per borrow: the hold
  std::optional<HikariTimer> creation;  // connection opening, when measured
};

// One pod's pool as it stands: its gauges now and its timers so far (every
// connection is opened at start, minimumIdle = maximumPoolSize; creation is
// not measured).
HikariPoolMetrics hikari_metrics(const std::string& pool, const PoolSample& now, const PoolStats& stats, int size);

// Every family once (HELP, TYPE, then one sample per pool, in the given order).
std::string hikaricp_exposition(const std::vector<HikariPoolMetrics>& pools);

// A label value escaped as the format wants (backslash, double quote, newline).
std::string prometheus_label_value(const std::string& v);

}  // namespace lockbench
