#include "base/distribution.hpp"

#include "base/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

namespace lockbench {

namespace {
constexpr double kZ99 = 2.3263478740408408;  // standard normal quantile at 0.99

double lognormal_sigma(double p50, double p99) { return (std::log(p99) - std::log(p50)) / kZ99; }

std::string accepted() {
  return "use fixed:200ms | uniform:100ms..300ms | exponential:mean=1.5s | lognormal:p50=1.5s,p99=4s[,cap=10s]";
}
}  // namespace

namespace {
std::string too_long_note() { return "is above the largest latency accepted (24h)"; }

double lognormal_mu(double p50) { return std::log(p50); }

// mu and sigma: a lognormal's parameters (lognormal_mu(a_ms), lognormal_sigma(a_ms, b_ms)).
double draw_ms(const Distribution& d, double mu, double sigma, Rng& rng) {
  const double a_ms = d.a_ms, b_ms = d.b_ms, cap_ms = d.cap_ms;
  using Kind = Distribution::Kind;
  switch (d.kind) {
    case Kind::fixed:
      return a_ms;
    case Kind::uniform:
      return rng.uniform(a_ms, b_ms);
    case Kind::exponential:
      return rng.exponential(a_ms);
    case Kind::lognormal: {
      const double v = rng.lognormal(mu, sigma);
      return cap_ms > 0 ? std::min(v, cap_ms) : v;
    }
    case Kind::sequence:
      return d.values && !d.values->empty() ? (*d.values)[rng.below(d.values->size())] : a_ms;
  }
  return a_ms;
}

}  // namespace

Distribution Distribution::sequence(std::vector<double> ms) {
  const double mean = ms.empty() ? 0 : std::accumulate(ms.begin(), ms.end(), 0.0) / static_cast<double>(ms.size());
  return {Kind::sequence, mean, 0, 0, std::make_shared<const std::vector<double>>(std::move(ms))};
}

double Distribution::sample_ms(Rng& rng) const {
  const bool logn = kind == Kind::lognormal;
  return std::min(draw_ms(*this, logn ? lognormal_mu(a_ms) : 0, logn ? lognormal_sigma(a_ms, b_ms) : 0, rng),
                  kSampleMsMax);
}

DistributionSampler::DistributionSampler(const Distribution& d) : d_(d) {
  if (d.kind == Distribution::Kind::lognormal) {
    mu_ = lognormal_mu(d.a_ms);
    sigma_ = lognormal_sigma(d.a_ms, d.b_ms);
  }
}

double DistributionSampler::sample_ms(Rng& rng) const {
  if (d_.kind == Distribution::Kind::sequence && d_.values && !d_.values->empty())
    return std::min((*d_.values)[next_++ % d_.values->size()], kSampleMsMax);
  return std::min(draw_ms(d_, mu_, sigma_, rng), kSampleMsMax);
}

double Distribution::mean_ms() const {
  switch (kind) {
    case Kind::fixed:
      return a_ms;
    case Kind::uniform:
      return (a_ms + b_ms) / 2;
    case Kind::exponential:
      return a_ms;
    case Kind::lognormal: {
      const double s = lognormal_sigma(a_ms, b_ms);
      // With a cap the true mean is a little lower; the uncapped mean is an upper bound.
      const double m = a_ms * std::exp(s * s / 2);
      return cap_ms > 0 ? std::min(m, cap_ms) : m;
    }
    case Kind::sequence:
      return a_ms;
  }
  return a_ms;
}

double Distribution::sequence_quantile_ms(double q) const {
  if (kind != Kind::sequence || !values || values->empty()) return 0;
  std::vector<double> v = *values;
  const std::size_t i = stats::nearest_rank(q, v.size()) - 1;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(i), v.end());
  return v[i];
}

Distribution Distribution::scaled(double f) const {
  if (kind == Kind::sequence) {
    std::vector<double> v = values ? *values : std::vector<double>{};
    for (double& x : v) x *= f;
    return sequence(std::move(v));
  }
  Distribution d = *this;
  d.a_ms *= f;
  d.b_ms *= f;
  d.cap_ms *= f;
  return d;
}

Distribution Distribution::parse(std::string_view spec, std::string_view setting) {
  const auto fail = [&](std::string why) -> SettingError {
    return SettingError(std::string(setting) + ": '" + std::string(spec) + "' " + why + "; " + accepted());
  };
  const auto colon = spec.find(':');
  if (colon == std::string_view::npos) throw fail("has no distribution name");
  const std::string_view name = spec.substr(0, colon);
  const std::string_view rest = spec.substr(colon + 1);
  const auto dur = [&](std::string_view t) { return to_ms(parse_duration(t, setting)); };
  // key=value pairs separated by commas
  const auto param = [&](std::string_view key) -> double {
    std::size_t pos = 0;
    while (pos <= rest.size()) {
      auto comma = rest.find(',', pos);
      if (comma == std::string_view::npos) comma = rest.size();
      const auto item = rest.substr(pos, comma - pos);
      const auto eq = item.find('=');
      if (eq != std::string_view::npos && item.substr(0, eq) == key) return dur(item.substr(eq + 1));
      pos = comma + 1;
    }
    return -1;
  };
  Distribution d;
  if (name == "fixed") {
    d = fixed(dur(rest));
  } else if (name == "uniform") {
    const auto dots = rest.find("..");
    if (dots == std::string_view::npos) throw fail("needs min..max");
    d = uniform(dur(rest.substr(0, dots)), dur(rest.substr(dots + 2)));
    if (d.b_ms < d.a_ms) throw fail("has max below min");
  } else if (name == "exponential") {
    const double m = param("mean");
    if (m <= 0) throw fail("needs mean=D above 0");
    d = exponential(m);
  } else if (name == "lognormal") {
    const double p50 = param("p50"), p99 = param("p99");
    if (p50 <= 0 || p99 < p50) throw fail("needs p50=D and p99=D with 0 < p50 <= p99");
    d = lognormal(p50, p99, std::max(0.0, param("cap")));
  } else {
    throw fail("names an unknown distribution");
  }
  if (d.a_ms < 0) throw fail("is negative");
  if (d.a_ms > kLatencyMsMax || d.b_ms > kLatencyMsMax || d.cap_ms > kLatencyMsMax) throw fail(too_long_note());
  return d;
}

