#include "real/run_common.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>

#include <httplib.h>
#include <unistd.h>

#include "base/random.hpp"
#include "base/redact.hpp"
#include "fake_partner/model/call.hpp"
#include "real/leftovers.hpp"
#include "real/pg_conn.hpp"
#include "real/pod_protocol.hpp"

namespace lockbench::real {

std::string partner_run_name(const std::string& run_id) {
  return run_id + " (host " + this_host() + " pid " + std::to_string(::getpid()) + ")";
}

nlohmann::json partner_config(const Settings& s) {
  nlohmann::json latency = s.partner_latency.to_json();
  latency["apply_at"] = s.apply_at;
  nlohmann::json faults = nlohmann::json::object();
  faults["*"] = s.partner_faults.contains("*") ? s.partner_faults["*"] : nlohmann::json(nullptr);
  for (const auto endpoint : partner::kEndpoints) {
    const std::string e(partner::endpoint_name(endpoint));
    faults[e] = s.partner_faults.contains(e) ? s.partner_faults[e] : nlohmann::json(nullptr);
  }
  for (auto it = s.partner_faults.begin(); it != s.partner_faults.end(); ++it) faults[it.key()] = it.value();
  return {{"seed", s.seed}, {"latency", {{"*", latency}}}, {"faults", faults}, {"fencing", s.fencing}};
}

nlohmann::json partner_block(PartnerHttp& partner, const std::optional<nlohmann::json>& service) {
  const nlohmann::json check = partner.check(service);
  const nlohmann::json metrics = partner.metrics();
  std::int64_t calls = 0;
  if (metrics.contains("arrivals"))
    for (const auto& [endpoint, n] : metrics["arrivals"].items())
      if (n.is_number()) calls += n.get<std::int64_t>();
  const nlohmann::json violations = check.contains("counts") ? check["counts"] : nlohmann::json::object();
  const std::int64_t inflight = std::max(check.value("max_inflight_per_person", std::int64_t{0}),
                                         metrics.value("max_inflight_per_person", std::int64_t{0}));
  nlohmann::json details = nlohmann::json::array();
  if (check.contains("violations"))
    for (const auto& v : check["violations"]) {
      if (details.size() >= 200) break;
      details.push_back(v);
    }
  nlohmann::json out = {{"available", true},
                        {"calls", calls},
                        {"violations", violations},
                        {"max_inflight_per_person", inflight},
                        {"details", details}};
  for (const char* k : {"episodes", "corrupted_ms_max", "corrupted_ms_total", "notes"})
    if (check.contains(k)) out[k] = check[k];
  return out;
}

nlohmann::json partner_unavailable(const std::string& reason) {
  return {{"available", false}, {"unavailable_reason", reason}, {"verdict", "unavailable"}, {"calls", nullptr}};
}

std::string postgresql_version(const std::string& url, const std::string& application_name) {
  try {
    auto c = open_session(url, application_name);
    return server_version(*c);
  } catch (const std::exception&) {
    return "";
  }
}

std::string server_version(pqxx::connection& c) {
  try {
    pqxx::nontransaction tx(c);
    return tx.exec1("SHOW server_version")[0].as<std::string>();
  } catch (const std::exception&) {
    return "";
  }
}

namespace {
void set_timeouts(httplib::Client& c, Duration timeout) {
  c.set_connection_timeout(timeout);
  c.set_read_timeout(timeout);
  c.set_write_timeout(timeout);
}
}  // namespace

std::optional<nlohmann::json> get_json(const std::string& url, const std::string& path, Duration timeout) {
  httplib::Client c(url);
  set_timeouts(c, timeout);
  auto r = c.Get(path);
  if (!r || r->status != 200) return std::nullopt;
  try {
    return nlohmann::json::parse(r->body);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

bool ready(const std::string& url, Duration timeout) {
  httplib::Client c(url);
  set_timeouts(c, timeout);
  auto r = c.Get(kPathReadiness);
  return r && r->status == 200;
}

std::string one_line(std::string text) {
  for (char& ch : text)
    if (ch == '\n' || ch == '\r') ch = ' ';
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.pop_back();
  return redact_secrets(text);
}

std::int64_t new_run_key() {
  static std::atomic<std::uint64_t> counter{0};
  const auto t = static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  Rng rng(t ^ (static_cast<std::uint64_t>(::getpid()) << 32) ^ counter.fetch_add(1), "run");
  return static_cast<std::int64_t>(rng.next() >> 1);  // positive
}

Ticker::Ticker(Duration every, std::function<void()> f, Duration first)
    : f_(std::move(f)), every_(every), first_(first), thread_([this] { loop(); }) {}

void Ticker::loop() {
  const auto period = std::chrono::duration_cast<std::chrono::steady_clock::duration>(every_);
  auto due = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(first_);
  std::unique_lock lock(mu_);
  while (!cv_.wait_until(lock, due, [&] { return stop_; })) {
    lock.unlock();
    f_();
    lock.lock();
    due += period;
    // Over a whole period late (the call outlasted it): the missed ticks are skipped, not run in a burst.
    const auto now = std::chrono::steady_clock::now();
    if (period > period.zero() && now - due >= period) due += (now - due) / period * period;
  }
}

void Ticker::stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

}  // namespace lockbench::real
