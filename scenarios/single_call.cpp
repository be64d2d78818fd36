// single-call: one partner call in the critical section, the simplest shape.
// With a connection held through it, the pool is an M/G/c queue: checked
// against Little's law and Erlang C.
//
//   table users (id, primary_identity): seeded, one row per person
//   read    SELECT primary_identity, version FROM users WHERE id = $1
//   partner GET /api/v2/users/{primary}
//   store   UPDATE users SET primary_identity = $same, version = version + 1 WHERE id = $1 [AND guard]
#include "scenarios/scenarios.hpp"

#include "core/partner_client.hpp"

namespace lockbench {

namespace {

class SingleCall final : public Scenario {
  static constexpr Table kUsers = 0;

 public:
  std::string_view name() const override { return "single-call"; }
  const std::vector<TableSpec>& tables() const override {
    static const std::vector<TableSpec> t = {{"users", true, TableSpec::Seed{"auth0|u", 0}}};
    return t;
  }
  int partner_calls() const override { return 1; }

  Task<void> read(RequestCtx& cx, Conn& c, Plan& p) override {
    const Row row = co_await c.read(kUsers, cx.key());
    if (!row.found) throw DbError("user " + std::to_string(cx.key()) + " is not in the database");
    p.key = cx.key();
    p.before = row;
    p.after.text = row.text;
  }

  Task<Effect> external(RequestCtx& cx, Plan& p, const CallOptions& opt) override {
    PartnerCall get = PartnerCall::to(PartnerCall::Kind::get_user, p.before.text);
    get.op_id = cx.request().id;
    get.fencing_token = opt.fencing_token;
    const PartnerReply r = co_await call_partner(cx, get);
    co_return r.success() ? Effect::done : refused_or_unknown(r);
  }

  Task<bool> store(RequestCtx&, Conn& c, const Plan& p, const Guard& guard) override {
    return c.update(kUsers, p.key, p.after, guard);  // the statement's own coroutine: no wrapper frame
  }

  nlohmann::json partner_reset(const Settings& s) const override { return identity_reset(s); }

  nlohmann::json service_view(const std::vector<StoredRow>& rows) const override {
    return {{"primaries", primaries_of(rows, kUsers)}};
  }
};

}  // namespace

std::unique_ptr<Scenario> make_single_call() { return std::make_unique<SingleCall>(); }

}  // namespace lockbench
