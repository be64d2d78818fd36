// checkout: the @Transactional article's CheckoutService. A request creates
// its order as PAYMENT_PENDING, charges it at a Stripe-style payment provider
// (~1.8 s in the article), then marks it PAID with the charge id. Each request
// is a new order; a double click or a client retry resubmits the same one
// (--duplicate-share).
//
//   table orders (id, status, charge_id, amount): unique id, empty at the start
//   read    SELECT status, charge_id, amount FROM orders WHERE id = $1;
//           when absent: INSERT INTO orders VALUES ($1, 'PAYMENT_PENDING', NULL, $amount)
//           ON CONFLICT DO NOTHING (a duplicate submission's insert waits for the
//           first one's transaction, then finds its row); PAID already: nothing to do
//   partner POST /v1/charges amount, currency, metadata[order_id]
//           [Idempotency-Key: checkout-order-<id>, when the strategy sends one]
//   store   UPDATE orders SET status = 'PAID', charge_id = $ch WHERE id = $1 [AND guard]
//   compensate  UPDATE orders SET status = 'FAILED' (the charge was refused for certain)
//   oracle  every succeeded charge belongs to an order the database holds as PAID
//           with that charge id (orphan_charge), no order is PAID without its
//           charge (paid_without_charge), one charge per order (double_charge)
#include "scenarios/scenarios.hpp"

#include "core/partner_client.hpp"

namespace lockbench {

namespace {

constexpr Table kOrders = 0;
constexpr std::int64_t kPrice = 2500;  // 25.00 EUR, in cents
constexpr const char* kPending = "PAYMENT_PENDING";
constexpr const char* kPaid = "PAID";
constexpr const char* kFailed = "FAILED";

std::string order_id(Key k) { return "o" + std::to_string(k); }

class Checkout final : public Scenario {
 public:
  std::string_view name() const override { return "checkout"; }
  const std::vector<TableSpec>& tables() const override {
    static const std::vector<TableSpec> t = {{"orders", true, std::nullopt}};
    return t;
  }
  int partner_calls() const override { return 1; }
  bool fresh_key_per_request() const override { return true; }

  Task<void> read(RequestCtx& cx, Conn& c, Plan& p) override {
    p.key = cx.key();
    Row row = co_await c.read(kOrders, p.key);
    if (!row.found) {
      const Row pending{true, kPending, {}, kPrice, 0};
      if (co_await c.insert(kOrders, p.key, pending)) {
        row = pending;
      } else {
        row = co_await c.read(kOrders, p.key);  // a duplicate submission created it first
        if (!row.found) throw DbError("order " + order_id(p.key) + " vanished after a conflicting insert");
      }
    }
    p.before = row;
    p.amount = row.num;
    p.noop = row.text == kPaid;  // already paid: the service answers 200 with the order
    p.after = Row{true, kPaid, {}, row.num, 0};
  }

  Task<Effect> external(RequestCtx& cx, Plan& p, const CallOptions& opt) override {
    PartnerCall charge = PartnerCall::to(PartnerCall::Kind::charge, order_id(p.key));
    charge.amount = p.amount;
    charge.currency = "eur";
    charge.op_id = cx.request().id;
    charge.fencing_token = opt.fencing_token;
    if (opt.idempotency_key) charge.idempotency_key = "checkout-order-" + std::to_string(p.key);
    const PartnerReply r = co_await call_partner(cx, charge);
    if (!r.success()) co_return refused_or_unknown(r);
    p.after.ref = r.object_id;
    co_return Effect::done;
  }

  Task<bool> store(RequestCtx&, Conn& c, const Plan& p, const Guard& guard) override {
    return c.update(kOrders, p.key, p.after, guard);  // the statement's own coroutine: no wrapper frame
  }

  Task<void> compensate(RequestCtx&, Conn& c, const Plan& p) override {
    const Row failed{true, kFailed, {}, p.amount, 0};
    co_await c.update(kOrders, p.key, failed, Guard::any());
  }

  nlohmann::json partner_reset(const Settings& s) const override {
    return {{"seed", s.seed}, {"persons", nlohmann::json::array()}, {"orders", nlohmann::json::array()}};
  }

  nlohmann::json service_view(const std::vector<StoredRow>& rows) const override {
    nlohmann::json orders = nlohmann::json::object();
    for (const auto& r : rows)
      if (r.table == kOrders) orders[order_id(r.key)] = {{"status", r.row.text}, {"charge_id", r.row.ref}};
    return {{"orders", orders}};
  }
};

}  // namespace

std::unique_ptr<Scenario> make_checkout() { return std::make_unique<Checkout>(); }

}  // namespace lockbench
