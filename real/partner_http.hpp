// PartnerHttp: the service's HTTP client for the partner (cpp-httplib).
// attempt() is ONE attempt (core/partner_client.hpp owns retries and backoff),
// bounded by the connect and read timeouts, on a keep-alive client owned by the
// calling thread. The admin calls reset, configure and read the oracle.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "base/units.hpp"
#include "core/world.hpp"

namespace lockbench::real {

class PartnerHttp {
 public:
  // url: http://127.0.0.1:PORT. Throws SettingError (naming --partner) for anything else.
  PartnerHttp(std::string url, Duration connect_timeout, Duration read_timeout);
  ~PartnerHttp();  // run_done() when a run was set
  PartnerHttp(const PartnerHttp&) = delete;
  PartnerHttp& operator=(const PartnerHttp&) = delete;

  // One attempt: an answer (any status), or failure connect | timeout | reset | bad_response.
  PartnerReply attempt(const PartnerCall& call);

  // Admin API (docs/reference/partner-api.md E). Each throws std::runtime_error with the reason
  // when the partner cannot be reached or answers other than 2xx.
  void reset(const nlohmann::json& doc);
  // The run this client resets the partner for ("RUN-ID (host H pid P)"):
  // each reset then names it, so that the fake partner refuses, with 409 and a
  // line naming the live run, a reset for another run while one is live
  // (fake_partner/server/http_api.hpp's kLiveWindow); `force` (run --force)
  // resets anyway. run_done() tells the partner the run is over (also done by
  // the destructor); it never throws.
  void set_run(std::string run, bool force);
  void run_done() noexcept;
  void configure(const nlohmann::json& config);
  // The oracle's checks, judged against what the service's database holds
  // ({"service": ...}, Scenario::service_view); nullopt: the partner's own checks only.
  nlohmann::json check(const std::optional<nlohmann::json>& service);
  nlohmann::json metrics();

  const std::string& url() const { return url_; }

  // "a|b" -> "a%7Cb": every byte but RFC 3986's unreserved ones is escaped.
  static std::string encode_segment(std::string_view s);

 private:
  nlohmann::json admin(const char* method, const std::string& path, const nlohmann::json* body);

  const std::string url_;
  const Duration connect_timeout_;
  const Duration read_timeout_;
  // Tells this client's per-thread connections apart from an earlier client's.
  const std::uint64_t generation_;
  std::string run_;  // set_run's; "" = resets name no run
  bool force_ = false;
  static std::atomic<std::uint64_t> next_generation_;
};

}  // namespace lockbench::real
