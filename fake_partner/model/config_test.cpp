// The configuration document: defaults, merge, refusal of bad values.
#include <fstream>
#include <set>

#include "fake_partner/model/test_support.hpp"

namespace lockbench::partner {
namespace {
using json = nlohmann::json;

std::string refusal(const Config& base, const json& partial) {
  try {
    (void)base.merged(partial);
  } catch (const SettingError& e) {
    return e.what();
  }
  return "accepted";
}

bool mentions(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

TEST(Config, AnEmptyDocumentGivesTheDefaults) {
  const Config c = Config::from_json(json::object());
  EXPECT_EQ(c.seed, 1u);
  EXPECT_EQ(c.fencing, Fencing::ignore);
  EXPECT_EQ(c.rate_limit.size, 0);
  EXPECT_EQ(c.payments.idem_ttl, std::chrono::hours(24));
  EXPECT_DOUBLE_EQ(c.latency[index_of(Endpoint::auth0_link)].apply_at, 0.5);
}

TEST(Config, TheWildcardLatencyAppliesToEveryEndpointWithoutItsOwn) {
  const Config c = Config::from_json(json::parse(R"({
    "latency": {"*": {"dist": "fixed", "ms": 50},
                "auth0.link": {"dist": "lognormal", "p50_ms": 300, "p99_ms": 1200, "apply_at": 0.7}}})"));
  EXPECT_EQ(c.latency[index_of(Endpoint::stripe_get)].dist.kind, Distribution::Kind::fixed);
  EXPECT_EQ(c.latency[index_of(Endpoint::auth0_link)].dist.kind, Distribution::Kind::lognormal);
  EXPECT_DOUBLE_EQ(c.latency[index_of(Endpoint::auth0_link)].apply_at, 0.7);
}

TEST(Config, APartialUpdateMergesIntoTheDocumentAndKeepsTheRest) {
  Partner p(Config::from_json(json::parse(R"({"latency": {"*": {"dist": "fixed", "ms": 50}}, "fencing": "enforce"})")));
  p.update_config(json::parse(R"({"latency": {"auth0.link": {"dist": "fixed", "ms": 900}}})"));
  EXPECT_DOUBLE_EQ(p.config().latency[index_of(Endpoint::auth0_link)].dist.a_ms, 900);
  EXPECT_DOUBLE_EQ(p.config().latency[index_of(Endpoint::auth0_get)].dist.a_ms, 50);
  EXPECT_EQ(p.config().fencing, Fencing::enforce);
  p.update_config(json::parse(R"({"latency": {"*": {"dist": "fixed", "ms": 5}}})"));
  EXPECT_DOUBLE_EQ(p.config().latency[index_of(Endpoint::auth0_get)].dist.a_ms, 5);
  EXPECT_DOUBLE_EQ(p.config().latency[index_of(Endpoint::auth0_link)].dist.a_ms, 900);
  p.update_config(json::parse(R"({"latency": {"auth0.link": null}})"));  // null removes, as in RFC 7386
  EXPECT_DOUBLE_EQ(p.config().latency[index_of(Endpoint::auth0_link)].dist.a_ms, 5);
}

TEST(Config, ABadUpdateIsRefusedAndChangesNothing) {
  Partner p(Config::from_json(json::parse(R"({"fencing": "enforce"})")));
  const json before = p.config().to_json();
  EXPECT_THROW(p.update_config(json::parse(R"({"fencing": "ignore", "latency": {"*": {"dist": "gamma"}}})")), SettingError);
  EXPECT_EQ(p.config().to_json(), before);
}

TEST(Config, EveryRefusalNamesTheJsonPathAndWhatIsAccepted) {
  const Config base;
  const auto check = [&](const char* partial, std::string_view path, std::string_view accepted) {
    const std::string why = refusal(base, json::parse(partial));
    EXPECT_TRUE(mentions(why, path)) << partial << " -> " << why;
    EXPECT_TRUE(mentions(why, accepted)) << partial << " -> " << why;
  };
  check(R"({"latency": {"auth0.lnk": {"dist": "fixed", "ms": 1}}})", "latency.auth0.lnk", "auth0.link");
  check(R"({"latency": {"auth0.link": {"dist": "gamma"}}})", "latency.auth0.link", "lognormal");
  check(R"({"latency": {"*": {"dist": "fixed", "ms": 1, "apply_at": 1.5}}})", "latency.*.apply_at", "0 to 1");
  check(R"({"latency": {"*": {"dist": "fixed", "ms": 1, "jitter": 2}}})", "latency.*.jitter", "apply_at");
  check(R"({"faults": {"auth0.unlink": [{"kind": "error", "p": 2}]}})", "faults.auth0.unlink[0].p", "0 to 1");
  check(R"({"faults": {"auth0.unlink": [{"kind": "meteor", "p": 1}]}})", "faults.auth0.unlink[0].kind", "slow_body");
  check(R"({"faults": {"auth0.unlink": [{"kind": "error"}]}})", "faults.auth0.unlink[0].p", "probability");
  check(R"({"faults": {"auth0.unlink": [{"kind": "error", "p": 1, "phase": "during"}]}})", "phase", "\"after\"");
  check(R"({"faults": {"auth0.unlink": [{"kind": "error", "p": 1, "status": 200}]}})", "status", "400 to 599");
  check(R"({"faults": {"auth0.unlink": [{"kind": "truncate", "p": 1, "phase": "before"}]}})", "phase", "accepted");
  check(R"({"script": [{"endpoint": "auth0.get", "nth": 0, "fault": {"kind": "reset"}}]})", "script[0].nth", ">= 1");
  check(R"({"script": [{"endpoint": "x", "nth": 1, "fault": {"kind": "reset"}}]})", "script[0].endpoint", "stripe.refund");
  check(R"({"rate_limit": {"size": 10, "scope": "galaxy"}})", "rate_limit.scope", "\"endpoint\"");
  check(R"({"rate_limit": {"size": -1}})", "rate_limit.size", "0 to");
  check(R"({"fencing": "maybe"})", "fencing", "\"enforce\"");
  check(R"({"payments": {"object_lock": "yes"}})", "payments.object_lock", "true or false");
  check(R"({"seed": -3})", "seed", "integer >= 0");
  check(R"({"colour": "blue"})", "config.colour", "fencing");
}

TEST(Config, TheEffectiveDocumentParsesBackToTheSameConfig) {
  const Config c = Config::from_json(json::parse(R"({
    "seed": 9,
    "latency": {"*": {"dist": "exponential", "mean_ms": 40}, "stripe.charge": {"dist": "uniform", "min_ms": 1, "max_ms": 9}},
    "faults": {"auth0.unlink": [{"kind": "error", "p": 0.01, "status": 503, "phase": "before"},
                                {"kind": "hang", "p": 0.02, "ms": "forever", "phase": "after"},
                                {"kind": "slow_body", "p": 0.03, "bytes_per_s": 64}]},
    "script": [{"endpoint": "auth0.link", "nth": 2, "fault": {"kind": "reset", "phase": "after"}}],
    "rate_limit": {"size": 100, "refill_per_s": 50, "scope": "endpoint"},
    "fencing": "enforce",
    "payments": {"idem_ttl_ms": 60000, "object_lock": true, "lock_timeout_ms": 250}})"));
  const json doc = c.to_json();
  EXPECT_EQ(Config::from_json(doc).to_json(), doc);
  EXPECT_EQ(doc["faults"]["auth0.unlink"].size(), 3u);
  EXPECT_EQ(doc["script"][0]["fault"]["phase"], "after");
  EXPECT_EQ(c.faults[index_of(Endpoint::auth0_unlink)][1].plan.phase, Phase::after);
  EXPECT_FALSE(c.faults[index_of(Endpoint::auth0_unlink)][1].plan.hang_for.has_value());
}

TEST(Config, ANewSeedReseedsTheRandomStreams) {
  const json doc = json::parse(R"({"latency": {"*": {"dist": "exponential", "mean_ms": 100}}})");
  Partner a(Config::from_json(doc)), b(Config::from_json(doc));
  a.reset({}, Duration(0));
  b.reset({}, Duration(0));
  b.update_config({{"seed", 2}});
  EXPECT_NE(a.arrive(Call::get_charge("x"), {}, Duration(0)).delay, b.arrive(Call::get_charge("x"), {}, Duration(0)).delay);
}

TEST(ResetDocument, PersonsAndOrdersAreParsedAndBadOnesRefusedByPath) {
  const ResetSpec r = ResetSpec::from_json(json::parse(R"({"seed": 1,
      "persons": [{"identities": ["auth0|u1", "google-oauth2|u1"], "primary": "google-oauth2|u1"}],
      "orders": [{"order_id": "o1", "amount": 2500, "currency": "eur"}]})"));
  EXPECT_EQ(r.persons.at(0).primary, "google-oauth2|u1");
  EXPECT_EQ(r.orders.at(0).amount, 2500);
  EXPECT_EQ(ResetSpec::from_json(r.to_json()).to_json(), r.to_json());
  const auto refused = [](const char* doc) {
    try {
      (void)ResetSpec::from_json(json::parse(doc));
    } catch (const SettingError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_TRUE(mentions(refused(R"({"persons": [{"identities": ["nobar"]}]})"), "reset.persons[0].identities"));
  EXPECT_TRUE(mentions(refused(R"({"persons": [{"identities": ["a|1"], "primary": "b|1"}]})"), "reset.persons[0].primary"));
  EXPECT_TRUE(mentions(refused(R"({"persons": [{"identities": ["a|1"]}, {"identities": ["a|1"]}]})"), "two persons"));
  EXPECT_TRUE(mentions(refused(R"({"orders": [{"order_id": "o1", "amount": 0}]})"), "reset.orders[0].amount"));
}

TEST(ResetDocument, TheSeededPrimaryIsTheUserThatHoldsThePerson) {
  Partner p(testing::instant_config());
  ResetSpec r;
  r.persons.push_back({{"auth0|u1", "google-oauth2|u1"}, "google-oauth2|u1"});
  p.reset(r, Duration(0));
  const auto users = p.state_json()["users"];
  ASSERT_EQ(users.size(), 1u);
  EXPECT_EQ(users[0]["user_id"], "google-oauth2|u1");
  EXPECT_EQ(users[0]["identities"][1], "auth0|u1");
}

}  // namespace
}  // namespace lockbench::partner

namespace lockbench::partner {
namespace {

// Every fault kind has a name of its own, and the per-kind tables are sized by
// the enum: a kind added before FaultPlan::Kind::count_ without a name fails here.
TEST(FaultKinds, EveryKindHasANameOfItsOwn) {
  std::set<std::string_view> names;
  for (std::size_t k = 0; k < kFaultKindCount; ++k) {
    const std::string_view name = fault_kind_name(static_cast<FaultPlan::Kind>(k));
    EXPECT_FALSE(name.empty()) << "kind " << k << " has no name in kFaultKindNames";
    EXPECT_TRUE(names.insert(name).second) << name << " names two kinds";
  }
  EXPECT_EQ(fault_kind_name(FaultPlan::Kind::none), "none");
  EXPECT_EQ(fault_kind_name(FaultPlan::Kind::garbage), "garbage");
  EXPECT_EQ(names.size(), kFaultKindCount);
}

// examples/partner.json, which docs/how-to/fake-partner.md starts the server
// with, is accepted as it stands and sets every part of the document.
TEST(Config, TheShippedExampleIsAcceptedAndSetsEveryPart) {
  std::ifstream in(LOCKBENCH_SOURCE_DIR "/examples/partner.json");
  ASSERT_TRUE(in) << "examples/partner.json is missing";
  const json doc = json::parse(in);
  const Config c = Config::from_json(doc);
  std::set<std::string> given, all;
  for (const auto& [k, v] : doc.items()) given.insert(k);
  const json written = c.to_json();  // items() of a temporary would outlive it
  for (const auto& [k, v] : written.items()) all.insert(k);
  EXPECT_EQ(given, all);
  EXPECT_EQ(c.seed, 1u);
  EXPECT_EQ(c.rate_limit.size, 100);
  EXPECT_EQ(c.script.size(), 1u);
  EXPECT_EQ(c.faults[index_of(Endpoint::auth0_unlink)].size(), 1u);
  EXPECT_DOUBLE_EQ(c.faults[index_of(Endpoint::auth0_unlink)][0].p, 0.01);
  // A bad value in it would be refused with its path, as fake_partner --config refuses it.
  json bad = doc;
  bad["latency"]["auth0.link"]["p50_ms"] = -1;
  EXPECT_THROW((void)Config::from_json(bad), SettingError);
}

}  // namespace
}  // namespace lockbench::partner
