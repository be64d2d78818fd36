// SideEffects: what the service counts about work that outlives a request's
// answer, and the database faults a run injected. Both worlds fill it through
// RequestCtx::recorder().effects; the result carries its json() at the top level:
//   db_faults{commit_fail, conn_lost}            injected faults (named fault sites, seeded)
//   emails{sent, lost, paid_orders}              after-commit's listener (present when used)
//   outbox{enqueued, delivered, refused, settled_inline, undelivered, attempts,
//          claim_failures, lag_ms{p50, p99, max}, lag_histogram_ms}
//                                                the outbox's pollers (present when used)
//   reconcile{...the same}                       split-tx's reconciler (present when used)
//   partner_client{calls, retries, retries_denied, breaker_opened, breaker_rejected}
//                                                the client's circuit breaker and retry budget
//                                                (present when either is on)
//   side_traffic{bypassed, entity_saves, lock_stomps}
//                                                traffic beside the lock (strategies/side_traffic.hpp;
//                                                present when used)
// Thread-safe: real-world workers and pollers write concurrently. Recorder owns
// one (core/metrics.hpp includes this header, so it includes no metrics).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace lockbench {

// A new kind goes before count_, with its name in kDbFaultNames (a test checks both).
enum class DbFault { commit_fail, conn_lost, count_ };
inline constexpr std::size_t kDbFaultCount = static_cast<std::size_t>(DbFault::count_);
// Each kind's name, by its value: the keys of the result's db_faults.
inline constexpr std::array<std::string_view, kDbFaultCount> kDbFaultNames = {"commit_fail", "conn_lost"};
std::string_view db_fault_name(DbFault f);  // "commit_fail", "conn_lost"

// The partner client's guards (core/client_policy.hpp), as call_partner meets them.
enum class PartnerGuardEvent {
  call,              // a call made with a guard (retries included in the call)
  retried,           // a retry the budget allowed
  retry_denied,      // a retry the budget refused: the call ends with its failure
  breaker_opened,    // the breaker went open (from closed or half-open)
  breaker_rejected,  // an attempt refused at once while open: it never left the pod
  count_
};

class SideEffects {
 public:
  void db_fault(DbFault f);
  // after-commit: the order's PAID commit returned, so its event was published.
  void paid_committed(std::int64_t order);
  // after-commit: the listener's email went out.
  void email_sent(std::int64_t order);
  // A delivery queue (the outbox, split-tx's reconciliation), by its name in
  // the result: a row was committed beside its order.
  void queue_enqueued(const std::string& queue);
  // One delivery attempt by a poller (a claim that reached the partner).
  void queue_attempt(const std::string& queue);
  // A claim or a mark failed on the database (the row stays due).
  void queue_claim_failed(const std::string& queue);
  // A poller finished the row: delivered (lag = done - enqueued) or refused by the partner.
  void queue_done(const std::string& queue, bool refused, double lag_ms);
  // The request itself finished the row's work (split-tx's second transaction).
  void queue_settled_inline(const std::string& queue);
  // Traffic beside the lock (strategies/side_traffic.hpp): a request that ran
  // without the lock (--bypass-share); a second code path's entity save, and
  // whether it changed the lock columns (wrote back a lock value no longer there).
  void bypassed();
  void entity_saved(bool lock_changed);
  void partner_guard_event(PartnerGuardEvent e);
  nlohmann::json json() const;

 private:
  mutable std::mutex mu_;
  // GUARDED_BY(mu_): everything below.
  std::array<std::int64_t, kDbFaultCount> db_faults_{};  // by DbFault
  std::set<std::int64_t> paid_, emailed_;
  std::int64_t emails_sent_ = 0;
  std::int64_t bypassed_ = 0, entity_saves_ = 0, lock_stomps_ = 0;
  std::array<std::int64_t, static_cast<std::size_t>(PartnerGuardEvent::count_)> guard_events_{};
  struct Queue {
    std::int64_t enqueued = 0, delivered = 0, refused = 0, settled_inline = 0, attempts = 0, claim_failures = 0;
    std::vector<double> lag_ms;
  };
  std::map<std::string, Queue> queues_;
};

}  // namespace lockbench
