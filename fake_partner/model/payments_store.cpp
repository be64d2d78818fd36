#include "fake_partner/model/payments_store.hpp"

#include <charconv>
#include <cstdio>
#include <map>

#include "base/random.hpp"

namespace lockbench::partner {

namespace {
std::string numbered(const char* prefix, std::uint64_t n) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s%06llu", prefix, static_cast<unsigned long long>(n));
  return buf;
}
constexpr std::uint64_t kSweepEvery = 4096;
}  // namespace

void PaymentsStore::reset(const ResetSpec& spec) {
  orders_.clear();
  for (const auto& o : spec.orders) orders_.emplace(o.order_id, o);
  order_range_ = spec.order_range;
  accounts_.clear();
  for (const auto& a : spec.accounts) accounts_.emplace(a.account_id, a);
  account_range_ = spec.account_range;
  charges_.clear();
  payouts_.clear();
  credits_.clear();
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

std::ptrdiff_t PaymentsStore::charge_index(std::string_view id) const {
  const Charge* c = find(id);
  return c ? c - charges_.data() : -1;
}

std::optional<std::int64_t> PaymentsStore::opening_balance(std::string_view account_id) const {
  if (const auto it = accounts_.find(account_id); it != accounts_.end()) return it->second.balance;
  if (account_range_ && range_index(account_id, "a", account_range_->count) > 0) return account_range_->balance;
  return std::nullopt;
}

void PaymentsStore::payout(const Call& call, Reply& reply) {
  if (call.amount <= 0) {
    reply.status = 400;
    reply.error = Error::invalid_amount;
    return;
  }
  Payout p;
  p.id = numbered("po_", payouts_.size() + 1);
  p.amount = call.amount;
  p.currency = call.currency.empty() ? "eur" : call.currency;
  p.account_id = call.account_id;
  payouts_.push_back(p);
  reply.status = 200;
  reply.applied = true;
  reply.payout = std::move(p);
}

void PaymentsStore::credit(const Call& call, Reply& reply) {
  if (call.amount >= 0) {
    reply.status = 400;
    reply.error = Error::invalid_credit_amount;
    return;
  }
  Credit c;
  c.id = numbered("cbtxn_", credits_.size() + 1);
  c.amount = call.amount;
  c.currency = call.currency.empty() ? "eur" : call.currency;
  c.customer_id = call.customer_id;
  c.reward = call.reward;
  credits_.push_back(c);
  reply.status = 200;
  reply.applied = true;
  reply.credit = std::move(c);
}

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
  nlohmann::json accounts = nlohmann::json::array(), payouts = nlohmann::json::array(),
                 credits = nlohmann::json::array();
  std::map<std::string, const AccountSeed*> sorted_accounts;
  for (const auto& [id, a] : accounts_) sorted_accounts.emplace(id, &a);
  for (const auto& [id, a] : sorted_accounts)
    accounts.push_back({{"account_id", id}, {"balance", a->balance}, {"currency", a->currency}});
  for (const auto& p : payouts_)
    payouts.push_back({{"id", p.id}, {"amount", p.amount}, {"currency", p.currency}, {"account_id", p.account_id}});
  for (const auto& c : credits_)
    credits.push_back({{"id", c.id}, {"amount", c.amount}, {"currency", c.currency}, {"customer", c.customer_id},
                       {"reward", c.reward}});
  nlohmann::json j = {{"orders", std::move(orders)},     {"charges", std::move(charges)},
                      {"accounts", std::move(accounts)}, {"payouts", std::move(payouts)},
                      {"credits", std::move(credits)},   {"idempotency_keys", keys_.size()}};
  if (order_range_) j["order_range"] = {{"count", order_range_->count}, {"amount", order_range_->amount}};
  if (account_range_) j["account_range"] = {{"count", account_range_->count}, {"balance", account_range_->balance}};
  return j;
}

std::uint64_t PaymentsStore::fingerprint(const Call& call) {
  // Canonical parameters in a fixed order, like a form body sorted by name.
  std::string s;
  if (call.endpoint == Endpoint::stripe_refund) {
    s = "POST /v1/refunds charge=" + call.charge_id;
  } else if (call.endpoint == Endpoint::stripe_payout) {
    s = "POST /v1/payouts amount=" + std::to_string(call.amount) + "&currency=" + call.currency +
        "&metadata[account_id]=" + call.account_id;
  } else if (call.endpoint == Endpoint::stripe_credit) {
    s = "POST /v1/customers/" + call.customer_id + "/balance_transactions amount=" + std::to_string(call.amount) +
        "&currency=" + call.currency + "&metadata[reward]=" + call.reward;
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
