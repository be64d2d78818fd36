// The partner client's single attempt against the fake partner: paths and
// headers it understands, and each transport failure mapped to its name.
#include "scenarios/scenarios.hpp"
#include "core/settings.hpp"
#include "real/partner_http.hpp"
#include "test_env.hpp"

namespace lockbench::real {
namespace real_partner_http_test {

using namespace std::chrono_literals;
using nlohmann::json;

class RealPartnerHttp : public ::testing::Test {
 protected:
  void SetUp() override {
    LOCKBENCH_NEED_PARTNER();
    admin_ = std::make_unique<PartnerHttp>(test::test_partner(), 1s, 5s);
    Settings s;
    s.keys = 2;
    admin_->reset(identity_reset(s));
    configure(json::object());
  }
  void TearDown() override {
    if (admin_) configure(json::object());
  }
  // Latency 0 and the given faults for every API endpoint.
  void configure(const json& faults_for_get) {
    json faults = {{"*", nullptr}, {"auth0.get", nullptr}, {"auth0.link", nullptr}, {"auth0.unlink", nullptr}};
    if (!faults_for_get.empty()) faults["auth0.get"] = faults_for_get;
    admin_->configure({{"latency", {{"*", {{"dist", "fixed"}, {"ms", 0}}}}}, {"faults", faults}});
  }
  PartnerReply get(PartnerHttp& client) { return client.attempt(call(PartnerCall::Kind::get_user, "auth0|u1")); }
  static PartnerCall call(PartnerCall::Kind kind, std::string subject, std::string identity = {},
                          std::uint64_t op = 1, int step = 0, std::optional<std::uint64_t> token = std::nullopt) {
    PartnerCall c = PartnerCall::to(kind, std::move(subject), std::move(identity));
    c.op_id = op;
    c.op_step = step;
    c.fencing_token = token;
    return c;
  }
  std::unique_ptr<PartnerHttp> admin_;
};

TEST_F(RealPartnerHttp, PromotesAnIdentityWithEscapedPathsAndOpHeaders) {
  PartnerHttp client(test::test_partner(), 1s, 5s);
  EXPECT_EQ(get(client).status, 200);
  const PartnerReply unlinked =
      client.attempt(call(PartnerCall::Kind::unlink, "auth0|u1", "github|u1", 7, 1));
  EXPECT_EQ(unlinked.status, 200) << call_failure_name(unlinked.failure);
  const PartnerReply linked = client.attempt(call(PartnerCall::Kind::link, "github|u1", "auth0|u1", 7, 2, 3));
  EXPECT_EQ(linked.status, 201) << call_failure_name(linked.failure);
  const json check = admin_->check(std::nullopt);
  for (const auto& [kind, n] : check["counts"].items()) EXPECT_EQ(n, 0) << kind;
  EXPECT_GE(admin_->metrics()["arrivals"]["auth0.link"].get<int>(), 1);
}

TEST_F(RealPartnerHttp, AnAnswerWithAnErrorStatusIsAnAnswerNotAFailure) {
  PartnerHttp client(test::test_partner(), 1s, 5s);
  const PartnerReply r = client.attempt(call(PartnerCall::Kind::get_user, "nobody|u9"));
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.failure, CallFailure::none);
  EXPECT_TRUE(r.answered());
  EXPECT_FALSE(r.success());
}

TEST_F(RealPartnerHttp, AHangPastTheReadTimeoutIsATimeout) {
  configure(json::array({{{"kind", "hang"}, {"p", 1}, {"ms", 2000}, {"phase", "before"}}}));
  PartnerHttp client(test::test_partner(), 1s, 100ms);
  const PartnerReply r = get(client);
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.failure, CallFailure::timeout);
}

TEST_F(RealPartnerHttp, AConnectionResetIsAReset) {
  configure(json::array({{{"kind", "reset"}, {"p", 1}, {"phase", "before"}}}));
  PartnerHttp client(test::test_partner(), 1s, 5s);
  const PartnerReply r = get(client);
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.failure, CallFailure::reset);
}

TEST_F(RealPartnerHttp, ARefusedConnectionIsAConnectFailure) {
  PartnerHttp client("http://127.0.0.1:1", 1s, 1s);
  const PartnerReply r = get(client);
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.failure, CallFailure::connect);
}

TEST_F(RealPartnerHttp, AChargeCarriesItsIdAndASecondOneWithTheSameKeyIsAReplay) {
  PartnerHttp client(test::test_partner(), 1s, 5s);
  PartnerCall charge = call(PartnerCall::Kind::charge, "o42");
  charge.amount = 2500;
  charge.currency = "eur";
  charge.idempotency_key = "checkout-order-42";
  const PartnerReply first = client.attempt(charge);
  ASSERT_EQ(first.status, 200) << call_failure_name(first.failure) << " " << first.error_code;
  EXPECT_EQ(first.object_id.rfind("ch_", 0), 0u) << first.object_id;
  EXPECT_FALSE(first.replayed);
  const PartnerReply again = client.attempt(charge);
  EXPECT_EQ(again.status, 200);
  EXPECT_TRUE(again.replayed);
  EXPECT_EQ(again.object_id, first.object_id);  // the same charge, not a second one
  charge.amount = 9900;  // the same key with other parameters: refused
  const PartnerReply other = client.attempt(charge);
  EXPECT_EQ(other.status, 400);
  EXPECT_EQ(other.error_code, "idempotency_error");
}

TEST(RealPartnerHttpUrl, EscapesEverythingButUnreservedCharacters) {
  EXPECT_EQ(PartnerHttp::encode_segment("google-oauth2|u12"), "google-oauth2%7Cu12");
  EXPECT_EQ(PartnerHttp::encode_segment("a b/c"), "a%20b%2Fc");
  EXPECT_THROW(PartnerHttp("localhost:80", 1s, 1s), SettingError);
}

}  // namespace real_partner_http_test
}  // namespace lockbench::real
