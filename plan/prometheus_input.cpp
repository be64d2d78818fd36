// One Prometheus scrape in Micrometer's names, read into plan's inputs
// (plan/prometheus_input.hpp lists the series and what each becomes).
#include "plan/prometheus_input.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "base/units.hpp"

namespace lockbench::plan {

namespace {

struct Sample {
  std::string name;
  std::string le;  // the bucket bound's text; empty when the series has none
  double value = 0;
};

// `name{a="b",le="0.5"} 12 [timestamp]`; comments and blank lines give nothing.
std::optional<Sample> parse_line(const std::string& line) {
  const auto first = line.find_first_not_of(" \t");
  if (first == std::string::npos || line[first] == '#') return std::nullopt;
  Sample s;
  std::size_t at = line.find_first_of("{ \t", first);
  if (at == std::string::npos) return std::nullopt;
  s.name = line.substr(first, at - first);
  if (line[at] == '{') {
    const auto close = line.find('}', at);
    if (close == std::string::npos) return std::nullopt;
    const std::string labels = line.substr(at + 1, close - at - 1);
    const auto le = labels.find("le=\"");
    if (le != std::string::npos && (le == 0 || labels[le - 1] == ',' || labels[le - 1] == ' ')) {
      const auto end = labels.find('"', le + 4);
      if (end != std::string::npos) s.le = labels.substr(le + 4, end - le - 4);
    }
    at = close + 1;
  }
  std::istringstream rest(line.substr(at));
  std::string value;
  if (!(rest >> value)) return std::nullopt;
  try {
    s.value = value == "+Inf" ? INFINITY : value == "-Inf" ? -INFINITY : std::stod(value);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  return s;
}

double bound_of(const std::string& le) {
  if (le == "+Inf") return INFINITY;
  try {
    return std::stod(le);
  } catch (const std::exception&) {
    return NAN;
  }
}

std::string bound_text(double b) { return std::isfinite(b) ? fmt::format("{:g}", b) : std::string("+Inf"); }

}  // namespace

double histogram_quantile(const std::vector<std::pair<double, double>>& buckets, double q) {
  if (buckets.empty()) return 0;
  const double total = buckets.back().second;
  const double rank = q * total;
  double prev_bound = 0, prev_count = 0, last_finite = 0;
  for (const auto& [bound, count] : buckets) {
    if (std::isfinite(bound)) last_finite = bound;
    if (count >= rank && count > prev_count) {
      if (!std::isfinite(bound)) return last_finite;
      return prev_bound + (bound - prev_bound) * (rank - prev_count) / (count - prev_count);
    }
    if (std::isfinite(bound)) prev_bound = bound;
    prev_count = count;
  }
  return last_finite;
}

PrometheusInput read_prometheus_text(const std::string& text, const std::string& source) {
  const std::string who = "--prometheus: " + source + ": ";
  std::map<double, double> client_buckets;  // bound -> cumulative count, summed over series
  std::map<std::string, double> sums;       // name -> value summed over series
  std::map<std::string, int> seen;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const auto s = parse_line(line);
    if (!s) continue;
    ++seen[s->name];
    if (s->name == "http_client_requests_seconds_bucket") {
      const double b = bound_of(s->le);
      if (std::isnan(b) || b < 0 || b == -INFINITY)
        throw SettingError(who + "http_client_requests_seconds_bucket with le=\"" + s->le +
                           "\" is not a bucket bound (accepted: a number of seconds >= 0, or +Inf)");
      if (!std::isfinite(s->value) || s->value < 0)
        throw SettingError(who + "http_client_requests_seconds_bucket{le=\"" + s->le +
                           "\"} counts a value that is not a count >= 0");
      client_buckets[b] += s->value;
    } else if (s->name == "hikaricp_connections_max") {
      sums[s->name] = std::max(sums[s->name], s->value);  // one pool's size, not a sum of pools
    } else {
      sums[s->name] += s->value;
    }
  }
  const auto need = [&](const std::string& name, const std::string& what) {
    if (!seen.count(name)) throw SettingError(who + "no " + name + " series (" + what + ")");
    return sums[name];
  };

