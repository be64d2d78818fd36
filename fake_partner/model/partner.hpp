// The fake partner's state model and oracle: one library, two fronts (the HTTP
// server in fake_partner/server and the simulator's partner).
//
// No sockets, no threads, no clocks: time comes in as `now` (nanoseconds since
// an epoch the caller chooses; X-RateLimit-Reset is in seconds of that epoch).
// NOT thread-safe: the HTTP server serialises access, the simulator is
// single-threaded.
//
// One call has three phases:
//   Plan p = partner.arrive(call, tags, t0);   // rate limit, latency, fault; now in flight
//   Reply r = partner.execute(p.call_id, t0 + p.apply_after);  // the effect (unless faulted before it)
//   partner.complete(p.call_id, t0 + p.delay);  // the answer left, or the connection died
// Every arrive() must be followed by exactly one execute() and one complete(),
// in that order, with non-decreasing `now`.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "base/units.hpp"
#include "fake_partner/model/call.hpp"
#include "fake_partner/model/check.hpp"
#include "fake_partner/model/config.hpp"

namespace lockbench::partner {

// How the answer of a call ended, told to complete().
enum class Delivery : std::uint8_t {
  as_planned,  // the answer left as the plan's fault says (a reset/hang/truncate/garbage loses it)
  lost,        // the client gave up or the connection died first: the answer was lost
};

class Partner {
 public:
  explicit Partner(Config cfg = {});
  ~Partner();
  Partner(Partner&&) noexcept;
  Partner& operator=(Partner&&) noexcept;

  // Seeds persons, orders and accounts (listed or as ranges), re-seeds the random streams (spec.seed or the
  // config seed), clears calls in flight, idempotency keys, checks and metrics.
  void reset(const ResetSpec& spec, Duration now);

  // The call arrives: rate limit, sample latency and fault, idempotency and
  // object lock decisions, register in flight (witness overlap_person / order_overlap).
  // `call` is read during arrive() only (a Call converts to a CallView).
  Plan arrive(const CallView& call, const Tags& tags, Duration now);
  // The effect happens now (arrival + apply_after) unless the fault is before
  // the effect or the call was refused; returns the answer to send.
  // Throws std::out_of_range for an unknown call id (e.g. forgotten by reset),
  // std::logic_error for one already executed.
  Reply execute(std::uint64_t call_id, Duration now);
  // The same, written into `out` (cleared first): a caller that keeps one Reply keeps its strings.
  void execute(std::uint64_t call_id, Duration now, Reply& out);
  // The answer left (or the connection died): the call is no longer in flight.
  // Throws std::out_of_range for an unknown call id, std::logic_error for one not executed.
  void complete(std::uint64_t call_id, Duration now, Delivery delivery = Delivery::as_planned);

  // State checks (persons idle now, payments) + witness and episode counts since reset.
  CheckReport check(Duration now, const CheckInput& input = {});
  // The same, compared with what the service's database stored (the two-sided verdict).
  CheckReport check(Duration now, const ServiceView& service);

  // Off: replies carry no body lists (auth0's user_id and identities stay empty);
  // everything else, the oracle included, is unchanged. The simulator turns them
  // off: it reads only status, error, applied, replayed and the charge id. On by default.
  void set_reply_lists(bool on);

  std::size_t inflight() const;
  // Persons that exist in the model: listed ones plus range persons touched so far.
  std::size_t persons_touched() const;
  nlohmann::json state_json() const;    // users, persons, charges, idempotency keys, in flight
  nlohmann::json metrics_json() const;  // counters per endpoint and status, faults, in-flight gauge, violations
  std::string metrics_prometheus() const;  // the same in the Prometheus text exposition format
  void reset_metrics();

  const Config& config() const;
  // JSON merge patch onto the current document; throws SettingError and
  // changes nothing on a bad value. A new seed re-seeds the random streams.
  void update_config(const nlohmann::json& partial);
  void set_config(Config cfg);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lockbench::partner
