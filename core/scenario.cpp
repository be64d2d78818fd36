#include "core/scenario.hpp"

#include <algorithm>

#include "core/partner_client.hpp"

namespace lockbench {

namespace {

constexpr std::string_view kProviders[] = {"auth0",   "google-oauth2", "github", "apple",  "facebook", "twitter",
                                           "linkedin", "windowslive",  "gitlab", "slack",  "discord",  "okta",
                                           "saml",     "oidc",         "email",  "sms"};

// Promote one identity to primary: unlink it from the current primary, then
// link the old primary under it (partner-api.md A: there is no single call).
class SwitchPrimary final : public Scenario {
 public:
  std::string_view name() const override { return "switch-primary"; }
  int partner_calls() const override { return 2; }

  Task<Plan> read(RequestCtx& cx, Conn& c) override {
    const UserRow row = co_await c.read_user(cx.key());
    if (!row.found) throw DbError("user " + std::to_string(cx.key()) + " is not in the database");
    Plan p{cx.key(), row.primary_identity, {}, row.version};
    std::vector<std::string> others;
    for (auto& id : identities_of(cx.key(), cx.settings().identities_per_person))
      if (id != row.primary_identity) others.push_back(id);
    p.target = others[cx.request().choice % others.size()];
    co_return p;
  }

  Task<bool> external(RequestCtx& cx, const Plan& p, std::optional<std::uint64_t> token) override {
    const auto op = cx.request().id;
    const PartnerCall unlink{PartnerCall::Kind::unlink, p.current, p.target, op, 1, token};
    const PartnerReply unlinked = co_await call_partner(cx, unlink);
    if (!unlinked.success()) co_return false;
    const PartnerCall link{PartnerCall::Kind::link, p.target, p.current, op, 2, token};
    const PartnerReply linked = co_await call_partner(cx, link);
    // 409 identity_conflict "Specified identity already exists": the old primary is already under
    // the target, which is the state this promotion wants (a retried or
    // concurrent identical promotion got there first). An idempotent client
    // treats it as done; optimistic locking then catches the second writer.
    co_return linked.success() || (linked.status == 409 && linked.error_code == "identity_conflict");
  }

  Task<void> store(RequestCtx&, Conn& c, const Plan& p) override { co_await c.write_user(p.key, p.target); }

  Task<bool> store_if_version(RequestCtx&, Conn& c, const Plan& p) override {
    co_return co_await c.write_user_if_version(p.key, p.target, p.version);
  }
};

// One partner call in the critical section: the simplest shape, an M/G/c queue
// on the pool when the connection is held through it.
class SingleCall final : public Scenario {
 public:
  std::string_view name() const override { return "single-call"; }
  int partner_calls() const override { return 1; }

  Task<Plan> read(RequestCtx& cx, Conn& c) override {
    const UserRow row = co_await c.read_user(cx.key());
    if (!row.found) throw DbError("user " + std::to_string(cx.key()) + " is not in the database");
    co_return Plan{cx.key(), row.primary_identity, row.primary_identity, row.version};
  }

  Task<bool> external(RequestCtx& cx, const Plan& p, std::optional<std::uint64_t> token) override {
    const PartnerCall get{PartnerCall::Kind::get_user, p.current, {}, cx.request().id, 0, token};
    const PartnerReply r = co_await call_partner(cx, get);
    co_return r.success();
  }

  Task<void> store(RequestCtx&, Conn& c, const Plan& p) override { co_await c.write_user(p.key, p.target); }

  Task<bool> store_if_version(RequestCtx&, Conn& c, const Plan& p) override {
    co_return co_await c.write_user_if_version(p.key, p.target, p.version);
  }
};

}  // namespace

std::unique_ptr<Scenario> make_scenario(std::string_view name) {
  if (name == "switch-primary") return std::make_unique<SwitchPrimary>();
  if (name == "single-call") return std::make_unique<SingleCall>();
  throw SettingError("--scenario: '" + std::string(name) + "' is unknown (accepted: switch-primary, single-call)");
}

std::vector<std::string> identities_of(Key key, int n) {
  std::vector<std::string> out;
  const int count = std::clamp(n, 1, static_cast<int>(std::size(kProviders)));
  out.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) out.push_back(std::string(kProviders[i]) + "|u" + std::to_string(key));
  return out;
}

nlohmann::json partner_reset_doc(const Settings& s) {
  // The persons are listed while the list stays well under the partner's
  // 1 MiB body limit (up to about 10,600 keys with 3 identities each; every partner
  // version reads this form). Beyond that, where a list would be refused with
  // 413 anyway, the compact form: persons 1..count with `identities` identities
  // each, named as identities_of() names them, made by the partner when first
  // touched, so a 10-million-key run costs the partner what its requests touch.
  constexpr std::size_t kListedBytesMax = 1000 * 1024;  // the estimate runs about 5 % high
  nlohmann::json persons = nlohmann::json::array();
  std::size_t bytes = 0;
  for (Key k = 1; k <= s.keys; ++k) {
    const auto ids = identities_of(k, s.identities_per_person);
    for (const auto& id : ids) bytes += id.size() + 3;  // "id",
    bytes += ids.front().size() + 30;                  // {"identities":[...],"primary":"..."},
    if (bytes > kListedBytesMax)
      return {{"seed", s.seed},
              {"person_range", {{"count", s.keys}, {"identities", s.identities_per_person}}},
              {"orders", nlohmann::json::array()}};
    persons.push_back({{"identities", ids}, {"primary", ids.front()}});
  }
  return {{"seed", s.seed}, {"persons", persons}, {"orders", nlohmann::json::array()}};
}

}  // namespace lockbench