  PrometheusInput p;
  if (client_buckets.empty()) {
    if (seen.count("http_client_requests_seconds_count") || seen.count("http_client_requests_seconds_max"))
      throw SettingError(who + "http_client_requests_seconds has no _bucket series (the partner latency needs the "
                         "histogram: management.metrics.distribution.percentiles-histogram.http.client.requests=true)");
    throw SettingError(who + "no http_client_requests_seconds_bucket series (the partner call's latency histogram)");
  }
  std::vector<std::pair<double, double>> buckets(client_buckets.begin(), client_buckets.end());
  if (std::isfinite(buckets.back().first))
    throw SettingError(who + "http_client_requests_seconds_bucket has no le=\"+Inf\" bucket (the total count)");
  if (buckets.back().second <= 0)
    throw SettingError(who + "http_client_requests_seconds_bucket counts no call yet (scrape after some traffic)");
  // A cumulative histogram: every bucket counts at least what the one below it counts.
  for (std::size_t i = 1; i < buckets.size(); ++i)
    if (buckets[i].second < buckets[i - 1].second)
      throw SettingError(who + "http_client_requests_seconds_bucket is not cumulative: le=\"" +
                         bound_text(buckets[i].first) + "\" counts fewer calls than le=\"" +
                         bound_text(buckets[i - 1].first) + "\" (a scrape's buckets never decrease)");
  // Calls above the last finite bound have no latency: a quantile there would be invented.
  const double finite_total = buckets.size() >= 2 ? buckets[buckets.size() - 2].second : 0;
  if (buckets.back().second - finite_total > 0.01 * buckets.back().second)
    throw SettingError(who + fmt::format("http_client_requests_seconds_bucket: {:g} of {:g} calls are above the last "
                                         "finite bound (le=\"{}\"), so the p99 is not in the histogram (add "
                                         "buckets: management.metrics.distribution.maximum-expected-value)",
                                         buckets.back().second - finite_total, buckets.back().second,
                                         buckets.size() >= 2 ? bound_text(buckets[buckets.size() - 2].first)
                                                             : std::string("none")));
  p.partner_calls = buckets.back().second;
  p.partner_p50_ms = histogram_quantile(buckets, 0.50) * 1000;
  p.partner_p99_ms = histogram_quantile(buckets, 0.99) * 1000;
  if (p.partner_p50_ms <= 0) throw SettingError(who + "http_client_requests_seconds_bucket puts the median at 0");
  p.partner = p.partner_p99_ms > p.partner_p50_ms * 1.0001
                  ? Distribution::lognormal(p.partner_p50_ms, p.partner_p99_ms)
                  : Distribution::fixed(p.partner_p50_ms);

  p.pool_size = static_cast<int>(std::lround(need("hikaricp_connections_max", "HikariCP's maximumPoolSize")));
  if (p.pool_size < 1) throw SettingError(who + "hikaricp_connections_max is below 1");
  if (seen.count("hikaricp_connections_usage_seconds_count") && sums["hikaricp_connections_usage_seconds_count"] > 0)
    p.hold_mean_ms =
        sums["hikaricp_connections_usage_seconds_sum"] / sums["hikaricp_connections_usage_seconds_count"] * 1000;
  p.pool_timeouts = sums["hikaricp_connections_timeout_total"];

  const double served = need("http_server_requests_seconds_count", "the requests served: the rate");
  p.uptime_s = need("process_uptime_seconds", "the rate is the requests served over the process's uptime");
  if (p.uptime_s <= 0) throw SettingError(who + "process_uptime_seconds is not above 0");
  p.rate_per_s = served / p.uptime_s;
  return p;
}

PrometheusInput read_prometheus_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw SettingError("--prometheus: cannot read '" + path + "'");
  // Read at most the cap and one byte more, whatever the file is (a device has no size to ask).
  std::string text(kPrometheusBytesMax + 1, '\0');
  f.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(f.gcount()));
  if (text.size() > kPrometheusBytesMax)
    throw SettingError(fmt::format("--prometheus: '{}' is larger than {} MiB, the cap for one scrape (give one "
                                   "pod's /actuator/prometheus text)",
                                   path, kPrometheusBytesMax >> 20));
  return read_prometheus_text(text, path);
}

}  // namespace lockbench::plan
