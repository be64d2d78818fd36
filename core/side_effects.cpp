#include "core/side_effects.hpp"

#include "core/metrics.hpp"

namespace lockbench {

std::string_view db_fault_name(DbFault f) { return f == DbFault::commit_fail ? "commit_fail" : "conn_lost"; }

void SideEffects::db_fault(DbFault f) {
  std::lock_guard lock(mu_);
  ++(f == DbFault::commit_fail ? commit_fail_ : conn_lost_);
}

void SideEffects::paid_committed(std::int64_t order) {
  std::lock_guard lock(mu_);
  paid_.insert(order);
}

void SideEffects::email_sent(std::int64_t order) {
  std::lock_guard lock(mu_);
  ++emails_sent_;
  emailed_.insert(order);
}

void SideEffects::outbox_enqueued() {
  std::lock_guard lock(mu_);
  outbox_used_ = true;
  ++enqueued_;
}

void SideEffects::outbox_attempt() {
  std::lock_guard lock(mu_);
  ++attempts_;
}

void SideEffects::outbox_claim_failed() {
  std::lock_guard lock(mu_);
  ++claim_failures_;
}

void SideEffects::outbox_done(bool refused, double lag_ms) {
  std::lock_guard lock(mu_);
  outbox_used_ = true;
  ++(refused ? refused_ : delivered_);
  if (!refused) lag_ms_.push_back(lag_ms);
}

nlohmann::json SideEffects::json() const {
  std::lock_guard lock(mu_);
  nlohmann::json j;
  j["db_faults"] = {{"commit_fail", commit_fail_}, {"conn_lost", conn_lost_}};
  if (!paid_.empty() || emails_sent_ > 0) {
    std::int64_t lost = 0;
    for (auto k : paid_) lost += emailed_.count(k) ? 0 : 1;
    j["emails"] = {{"sent", emails_sent_}, {"lost", lost}, {"paid_orders", static_cast<std::int64_t>(paid_.size())}};
  }
  if (outbox_used_) {
    Samples lag;
    for (double v : lag_ms_) lag.add(v);
    j["outbox"] = {{"enqueued", enqueued_},
                   {"delivered", delivered_},
                   {"refused", refused_},
                   {"undelivered", enqueued_ - delivered_ - refused_},
                   {"attempts", attempts_},
                   {"claim_failures", claim_failures_},
                   {"lag_ms", {{"p50", lag.quantile(0.5)}, {"p99", lag.quantile(0.99)}, {"max", lag.max()}}},
                   {"lag_histogram_ms", histogram_json(lag)}};
  }
  return j;
}

}  // namespace lockbench
