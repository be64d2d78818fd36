#include "core/side_effects.hpp"

#include "core/metrics.hpp"

namespace lockbench {

std::string_view db_fault_name(DbFault f) {
  const auto i = static_cast<std::size_t>(f);
  return i < kDbFaultCount ? kDbFaultNames[i] : "?";
}

void SideEffects::db_fault(DbFault f) {
  std::lock_guard lock(mu_);
  ++db_faults_.at(static_cast<std::size_t>(f));
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

void SideEffects::queue_enqueued(const std::string& queue) {
  std::lock_guard lock(mu_);
  ++queues_[queue].enqueued;
}

void SideEffects::queue_attempt(const std::string& queue) {
  std::lock_guard lock(mu_);
  ++queues_[queue].attempts;
}

void SideEffects::queue_claim_failed(const std::string& queue) {
  std::lock_guard lock(mu_);
  ++queues_[queue].claim_failures;
}

void SideEffects::queue_done(const std::string& queue, bool refused, double lag_ms) {
  std::lock_guard lock(mu_);
  Queue& q = queues_[queue];
  ++(refused ? q.refused : q.delivered);
  if (!refused) q.lag_ms.push_back(lag_ms);
}

void SideEffects::queue_settled_inline(const std::string& queue) {
  std::lock_guard lock(mu_);
  ++queues_[queue].settled_inline;
}

void SideEffects::bypassed() {
  std::lock_guard lock(mu_);
  ++bypassed_;
}

void SideEffects::entity_saved(bool lock_changed) {
  std::lock_guard lock(mu_);
  ++entity_saves_;
  if (lock_changed) ++lock_stomps_;
}

void SideEffects::partner_guard_event(PartnerGuardEvent e) {
  std::lock_guard lock(mu_);
  ++guard_events_[static_cast<std::size_t>(e)];
}

nlohmann::json SideEffects::json() const {
  std::lock_guard lock(mu_);
  nlohmann::json j;
  nlohmann::json& faults = j["db_faults"] = nlohmann::json::object();
  for (std::size_t i = 0; i < kDbFaultCount; ++i) faults[std::string(kDbFaultNames[i])] = db_faults_[i];
  if (!paid_.empty() || emails_sent_ > 0) {
    std::int64_t lost = 0;
    for (auto k : paid_) lost += emailed_.count(k) ? 0 : 1;
    // Orders the reconciler completed in the background never published their event.
    if (auto it = queues_.find("reconcile"); it != queues_.end()) lost += it->second.delivered;
    j["emails"] = {{"sent", emails_sent_}, {"lost", lost}, {"paid_orders", static_cast<std::int64_t>(paid_.size()) + (queues_.count("reconcile") ? queues_.at("reconcile").delivered : 0)}};
  }
  if (bypassed_ > 0 || entity_saves_ > 0)
    j["side_traffic"] = {{"bypassed", bypassed_}, {"entity_saves", entity_saves_}, {"lock_stomps", lock_stomps_}};
  const auto event = [this](PartnerGuardEvent e) { return guard_events_[static_cast<std::size_t>(e)]; };
  if (event(PartnerGuardEvent::call) > 0)
    j["partner_client"] = {{"calls", event(PartnerGuardEvent::call)},
                           {"retries", event(PartnerGuardEvent::retried)},
                           {"retries_denied", event(PartnerGuardEvent::retry_denied)},
                           {"breaker_opened", event(PartnerGuardEvent::breaker_opened)},
                           {"breaker_rejected", event(PartnerGuardEvent::breaker_rejected)}};
  for (const auto& [name, q] : queues_) {
    Samples lag;
    for (double v : q.lag_ms) lag.add(v);
    const auto lag_q = lag.quantiles({0.5, 0.99});
    j[name] = {{"enqueued", q.enqueued},
               {"delivered", q.delivered},
               {"refused", q.refused},
               {"settled_inline", q.settled_inline},
               {"undelivered", q.enqueued - q.delivered - q.refused - q.settled_inline},
               {"attempts", q.attempts},
               {"claim_failures", q.claim_failures},
               {"lag_ms", {{"p50", lag_q[0]}, {"p99", lag_q[1]}, {"max", lag.max()}}},
               {"lag_histogram_ms", histogram_json(lag)}};
  }
  return j;
}

}  // namespace lockbench
