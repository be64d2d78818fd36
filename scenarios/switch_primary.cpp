// switch-primary: promote one identity to primary at an identity provider
// (docs/reference/partner-api.md A). There is no single call: unlink the target identity from
// the current primary, then link the old primary under the target. Two
// promotions of one person that interleave split it over two users: the
// double-link race of the first article.
//
//   table users (id, primary_identity): seeded, one row per person
//   read    SELECT primary_identity, version FROM users WHERE id = $1
//   partner DELETE /api/v2/users/{primary}/identities/{target}
//           POST   /api/v2/users/{target}/identities {primary}
//   store   UPDATE users SET primary_identity = $target, version = version + 1 WHERE id = $1 [AND guard]
//   oracle  the partner's primary of each person = users.primary_identity
#include "scenarios/scenarios.hpp"

#include <utility>

#include "core/partner_client.hpp"

namespace lockbench {

namespace {

constexpr Table kUsers = 0;

// The plan's current primary (before.text) and target (after.text) lent to a
// partner call as its subject and identity, and moved back on destruction,
// whichever way round the call holds them by then (the link swaps them).
class Lent {
 public:
  Lent(Plan& p, PartnerCall& call) : p_(p), call_(call) {
    call_.subject = std::move(p_.before.text);
    call_.identity = std::move(p_.after.text);
  }
  ~Lent() {
    const bool swapped = call_.kind == PartnerCall::Kind::link;
    p_.before.text = std::move(swapped ? call_.identity : call_.subject);
    p_.after.text = std::move(swapped ? call_.subject : call_.identity);
  }
  Lent(const Lent&) = delete;
  Lent& operator=(const Lent&) = delete;

 private:
  Plan& p_;
  PartnerCall& call_;
};

class SwitchPrimary final : public Scenario {
 public:
  std::string_view name() const override { return "switch-primary"; }
  const std::vector<TableSpec>& tables() const override {
    static const std::vector<TableSpec> t = {{"users", true, TableSpec::Seed{"auth0|u", 0}}};
    return t;
  }
  int partner_calls() const override { return 2; }

  Task<void> read(RequestCtx& cx, Conn& c, Plan& p) override {
    p.before = co_await c.read(kUsers, cx.key());
    if (!p.before.found) throw DbError("user " + std::to_string(cx.key()) + " is not in the database");
    p.key = cx.key();
    // The identity to promote is what store() writes: kept once, in p.after.text (not also in p.target).
    p.after.text = other_identity(cx.key(), cx.settings().identities_per_person, p.before.text, cx.request().choice);
  }

  Task<Effect> external(RequestCtx& cx, Plan& p, const CallOptions& opt) override {
    // One call object for both steps, holding the plan's own strings: they are
    // lent to it (moved, not copied) and given back when this coroutine ends,
    // however it ends. The link's subject and identity are the unlink's swapped.
    PartnerCall call;
    call.kind = PartnerCall::Kind::unlink;
    call.op_id = cx.request().id;
    call.op_step = 1;
    call.fencing_token = opt.fencing_token;
    const Lent lent(p, call);
    const PartnerReply unlinked = co_await call_partner(cx, call);
    if (!unlinked.success()) co_return refused_or_unknown(unlinked);
    call.kind = PartnerCall::Kind::link;  // POST /users/{target}/identities {old primary}
    call.subject.swap(call.identity);
    call.op_step = 2;
    const PartnerReply linked = co_await call_partner(cx, call);
    // 409 identity_conflict "Specified identity already exists": the old primary is already under
    // the target, which is the state this promotion wants (a retried or
    // concurrent identical promotion got there first). An idempotent client
    // treats it as done; optimistic locking then catches the second writer.
    if (linked.success() || (linked.status == 409 && linked.error_code == "identity_conflict")) co_return Effect::done;
    co_return Effect::unknown;  // the unlink happened: a partial effect
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

std::unique_ptr<Scenario> make_switch_primary() { return std::make_unique<SwitchPrimary>(); }

nlohmann::json identity_reset(const Settings& s) {
  // The compact form: person k has identities_of(k, n), primary auth0|u<k>; the
  // partner makes each person when first touched, so 10 M keys cost nothing.
  return {{"seed", s.seed},
          {"person_range", {{"count", s.keys}, {"identities", s.identities_per_person}}},
          {"orders", nlohmann::json::array()}};
}

nlohmann::json primaries_of(const std::vector<StoredRow>& rows, Table users) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& r : rows)
    if (r.table == users) out["auth0|u" + std::to_string(r.key)] = r.row.text;
  return out;
}

}  // namespace lockbench
