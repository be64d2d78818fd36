// `lockbench plan --prometheus FILE`: the service's numbers from one scrape of
// its Prometheus endpoint (Spring Boot Actuator's /actuator/prometheus, the
// text exposition format), in Micrometer's names:
//
//   http_client_requests_seconds_bucket{le=...}  the partner call's latency
//       (every client series summed per bucket bound: one partner). Its p50
//       and p99, interpolated linearly inside their buckets, become
//       --partner-latency lognormal:p50=..,p99=.. . Needs the histogram on:
//       management.metrics.distribution.percentiles-histogram.http.client.requests=true
//   hikaricp_connections_max                     maximumPoolSize
//   hikaricp_connections_usage_seconds_sum/_count  the measured mean hold (shown, not used)
//   hikaricp_connections_timeout_total           timeouts so far (shown)
//   http_server_requests_seconds_count / process_uptime_seconds
//       the rate: one scrape holds a counter, not a rate; divided by the
//       process's uptime it is the mean rate since the pod started (a peak
//       needs --rate). One scrape is one pod: the total is that x --pods.
//
// A series that is missing, a histogram without buckets, one that is not
// cumulative, a bound that is not a number >= 0, or one with more than 1 % of
// its calls in +Inf (its p99 is not in it) is refused with one line naming it
// (SettingError naming --prometheus). A file above kPrometheusBytesMax is
// refused before it is parsed (read at most that far: /dev/zero included).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "base/distribution.hpp"

namespace lockbench::plan {

inline constexpr std::size_t kPrometheusBytesMax = std::size_t{16} << 20;  // one scrape: 16 MiB

struct PrometheusInput {
  double rate_per_s = 0;  // this pod's mean rate since it started
  double uptime_s = 0;
  Distribution partner;
  double partner_p50_ms = 0, partner_p99_ms = 0;
  double partner_calls = 0;  // the histogram's count
  int pool_size = 0;
  double hold_mean_ms = -1;  // -1 = not in the scrape
  double pool_timeouts = 0;
};

// Reads the exposition text (`source` names it in errors).
PrometheusInput read_prometheus_text(const std::string& text, const std::string& source);
PrometheusInput read_prometheus_file(const std::string& path);

// The q-quantile of a cumulative histogram: (upper bound, cumulative count)
// pairs sorted by bound, the last +Inf; linear inside a bucket, the first
// bucket from 0. A quantile in the +Inf bucket is the last finite bound.
double histogram_quantile(const std::vector<std::pair<double, double>>& buckets, double q);

}  // namespace lockbench::plan
