// reward-claim: the advisory-lock article's "first-time welcome reward". A
// customer claims the welcome bonus; the service checks whether it was claimed,
// grants the credit at the partner and records the claim. No row exists before
// the first claim, so there is nothing for SELECT ... FOR UPDATE to lock.
//
//   table claims (customer_id, reward, credit id): empty at the start. Variant
//           reward-claim: no unique key (the article's "without constraints,
//           duplicate rows occur"); reward-claim:unique: a unique key on the
//           customer, the database's own baseline
//   read    SELECT count(*) FROM claims WHERE customer_id = $1: > 0 = already
//           claimed, nothing to do (the service answers "already claimed")
//   partner POST /v1/customers/c<k>/balance_transactions amount=-2500,
//           metadata[reward]=welcome (docs/reference/partner-api.md B: a credit is negative)
//   store   INSERT INTO claims VALUES ($1, 'welcome', $credit_id). Under the
//           unique key a second claim's INSERT fails (unique_violation, 23505):
//           the request answers 500 and its transaction rolls back, but its credit
//           was already granted at the partner. The constraint catches the second
//           insert, never the second credit.
//   oracle  duplicate_reward: more than one credit of one reward for one
//           customer; claim_divergence: the service's claim rows differ from the
//           credits granted (reward-claim:unique: 1 row, 2 credits)
//
// The advisory-lock key. The article hashes a business string to a 64-bit long
// (its LockKeyGenerator takes the first 8 bytes of SHA-256). Here the string is
// "welcome-reward:customer-<k>" and the hash FNV-1a 64 (base/random.hpp's
// fnv1a: offset basis 0xcbf29ce484222325, prime 0x100000001b3; fnv1a("a") =
// 0xaf63dc4c8601ec8c), read as a signed bigint for pg_advisory_xact_lock. Any
// hash with well-spread 64 bits does; FNV-1a needs no library and is the one
// lockbench already uses. The real world salts the key with the run
// (real/pg_conn.cpp advisory_key), which keeps equal hashes equal.
// What a collision costs: two customers whose strings hash alike share one lock.
// They serialize (advisory-xact:wait: the second waits for the first's partner
// call), and with a try-lock one of them gets a spurious 409 although nobody
// claims its reward. It never lets two claims of one customer in: correctness
// does not depend on the hash, only throughput does. With 64 bits and n live
// keys the chance of any collision is about n^2 / 2^65 (1e6 keys: 3e-8).
// scenarios/incidents_test.cpp checks the vectors and provokes a collision
// with a test-only hash.
#include "scenarios/scenarios.hpp"

#include "core/partner_client.hpp"

namespace lockbench {

namespace {

constexpr Table kClaims = 0;
constexpr std::int64_t kCredit = -2500;  // 25.00 EUR granted: a credit is a negative balance transaction
constexpr const char* kReward = "welcome";

std::string customer_id(Key k) { return "c" + std::to_string(k); }

std::string unique_violation(const Plan& p) {
  return "duplicate key value violates unique constraint \"claims_customer_reward_key\" (SQLSTATE 23505): " +
         customer_id(p.key) + " already claimed " + kReward + ", after this request's credit " + p.after.ref;
}

class RewardClaim final : public Scenario {
 public:
  RewardClaim(bool unique, LockHash hash)
      : unique_(unique), hash_(hash), tables_{{"claims", unique, std::nullopt}} {}
  std::string_view name() const override { return unique_ ? "reward-claim:unique" : "reward-claim"; }
  const std::vector<TableSpec>& tables() const override { return tables_; }
  Key lock_key(const RequestCtx& cx) const override {
    return static_cast<Key>(hash_(reward_lock_string(cx.key())));
  }
  std::string lock_string(std::int64_t id) const override { return reward_lock_string(id); }
  int partner_calls() const override { return 1; }

  Task<void> read(RequestCtx& cx, Conn& c, Plan& p) override {
    p.key = cx.key();
    p.before.num = co_await c.count(kClaims, p.key);
    p.before.found = p.before.num > 0;
    p.noop = p.before.found;  // already claimed
    p.amount = kCredit;
    p.after = Row{true, kReward, {}, kCredit, 0};
  }

  Task<Effect> external(RequestCtx& cx, Plan& p, const CallOptions& opt) override {
    PartnerCall credit = PartnerCall::to(PartnerCall::Kind::credit, customer_id(p.key), kReward);
    credit.amount = p.amount;
    credit.currency = "eur";
    credit.op_id = cx.request().id;
    credit.fencing_token = opt.fencing_token;
    const PartnerReply r = co_await call_partner(cx, credit);
    if (!r.success()) co_return refused_or_unknown(r);
    p.after.ref = r.object_id;  // the balance transaction id
    co_return Effect::done;
  }

  Task<bool> store(RequestCtx&, Conn& c, const Plan& p, const Guard&) override {
    const bool inserted = co_await c.insert(kClaims, p.key, p.after);
    // Only a unique key refuses an insert: the claim exists, the credit was granted anyway.
    if (!inserted) throw DbError(unique_violation(p));
    co_return true;
  }

  nlohmann::json partner_reset(const Settings& s) const override {
    return {{"seed", s.seed}, {"persons", nlohmann::json::array()}, {"orders", nlohmann::json::array()}};
  }

  nlohmann::json service_view(const std::vector<StoredRow>& rows) const override {
    // One StoredRow per row: a table without a unique key holds several per customer.
    nlohmann::json claims = nlohmann::json::object();
    for (const auto& r : rows) {
      if (r.table != kClaims) continue;
      auto& n = claims[customer_id(r.key)][kReward];
      n = (n.is_number() ? n.get<std::int64_t>() : 0) + 1;
    }
    return {{"claims", claims}};
  }

 private:
  const bool unique_;
  const LockHash hash_;
  const std::vector<TableSpec> tables_;
};

}  // namespace

std::string reward_lock_string(Key customer) { return "welcome-reward:customer-" + std::to_string(customer); }

std::uint64_t fnv1a_lock_hash(std::string_view s) { return fnv1a(s); }

std::unique_ptr<Scenario> make_reward_claim(bool unique, LockHash hash) {
  return std::make_unique<RewardClaim>(unique, hash);
}
std::unique_ptr<Scenario> make_reward_claim() { return make_reward_claim(false, &fnv1a_lock_hash); }
std::unique_ptr<Scenario> make_reward_claim_unique() { return make_reward_claim(true, &fnv1a_lock_hash); }

}  // namespace lockbench
