// Section A: every status, message and error body of the identity provider.
#include "fake_partner/model/test_support.hpp"

#include "base/random.hpp"
#include "fake_partner/model/identity_store.hpp"

namespace lockbench::partner {
namespace {
using testing::Harness;
using testing::instant_config;
using testing::three_identities;

std::vector<std::string> ids(std::initializer_list<const char*> l) { return {l.begin(), l.end()}; }

TEST(IdentityProvider, GetReturnsTheUserWithItsIdentitiesPrimaryFirst) {
  Harness h;
  const Reply r = h.call(Call::get_user("auth0|u1"));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.user_id, "auth0|u1");
  EXPECT_EQ(r.identities, ids({"auth0|u1", "google-oauth2|u1"}));
  EXPECT_EQ(r.body()["identities"][1]["provider"], "google-oauth2");
  EXPECT_EQ(r.body()["identities"][1]["user_id"], "u1");
}

TEST(IdentityProvider, GetOfAnAbsentUserIs404WithTheAuth0ErrorBody) {
  Harness h;
  const Reply r = h.call(Call::get_user("auth0|nobody"));
  EXPECT_EQ(r.status, 404);
  const auto b = r.body();
  EXPECT_EQ(b["statusCode"], 404);
  EXPECT_EQ(b["error"], "Not Found");
  EXPECT_EQ(b["message"], "The user does not exist.");
  EXPECT_EQ(b["errorCode"], "inexistent_user");
}

TEST(IdentityProvider, GetOfAnIdentityLinkedUnderAnotherUserIs404) {
  Harness h;
  EXPECT_EQ(h.call(Call::get_user("google-oauth2|u1")).status, 404);
}

TEST(IdentityProvider, UnlinkRemovesTheIdentityWhichBecomesAStandaloneUser) {
  Harness h;
  const Reply r = h.call(Call::unlink("auth0|u1", "google-oauth2|u1"));
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(r.applied);
  EXPECT_EQ(r.identities, ids({"auth0|u1"}));
  EXPECT_TRUE(r.body().is_array());
  const Reply s = h.call(Call::get_user("google-oauth2|u1"));
  EXPECT_EQ(s.status, 200);
  EXPECT_EQ(s.identities, ids({"google-oauth2|u1"}));
}

TEST(IdentityProvider, UnlinkOfTheMainIdentityIs400) {
  Harness h;
  const Reply r = h.call(Call::unlink("auth0|u1", "auth0|u1"));
  EXPECT_EQ(r.status, 400);
  EXPECT_FALSE(r.applied);
  EXPECT_EQ(r.body()["message"], "Main identity cannot be removed.");
  EXPECT_EQ(r.body()["error"], "Bad Request");
}

TEST(IdentityProvider, UnlinkOfAnIdentityNotLinkedIs200WithTheIdentitiesUnchanged) {
  Harness h;
  const Reply r = h.call(Call::unlink("auth0|u1", "google-oauth2|u2"));
  EXPECT_EQ(r.status, 200);
  EXPECT_FALSE(r.applied);
  EXPECT_EQ(r.identities, ids({"auth0|u1", "google-oauth2|u1"}));
  EXPECT_EQ(h.call(Call::get_user("auth0|u2")).identities, ids({"auth0|u2", "google-oauth2|u2"}));
}

TEST(IdentityProvider, UnlinkOnAnAbsentUserIs404) {
  Harness h;
  EXPECT_EQ(h.call(Call::unlink("auth0|nobody", "google-oauth2|u1")).status, 404);
}

TEST(IdentityProvider, LinkMovesEveryIdentityOfTheSecondaryUserUnderThePrimaryAnd201) {
  Harness h(instant_config(), three_identities());
  ASSERT_EQ(h.call(Call::unlink("auth0|u1", "google-oauth2|u1")).status, 200);
  // Promote google: link the old primary (still holding github) under it.
  const Reply r = h.call(Call::link("google-oauth2|u1", "auth0|u1"));
  EXPECT_EQ(r.status, 201);
  EXPECT_TRUE(r.applied);
  EXPECT_EQ(r.identities, ids({"google-oauth2|u1", "auth0|u1", "github|u1"}));
  EXPECT_EQ(h.call(Call::get_user("auth0|u1")).status, 404);  // the secondary stopped existing
  EXPECT_EQ(h.check().count("person_split"), 0);
}

TEST(IdentityProvider, LinkOfTheSameIdentityIs400) {
  Harness h;
  const Reply r = h.call(Call::link("auth0|u1", "auth0|u1"));
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body()["message"], "Main identity and the new one are the same.");
}

