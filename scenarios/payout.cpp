// payout: the advisory-lock article's opening incident. A payout webhook for an
// account is delivered twice, to two pods, ~5 ms apart (--duplicate-share 1
// --duplicate-gap 5ms --pods 2). Each pod reads the balance, validates it, pays
// out at the partner's payouts API and stores the new balance:
//   Pod A: reads balance (100.00) -> validates -> pays out -> stores 0
//   Pod B: reads balance (100.00) -> validates -> pays out -> stores 0
// Both saw the balance before either stored it: 200.00 left an account of 100.00.
//
//   table accounts (id, balance): seeded, one row per account a1..aK, each
//           with the opening balance kOpening (num)
//   read    SELECT balance, version FROM accounts WHERE id = $1; balance < amount:
//           nothing to do (the service answers "already paid out / insufficient")
//   partner POST /v1/payouts amount, currency, metadata[account_id] = a<k>
//           [Idempotency-Key: payout-<webhook>, when the strategy sends one: the
//           webhook's own event id, the same for both deliveries]
//   store   UPDATE accounts SET balance = balance_read - amount, ref = payout id WHERE id = $1 [AND guard]
//   oracle  overdrawn: the payouts of an account exceed its opening balance;
//           balance_divergence: the stored balance is not opening - paid out
//
// Twins and pods. Requests are numbered in arrival order and pod = id % pods. A
// twin arrives within --duplicate-gap of its original; when nothing else
// arrives in between, their ids are consecutive and they land on different
// pods (with --pods 2). At 2 webhooks/s and a 5 ms gap that is about 98 % of
// twins: `synchronized` on two pods overdraws 105 accounts where `none`
// overdraws 107 (tests/cli/cli_incidents_test.cpp checks it, both worlds'
// reference results in results/incidents show it).
#include "scenarios/scenarios.hpp"

#include "core/partner_client.hpp"

namespace lockbench {

namespace {

constexpr Table kAccounts = 0;
constexpr std::int64_t kOpening = 10000;  // 100.00 EUR, in cents
constexpr std::int64_t kPayout = 10000;   // the webhook pays out the whole balance, as in the article

std::string account_id(Key k) { return "a" + std::to_string(k); }

class Payout final : public Scenario {
 public:
  std::string_view name() const override { return "payout"; }
  const std::vector<TableSpec>& tables() const override {
    static const std::vector<TableSpec> t = {{"accounts", true, TableSpec::Seed{"a", kOpening}}};
    return t;
  }
  int partner_calls() const override { return 1; }

  Task<void> read(RequestCtx& cx, Conn& c, Plan& p) override {
    const Row row = co_await c.read(kAccounts, cx.key());
    if (!row.found) throw DbError("account " + account_id(cx.key()) + " is not in the database");
    p.key = cx.key();
    p.before = row;
    p.amount = kPayout;
    p.noop = row.num < kPayout;  // validate: already paid out, or not enough left
    p.after = Row{true, row.text, {}, row.num - kPayout, 0};
    // The webhook's event id: the same for both deliveries of one webhook.
    p.target = "payout-" + std::to_string(cx.key()) + "-" + std::to_string(cx.request().choice % 1000000007);
  }

  Task<Effect> external(RequestCtx& cx, Plan& p, const CallOptions& opt) override {
    PartnerCall payout = PartnerCall::to(PartnerCall::Kind::payout, account_id(p.key));
    payout.amount = p.amount;
    payout.currency = "eur";
    payout.op_id = cx.request().id;
    payout.fencing_token = opt.fencing_token;
    if (opt.idempotency_key) payout.idempotency_key = p.target;
    const PartnerReply r = co_await call_partner(cx, payout);
    if (!r.success()) co_return refused_or_unknown(r);
    p.after.ref = r.object_id;  // the payout id, stored beside the new balance
    co_return Effect::done;
  }

  Task<bool> store(RequestCtx&, Conn& c, const Plan& p, const Guard& guard) override {
    return c.update(kAccounts, p.key, p.after, guard);  // the statement's own coroutine: no wrapper frame
  }

  nlohmann::json partner_reset(const Settings& s) const override {
    // The compact form: account a<k> (1..keys) opens with kOpening.
    return {{"seed", s.seed},
            {"persons", nlohmann::json::array()},
            {"orders", nlohmann::json::array()},
            {"account_range", {{"count", s.keys}, {"balance", kOpening}, {"currency", "eur"}}}};
  }

  nlohmann::json service_view(const std::vector<StoredRow>& rows) const override {
    nlohmann::json balances = nlohmann::json::object();
    for (const auto& r : rows)
      if (r.table == kAccounts) balances[account_id(r.key)] = r.row.num;
    return {{"balances", balances}};
  }
};

}  // namespace

std::unique_ptr<Scenario> make_payout() { return std::make_unique<Payout>(); }

}  // namespace lockbench
