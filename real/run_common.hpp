// What the real world's runners and `lockbench serve` share (real/real_run.hpp:
// pods as threads, pods as processes or the user's own services): the
// partner's configuration for a run, the result's partner block from the
// oracle, the database's version for provenance, and the small tools every
// one of them needs once: one_line, new_run_key, Ticker.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "core/settings.hpp"
#include "real/partner_http.hpp"

namespace lockbench::real {

// The run's partner configuration as a merge patch (docs/reference/partner-api.md E): its
// latency and apply_at, its faults per endpoint (endpoints without faults this
// run get null, removed), its fencing mode.
nlohmann::json partner_config(const Settings& s);
// How a run names itself to the partner (PartnerHttp::set_run): "RUN-ID (host H pid P)".
std::string partner_run_name(const std::string& run_id);

// The result's partner block: {available: true, calls, violations, max_inflight_per_person, details
// (the first 200), episodes, corrupted_ms_max, corrupted_ms_total, notes}. `service`: what the
// service's database holds (Scenario::service_view); nullopt = the partner's own checks only.
// Throws std::runtime_error when the partner cannot be read.
nlohmann::json partner_block(PartnerHttp& partner, const std::optional<nlohmann::json>& service);

// The block of a run whose partner could not be read: no verdict, and no count pretends to be 0.
nlohmann::json partner_unavailable(const std::string& reason);

// The server's version for the result's provenance; "" when it cannot be read.
std::string postgresql_version(const std::string& url, const std::string& application_name);
std::string server_version(pqxx::connection& c);  // the same on a session already open

// GET url+path as JSON within `timeout`; nullopt when unreachable, not 200 or not JSON.
std::optional<nlohmann::json> get_json(const std::string& url, const std::string& path, Duration timeout);
// GET url/health/readiness answers 200 within `timeout`.
bool ready(const std::string& url, Duration timeout);

// A driver's or a child's message as one printable line: line breaks become
// spaces, trailing blanks go, and secrets (URL passwords, libpq's password=)
// are redacted (base/redact.hpp). SettingError and stderr lines pass through it.
std::string one_line(std::string text);

// A positive number naming a run's rows in lockbench.rows and salting its
// advisory keys: distinct for runs started at the same instant in one process
// (a counter), in two processes (the pid) or on two machines (the clock).
std::int64_t new_run_key();

// Runs f on its own thread after `first` (at once by default) and then on a
// fixed period, as kubelet's probes tick: the k-th call is due at first + k *
// every however long the calls before it took (a late call runs at once; a
// call over a whole period late is dropped, as kubelet skips a tick while its
// last probe still runs). stop() (or destruction) wakes it at once and joins.
class Ticker {
 public:
  Ticker(Duration every, std::function<void()> f, Duration first = Duration::zero());
  ~Ticker() { stop(); }
  Ticker(const Ticker&) = delete;
  Ticker& operator=(const Ticker&) = delete;
  void stop();

 private:
  void loop();
  const std::function<void()> f_;
  const Duration every_;
  const Duration first_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;   // GUARDED_BY(mu_)
  std::thread thread_;  // last: starts once the fields above exist
};

}  // namespace lockbench::real
