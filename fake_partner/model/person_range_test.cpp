// Compact resets: persons, orders and accounts generated from a range come into
// being when first touched, so a reset of millions costs nothing until used.
#include "fake_partner/model/test_support.hpp"

#include <set>

#include "base/random.hpp"

namespace lockbench::partner {
namespace {
using testing::Harness;
using testing::instant_config;
using testing::op;

ResetSpec range(std::int64_t count, int identities) {
  ResetSpec r;
  r.person_range = PersonRange{count, identities};
  return r;
}

TEST(PersonRange, ARangePersonComesIntoBeingWhenFirstTouchedWithItsSeededIdentities) {
  Harness h(instant_config(), range(10, 3));
  EXPECT_EQ(h.partner.persons_touched(), 0u);
  const Reply r = h.call(Call::get_user("auth0|u7"));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.identities, (std::vector<std::string>{"auth0|u7", "google-oauth2|u7", "github|u7"}));
  EXPECT_EQ(h.partner.persons_touched(), 1u);
  EXPECT_EQ(h.call(Call::get_user("google-oauth2|u8")).status, 404);  // person 8 exists, but that is not a user
  EXPECT_EQ(h.partner.persons_touched(), 2u);
  // Outside the range: not a person, nothing comes into being.
  EXPECT_EQ(h.call(Call::get_user("auth0|u11")).status, 404);
  EXPECT_EQ(h.call(Call::get_user("apple|u1")).status, 404);
  EXPECT_EQ(h.call(Call::get_user("auth0|u07")).status, 404);
  EXPECT_EQ(h.partner.persons_touched(), 2u);
}

TEST(PersonRange, PromotionsOfRangePersonsAreJudgedLikeListedOnes) {
  Harness h(instant_config(), range(100, 2));
  EXPECT_EQ(h.call(Call::unlink("auth0|u5", "google-oauth2|u5"), op(1, 1)).status, 200);
  EXPECT_EQ(h.call(Call::link("google-oauth2|u5", "auth0|u5"), op(1, 2)).status, 201);
  EXPECT_EQ(h.call(Call::unlink("auth0|u6", "google-oauth2|u6"), op(2, 1)).status, 200);  // abandoned
  const CheckReport r = h.check();
  EXPECT_EQ(r.count("person_split"), 1);
  EXPECT_EQ(r.violations.at(0).subject, "auth0|u6");
  EXPECT_EQ(h.partner.state_json()["persons"].size(), 2u);
}

TEST(PersonRange, ListedPersonsAndRangesMixAndMayNotShareAnIdentity) {
  const auto doc = nlohmann::json::parse(R"({"persons": [{"identities": ["auth0|x", "github|x"]}],
      "person_range": {"count": 5, "identities": 2}, "order_range": {"count": 3, "amount": 700},
      "account_range": {"count": 4, "balance": 100}, "accounts": [{"account_id": "vip", "balance": 5}]})");
  const ResetSpec spec = ResetSpec::from_json(doc);
  EXPECT_EQ(ResetSpec::from_json(spec.to_json()).to_json(), spec.to_json());
  Harness h(instant_config(), spec);
  EXPECT_EQ(h.call(Call::get_user("auth0|x")).status, 200);
  EXPECT_EQ(h.call(Call::get_user("auth0|u5")).status, 200);
  const auto refused = [](const char* json, const char* path) {
    try {
      ResetSpec::from_json(nlohmann::json::parse(json));
    } catch (const SettingError& e) {
      return std::string(e.what()).rfind(path, 0) == 0;
    }
    return false;
  };
  EXPECT_TRUE(refused(R"({"persons": [{"identities": ["auth0|u2"]}], "person_range": {"count": 5}})", "reset.persons[0]"));
  EXPECT_TRUE(refused(R"({"person_range": {"count": 5, "identities": 17}})", "reset.person_range.identities"));
  EXPECT_TRUE(refused(R"({"person_range": {"count": -1}})", "reset.person_range.count"));
  EXPECT_TRUE(refused(R"({"person_range": {"identities": 2}})", "reset.person_range.count"));
  EXPECT_TRUE(refused(R"({"person_range": {"count": 2, "size": 1}})", "reset.person_range.size"));
  EXPECT_TRUE(refused(R"({"accounts": [{"account_id": "a1"}]})", "reset.accounts[0].balance"));
  EXPECT_TRUE(refused(R"({"accounts": [{"account_id": "a2", "balance": 1}], "account_range": {"count": 3}})", "reset.accounts[0]"));
  EXPECT_TRUE(refused(R"({"orders": [{"order_id": "o1"}], "order_range": {"count": 3}})", "reset.orders[0]"));
  EXPECT_TRUE(refused(R"({"people": []})", "reset.people"));
}

TEST(PersonRange, AccountRangeGivesOpeningBalancesForOverdrawn) {
  ResetSpec spec;
  spec.account_range = AccountRange{1000, 500, "eur"};
  Harness h(instant_config(), spec);
  h.call(Call::payout("a999", 300, "eur"), op(1));
  h.call(Call::payout("a999", 300, "eur"), op(2));
  h.call(Call::payout("a1000", 500, "eur"), op(3));
  h.call(Call::payout("a1001", 900, "eur"), op(4));  // not seeded: no opening balance, no verdict
  const CheckReport r = h.check();
  EXPECT_EQ(r.count("overdrawn"), 1);
  EXPECT_EQ(r.violations.at(0).subject, "a999");
}

// Issue 14's scale: ten million persons, two thousand promotions. Memory and work follow the
// touched persons (asserted by count, not by time; bench: partner_model_throughput --range).
TEST(PersonRange, TenMillionPersonsAndTwoThousandPromotionsTouchOnlyThePromotedPersons) {
  Harness h(instant_config(), range(10'000'000, 2));
  Rng rng(42, "persons");
  std::set<std::int64_t> promoted;
  for (std::uint64_t i = 1; i <= 2000; ++i) {
    const std::int64_t k = 1 + static_cast<std::int64_t>(rng.next() % 10'000'000);
    const std::string a = "auth0|u" + std::to_string(k), g = "google-oauth2|u" + std::to_string(k);
    const bool fresh = promoted.insert(k).second;
    // A promoted person's primary is google-oauth2 now; promote back to auth0 in that case.
    const std::string& from = fresh ? a : g;
    const std::string& to = fresh ? g : a;
    ASSERT_EQ(h.call(Call::unlink(from, to), op(i, 1)).status, 200);
    ASSERT_EQ(h.call(Call::link(to, from), op(i, 2)).status, 201);
    if (!fresh) promoted.erase(k);
  }
  EXPECT_LE(h.partner.persons_touched(), 2000u);
  EXPECT_GE(h.partner.persons_touched(), 1990u);  // collisions among 10M are rare
  const CheckReport r = h.check();
  for (auto kind : kCheckKinds) EXPECT_EQ(r.count(kind), 0) << kind;
  EXPECT_GE(r.episodes, 2000);
}

}  // namespace
}  // namespace lockbench::partner
