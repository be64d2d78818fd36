#include "real/pod_protocol.hpp"

#include <sstream>

#include "settings/table.hpp"

namespace lockbench::real {

std::string op_path(std::string_view scenario, std::int64_t key) {
  return "/ops/" + std::string(scenario) + "/" + std::to_string(key);
}

int status_of(Outcome o) {
  switch (o) {
    case Outcome::ok: return 200;
    case Outcome::conflict: return 409;
    case Outcome::pool_timeout: return 503;
    case Outcome::rejected: return 429;
    case Outcome::error: return 500;
  }
  return 500;
}

Outcome outcome_of_status(int status) {
  switch (status) {
    case 200: return Outcome::ok;
    case 409: return Outcome::conflict;
    case 503: return Outcome::pool_timeout;
    case 429: return Outcome::rejected;
    default: return Outcome::error;
  }
}

namespace {
std::int64_t us(Duration d) { return std::chrono::duration_cast<std::chrono::microseconds>(d).count(); }
}  // namespace

std::string split_header(const TimeSplit& split, Duration service) {
  std::ostringstream hdr;
  hdr << us(split.queue) << ' ' << us(split.pool_wait) << ' ' << us(split.lock_wait) << ' ' << us(split.partner) << ' '
      << us(split.db) << ' ' << us(split.held) << ' ' << us(service);
  return hdr.str();
}

TimeSplit parse_split(const std::string& text, Duration total) {
  std::istringstream in(text);
  std::int64_t v[7] = {};
  for (auto& x : v)
    if (!(in >> x)) return TimeSplit{total};
  const auto u = [](std::int64_t x) { return Duration(std::chrono::microseconds(x)); };
  TimeSplit out;
  out.queue = u(v[0]) + (total > u(v[6]) ? total - u(v[6]) : Duration::zero());
  out.pool_wait = u(v[1]);
  out.lock_wait = u(v[2]);
  out.partner = u(v[3]);
  out.db = u(v[4]);
  out.held = u(v[5]);
  return out;
}

std::vector<std::string> pod_args(const Settings& scaled, std::int64_t run, int index) {
  // --partner as given (its show() redacts); --db, --redis and --etcd in pod_env.
  std::vector<std::string> a = setting_args(scaled, {"db", "redis", "etcd", "partner"});
  if (!scaled.partner_url.empty()) a.insert(a.end(), {"--partner", scaled.partner_url});
  a.insert(a.end(), {"--run-id", std::to_string(run), "--pod", std::to_string(index + 1), "--port", "0"});
  return a;
}

std::vector<std::string> pod_env(const Settings& s) {
  std::vector<std::string> env = {std::string(kServeDbEnv) + "=" + s.db_url};
  if (!s.redis_url.empty()) env.push_back(std::string(kServeRedisEnv) + "=" + s.redis_url);
  if (!s.etcd_url.empty()) env.push_back(std::string(kServeEtcdEnv) + "=" + s.etcd_url);
  return env;
}

}  // namespace lockbench::real
