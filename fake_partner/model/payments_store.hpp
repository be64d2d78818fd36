// Section B state: orders, charges, refunds, payouts, customer credits, the
// accounts' opening balances and the idempotency table (private).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "fake_partner/model/call.hpp"
#include "fake_partner/model/config.hpp"
#include "fake_partner/model/identity_store.hpp"  // StringHash

namespace lockbench::partner {

class PaymentsStore {
 public:
  void reset(const ResetSpec& spec);

  // The calls; they fill reply.status / error / applied / charge / payout / credit.
  void charge(const Call& call, Reply& reply);
  void get(std::string_view charge_id, Reply& reply) const;
  void refund(std::string_view charge_id, Reply& reply);
  void payout(const Call& call, Reply& reply);
  void credit(const Call& call, Reply& reply);

  // Charges that succeeded and are not refunded, per order id (sorted by order id).
  std::vector<std::pair<std::string, std::vector<std::string>>> live_charges_by_order() const;
  // nullptr for an id that names no charge.
  const Charge* find_charge(std::string_view id) const { return find(id); }
  // "ch_<n>" -> n - 1, the index in charges(); -1 when not a charge id.
  std::ptrdiff_t charge_index(std::string_view id) const;
  const std::vector<Charge>& charges() const { return charges_; }
  const std::vector<Payout>& payouts() const { return payouts_; }
  const std::vector<Credit>& credits() const { return credits_; }
  // The opening balance the reset gave the account (listed, else from account_range); nullopt = not seeded.
  std::optional<std::int64_t> opening_balance(std::string_view account_id) const;
  nlohmann::json json() const;

  // ---- idempotency table, scoped per tenant and key ----
  enum class KeyState : std::uint8_t { absent, in_flight, completed };
  struct KeyEntry {
    KeyState state = KeyState::absent;
    std::uint64_t fingerprint = 0;
    Reply stored;            // completed: the answer replayed
    Duration expires_at{0};  // completed: idem_ttl after completion
  };
  // Fingerprint = method + path + canonical parameters.
  static std::uint64_t fingerprint(const Call& call);
  // The entry for (tenant, key), with an expired one treated as absent; slot
  // receives the table key for later calls to store()/release().
  KeyEntry lookup(std::string_view tenant, std::string_view key, Duration now, std::string& slot);
  void reserve(const std::string& slot, std::uint64_t fingerprint);
  void store(const std::string& slot, const Reply& reply, Duration expires_at);
  void release(const std::string& slot);
  std::size_t key_count() const { return keys_.size(); }

 private:
  Charge* find(std::string_view id);
  const Charge* find(std::string_view id) const;
  void sweep_expired(Duration now);

  std::unordered_map<std::string, OrderSeed, StringHash, std::equal_to<>> orders_;
  std::optional<OrderRange> order_range_;
  std::unordered_map<std::string, AccountSeed, StringHash, std::equal_to<>> accounts_;
  std::optional<AccountRange> account_range_;
  std::vector<Charge> charges_;  // "ch_<n>" is charges_[n - 1]
  std::vector<Payout> payouts_;  // "po_<n>" is payouts_[n - 1]
  std::vector<Credit> credits_;  // "cbtxn_<n>" is credits_[n - 1]
  std::uint64_t refunds_ = 0;
  std::unordered_map<std::string, KeyEntry, StringHash, std::equal_to<>> keys_;
  std::uint64_t lookups_since_sweep_ = 0;  // expired keys are swept every few thousand lookups: bounded table
};

}  // namespace lockbench::partner
