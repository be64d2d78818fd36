// SideEffects: what the service counts about work that outlives a request's
// answer, and the database faults a run injected. Both worlds fill it through
// RequestCtx::recorder().effects; the result carries its json() at the top level:
//   db_faults{commit_fail, conn_lost}            injected faults (named fault sites, seeded)
//   emails{sent, lost, paid_orders}              after-commit's listener (present when used)
//   outbox{enqueued, delivered, refused, undelivered, attempts, claim_failures,
//          lag_ms{p50, p99, max}, lag_histogram_ms}      the outbox's pollers (present when used)
// Thread-safe: real-world workers and pollers write concurrently. Recorder owns
// one (core/metrics.hpp includes this header, so it includes no metrics).
#pragma once

#include <cstdint>
#include <mutex>
#include <set>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>


namespace lockbench {

enum class DbFault { commit_fail, conn_lost };
std::string_view db_fault_name(DbFault f);  // "commit_fail", "conn_lost"

class SideEffects {
 public:
  void db_fault(DbFault f);
  // after-commit: the order's PAID commit returned, so its event was published.
  void paid_committed(std::int64_t order);
  // after-commit: the listener's email went out.
  void email_sent(std::int64_t order);
  // outbox: a row was committed beside its order.
  void outbox_enqueued();
  // outbox: one delivery attempt (a claim that reached the partner).
  void outbox_attempt();
  // outbox: a claim or a mark failed on the database (the row stays due).
  void outbox_claim_failed();
  // outbox: the row is done: delivered (lag = done - enqueued) or refused by the partner.
  void outbox_done(bool refused, double lag_ms);
  nlohmann::json json() const;

 private:
  mutable std::mutex mu_;
  // GUARDED_BY(mu_): everything below.
  std::int64_t commit_fail_ = 0, conn_lost_ = 0;
  std::set<std::int64_t> paid_, emailed_;
  std::int64_t emails_sent_ = 0;
  bool outbox_used_ = false;
  std::int64_t enqueued_ = 0, delivered_ = 0, refused_ = 0, attempts_ = 0, claim_failures_ = 0;
  std::vector<double> lag_ms_;
};

}  // namespace lockbench