std::string Distribution::to_string() const {
  const auto f = [](double ms) { return format_duration(from_ms(ms)); };
  switch (kind) {
    case Kind::fixed:
      return "fixed:" + f(a_ms);
    case Kind::uniform:
      return "uniform:" + f(a_ms) + ".." + f(b_ms);
    case Kind::exponential:
      return "exponential:mean=" + f(a_ms);
    case Kind::lognormal:
      return "lognormal:p50=" + f(a_ms) + ",p99=" + f(b_ms) + (cap_ms > 0 ? ",cap=" + f(cap_ms) : "");
    case Kind::sequence:
      return "sequence:" + std::to_string(values ? values->size() : 0) + " values,mean=" + f(a_ms);
  }
  return "?";
}

nlohmann::json Distribution::to_json() const {
  switch (kind) {
    case Kind::fixed:
      return {{"dist", "fixed"}, {"ms", a_ms}};
    case Kind::uniform:
      return {{"dist", "uniform"}, {"min_ms", a_ms}, {"max_ms", b_ms}};
    case Kind::exponential:
      return {{"dist", "exponential"}, {"mean_ms", a_ms}};
    case Kind::lognormal: {
      nlohmann::json j = {{"dist", "lognormal"}, {"p50_ms", a_ms}, {"p99_ms", b_ms}};
      if (cap_ms > 0) j["cap_ms"] = cap_ms;
      return j;
    }
    case Kind::sequence:
      return {{"dist", "sequence"}, {"ms", values ? *values : std::vector<double>{}}};
  }
  return {};
}

Distribution Distribution::from_json(const nlohmann::json& j, std::string_view setting) {
  const auto fail = [&](const std::string& why) {
    return SettingError(std::string(setting) + ": " + why +
                        " (accepted: {\"dist\":\"fixed\",\"ms\"} | {\"dist\":\"uniform\",\"min_ms\",\"max_ms\"} | "
                        "{\"dist\":\"exponential\",\"mean_ms\"} | {\"dist\":\"lognormal\",\"p50_ms\",\"p99_ms\",\"cap_ms\"?} | "
                        "{\"dist\":\"sequence\",\"ms\":[...]})");
  };
  if (!j.is_object() || !j.contains("dist") || !j["dist"].is_string()) throw fail("needs a \"dist\" string");
  const auto num = [&](const char* key, bool required) -> double {
    if (!j.contains(key)) {
      if (required) throw fail(std::string("needs \"") + key + "\"");
      return 0;
    }
    if (!j[key].is_number() || !(j[key].get<double>() >= 0) || j[key].get<double>() > kLatencyMsMax)
      throw fail(std::string("\"") + key + "\" must be a number from 0 to 86400000 (24h)");
    return j[key].get<double>();
  };
  const std::string dist = j["dist"].get<std::string>();
  if (dist == "fixed") return fixed(num("ms", true));
  if (dist == "uniform") {
    auto d = uniform(num("min_ms", true), num("max_ms", true));
    if (d.b_ms < d.a_ms) throw fail("max_ms is below min_ms");
    return d;
  }
  if (dist == "exponential") {
    auto d = exponential(num("mean_ms", true));
    if (d.a_ms <= 0) throw fail("mean_ms must be above 0");
    return d;
  }
  if (dist == "lognormal") {
    auto d = lognormal(num("p50_ms", true), num("p99_ms", true), num("cap_ms", false));
    if (d.a_ms <= 0 || d.b_ms < d.a_ms) throw fail("needs 0 < p50_ms <= p99_ms");
    return d;
  }
  if (dist == "sequence") {
    if (!j.contains("ms") || !j["ms"].is_array() || j["ms"].empty()) throw fail("\"ms\" must be a list of at least one number");
    std::vector<double> v;
    v.reserve(j["ms"].size());
    for (const auto& x : j["ms"]) {
      if (!x.is_number() || !(x.get<double>() >= 0) || x.get<double>() > kLatencyMsMax)
        throw fail("\"ms\"'s values must be numbers from 0 to 86400000 (24h)");
      v.push_back(x.get<double>());
    }
    return sequence(std::move(v));
  }
  throw fail("unknown dist '" + dist + "'");
}

}  // namespace lockbench