TEST(IdentityProvider, LinkOfAnIdentityAlreadyInThePrimaryIs409) {
  Harness h;
  const Reply r = h.call(Call::link("auth0|u1", "google-oauth2|u1"));
  EXPECT_EQ(r.status, 409);
  EXPECT_EQ(r.body()["error"], "Conflict");
  EXPECT_EQ(r.body()["message"], "Specified identity already exists.");
}

TEST(IdentityProvider, LinkOfASecondaryThatIsNotAUserIs400) {
  Harness h;
  // google-oauth2|u2 sits inside auth0|u2: not a user of its own.
  const Reply r = h.call(Call::link("auth0|u1", "google-oauth2|u2"));
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body()["message"], "Provided secondary account not found.");
  EXPECT_EQ(h.call(Call::link("auth0|u1", "twitter|ghost")).status, 400);
}

TEST(IdentityProvider, LinkOnAnAbsentPrimaryIs404) {
  Harness h;
  EXPECT_EQ(h.call(Call::link("auth0|nobody", "auth0|u2")).status, 404);
}

TEST(IdentityProvider, LinkWithoutProviderOrUserIdIs400PayloadValidation) {
  Harness h;
  Call c = Call::link("auth0|u1", "google-oauth2|u1");
  c.provider.clear();
  const Reply r = h.call(c);
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body()["errorCode"], "invalid_body");
}

}  // namespace
}  // namespace lockbench::partner

namespace lockbench::partner {
// Reaches inside the store to break its invariant on purpose.
struct IdentityStoreTestAccess {
  static void drop_from_user(IdentityStore& s, IdentityId user, IdentityId id) { std::erase(s.users_[user], id); }
  static void list_twice(IdentityStore& s, IdentityId user, IdentityId id) { s.users_[user].push_back(id); }
};

namespace {
// identity_lost / identity_duplicated are not oracle verdicts: link and unlink cannot produce them.
// The invariant stays as the store's self-check, exercised here over random calls.
TEST(IdentityStoreInvariant, EveryIdentityStaysInExactlyOneUserUnderRandomLinksAndUnlinks) {
  IdentityStore s;
  std::vector<PersonSeed> persons;
  for (int p = 1; p <= 4; ++p) {
    const std::string n = std::to_string(p);
    persons.push_back({{"auth0|u" + n, "google-oauth2|u" + n, "github|u" + n}, "auth0|u" + n});
  }
  s.reset(persons, PersonRange{50, 3});
  std::vector<std::string> keys;
  for (const char* provider : {"auth0", "google-oauth2", "github"})
    for (int k = 1; k <= 6; ++k) keys.push_back(std::string(provider) + "|u" + std::to_string(k));
  Rng rng(7, "invariant");
  int applied = 0;
  for (int i = 0; i < 20000; ++i) {
    const auto& a = keys[rng.next() % keys.size()];
    const auto& b = keys[rng.next() % keys.size()];
    Reply r;
    if (rng.next() % 2 == 0) s.link(s.find(a), s.find(b), r);
    else s.unlink(s.find(a), s.find(b), r);
    applied += r.applied;
    const auto problems = s.invariant_problems();
    ASSERT_TRUE(problems.empty()) << "after call " << i << ": " << problems.front();
  }
  EXPECT_GT(applied, 500);   // the walk really moved identities around
}

TEST(IdentityStoreInvariant, TheSelfCheckFindsALostAndADuplicatedIdentity) {
  IdentityStore s;
  s.reset({{{"auth0|u1", "google-oauth2|u1"}, "auth0|u1"}, {{"auth0|u2", "google-oauth2|u2"}, "auth0|u2"}});
  ASSERT_TRUE(s.invariant_problems().empty());
  IdentityStoreTestAccess::drop_from_user(s, s.find("auth0|u1"), s.find("google-oauth2|u1"));
  auto problems = s.invariant_problems();
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("google-oauth2|u1 is in no user"), std::string::npos);
  IdentityStoreTestAccess::list_twice(s, s.find("auth0|u2"), s.find("auth0|u1"));
  problems = s.invariant_problems();
  EXPECT_GE(problems.size(), 1u);
  bool named = false;
  for (const auto& p : problems) named = named || p.find("auth0|u1") != std::string::npos;
  EXPECT_TRUE(named);
}
}  // namespace
}  // namespace lockbench::partner
