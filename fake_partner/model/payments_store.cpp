#include "fake_partner/model/payments_store.hpp"

#include <charconv>
#include <cstdio>
#include <map>

#include "core/random.hpp"

namespace lockbench::partner {

namespace {
std::string numbered(const char* prefix, std::uint64_t n) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s%06llu", prefix, static_cast<unsigned long long>(n));
  return buf;
}
constexpr std::uint64_t kSweepEvery = 4096;
}  // namespace

void PaymentsStore::reset(const std::vector<OrderSeed>& orders) {
  orders_.clear();
  for (const auto& o : orders) orders_.emplace(o.order_id, o);
  charges_.clear();
  refunds_ = 0;
  keys_.clear();
  lookups_since_sweep_ = 0;
}

Charge* PaymentsStore::find(std::string_view id) {
  if (id.size() <= 3 || id.substr(0, 3) != "ch_") return nullptr;
  std::uint64_t n = 0;
  const auto [end, ec] = std::from_chars(id.data() + 3, id.data() + id.size(), n);
  if (ec != std::errc() || end != id.data() + id.size() || n == 0 || n > charges_.size()) return nullptr;
  return &charges_[n - 1];
}

const Charge* PaymentsStore::find(std::string_view id) const { return const_cast<PaymentsStore*>(this)->find(id); }

void PaymentsStore::charge(const Call& call, Reply& reply) {
  if (call.amount <= 0) {
    reply.status = 400;
    reply.error = Error::invalid_amount;
    return;
  }
  Charge c;
  c.id = numbered("ch_", charges_.size() + 1);
  c.amount = call.amount;
  c.currency = call.currency.empty() ? "eur" : call.currency;
  c.order_id = call.order_id;
  charges_.push_back(c);
  reply.status = 200;
  reply.applied = true;
  reply.charge = std::move(c);
}

void PaymentsStore::get(std::string_view charge_id, Reply& reply) const {
  const Charge* c = find(charge_id);
  if (!c) {
    reply.status = 404;
    reply.error = Error::charge_not_found;
    return;
  }
  reply.status = 200;
  reply.charge = *c;
}

void PaymentsStore::refund(std::string_view charge_id, Reply& reply) {
  Charge* c = find(charge_id);
  if (!c) {
    reply.status = 404;
    reply.error = Error::charge_not_found;
    return;
  }
  if (c->refunded) {
    reply.status = 400;
    reply.error = Error::already_refunded;
    return;
  }
  c->refunded = true;
  c->refund_id = numbered("re_", ++refunds_);
  reply.status = 200;
  reply.applied = true;
  reply.charge = *c;
}

std::vector<std::pair<std::string, std::vector<std::string>>> PaymentsStore::live_charges_by_order() const {
  std::map<std::string, std::vector<std::string>> by_order;  // ordered: deterministic reports
  for (const auto& c : charges_)
    if (!c.refunded) by_order[c.order_id].push_back(c.id);
  return {by_order.begin(), by_order.end()};
}

nlohmann::json PaymentsStore::json() const {
  nlohmann::json charges = nlohmann::json::array(), orders = nlohmann::json::array();
  for (const auto& c : charges_)
    charges.push_back({{"id", c.id},
                       {"amount", c.amount},
                       {"currency", c.currency},
                       {"order_id", c.order_id},
                       {"refunded", c.refunded}});
  std::map<std::string, const OrderSeed*> sorted;
  for (const auto& [id, o] : orders_) sorted.emplace(id, &o);
  for (const auto& [id, o] : sorted) orders.push_back({{"order_id", id}, {"amount", o->amount}, {"currency", o->currency}});
  return {{"orders", std::move(orders)}, {"charges", std::move(charges)}, {"idempotency_keys", keys_.size()}};
}

std::uint64_t PaymentsStore::fingerprint(const Call& call) {
  // Canonical parameters in a fixed order, like a form body sorted by name.
  std::string s;
  if (call.endpoint == Endpoint::stripe_refund) {
    s = "POST /v1/refunds charge=" + call.charge_id;
  } else {
    s = "POST /v1/charges amount=" + std::to_string(call.amount) + "&currency=" + call.currency +
        "&metadata[order_id]=" + call.order_id;
  }
  return fnv1a(s);
}

PaymentsStore::KeyEntry PaymentsStore::lookup(std::string_view tenant, std::string_view key, Duration now,
                                              std::string& slot) {
  if (++lookups_since_sweep_ >= kSweepEvery) sweep_expired(now);
  slot.assign(tenant);
  slot += '\n';
  slot += key;
  const auto it = keys_.find(std::string_view(slot));
  if (it == keys_.end()) return {};
  if (it->second.state == KeyState::completed && now >= it->second.expires_at) {
    keys_.erase(it);
    return {};
  }
  return it->second;
}

void PaymentsStore::reserve(const std::string& slot, std::uint64_t fp) {
  auto& e = keys_[slot];
  e.state = KeyState::in_flight;
  e.fingerprint = fp;
}

void PaymentsStore::store(const std::string& slot, const Reply& reply, Duration expires_at) {
  auto& e = keys_[slot];
  e.state = KeyState::completed;
  e.stored = reply;
  e.expires_at = expires_at;
}

void PaymentsStore::release(const std::string& slot) { keys_.erase(slot); }

void PaymentsStore::sweep_expired(Duration now) {
  lookups_since_sweep_ = 0;
  std::erase_if(keys_, [&](const auto& kv) { return kv.second.state == KeyState::completed && now >= kv.second.expires_at; });
}

}  // namespace lockbench::partner
