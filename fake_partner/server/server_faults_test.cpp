// Faults as a client sees them on the wire, and bad input that must cost one
// answer (or one socket) while the server keeps serving everyone else.
#include <thread>

#include "fake_partner/server/server_fixture.hpp"

namespace lockbench::partner_server::testing {
namespace {

const std::string kGetUser = "GET /api/v2/users/auth0%7Cu1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

json fault_on_get(const json& fault) { return {{"faults", {{"auth0.get", {fault}}}}}; }

class FakePartnerFaults : public FakePartner {
 protected:
  void SetUp() override {}  // each test starts its server with its own faults

  // The server still answers a good request on a fresh connection.
  void expect_still_serving() {
    httplib::Client c("127.0.0.1", port());
    c.set_read_timeout(5, 0);
    // Endpoints the fault tests leave alone (their faults are on auth0.get).
    auto res = c.Get("/v1/charges/ch_missing");
    ASSERT_TRUE(res) << "server stopped answering";
    EXPECT_EQ(res->status, 404);
    res = c.Post("/v1/charges", "amount=100&currency=eur", "application/x-www-form-urlencoded");
    ASSERT_TRUE(res) << "server stopped answering";
    EXPECT_EQ(res->status, 200) << res->body;
  }

  // Calls in flight, from the model's metrics; polls because a lost answer
  // is noticed when the client's close reaches the server.
  bool inflight_drains_to_zero() {
    for (int i = 0; i < 200; ++i) {
      const json state = get_json("/admin/state");
      if (state.contains("inflight") && state["inflight"].is_array() && state["inflight"].empty()) return true;
      if (state.contains("inflight") && state["inflight"].is_number() && state["inflight"] == 0) return true;
      std::this_thread::sleep_for(10ms);
    }
    return false;
  }
};

TEST_F(FakePartnerFaults, AnErrorFaultAnswersItsStatusWithAnErrorBody) {
  start(fault_on_get({{"kind", "error"}, {"p", 1}, {"status", 503}}));
  auto res = http().Get("/api/v2/users/auth0%7Cu1");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503);
  EXPECT_EQ(body_of(res)["statusCode"], 503);
  expect_still_serving();
}

TEST_F(FakePartnerFaults, ARateLimitFaultAnswers429) {
  start(fault_on_get({{"kind", "rate_limit_429"}, {"p", 1}}));
  auto res = http().Get("/api/v2/users/auth0%7Cu1");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 429);
}

TEST_F(FakePartnerFaults, AResetFaultResetsTheConnectionWithoutAnAnswer) {
  start(fault_on_get({{"kind", "reset"}, {"p", 1}}));
  const RawResult r = raw_exchange(port(), kGetUser, 3000ms);
  EXPECT_EQ(r.ending, Ending::reset);
  EXPECT_TRUE(r.bytes.empty());
  EXPECT_TRUE(inflight_drains_to_zero());
  expect_still_serving();
}

TEST_F(FakePartnerFaults, AHangForeverIsEndedByTheClientsReadTimeout) {
  start(fault_on_get({{"kind", "hang"}, {"p", 1}, {"ms", "forever"}}));
  {
    httplib::Client c("127.0.0.1", port());
    c.set_read_timeout(0, 300 * 1000);
    auto res = c.Get("/api/v2/users/auth0%7Cu1");
    EXPECT_FALSE(res);
    EXPECT_EQ(res.error(), httplib::Error::Read);
  }  // the client closes its socket: the server must notice and complete the call
  EXPECT_TRUE(inflight_drains_to_zero());
  expect_still_serving();
}

TEST_F(FakePartnerFaults, ABoundedHangClosesTheConnectionWithoutAnAnswer) {
  start(fault_on_get({{"kind", "hang"}, {"p", 1}, {"ms", 200}}));
  const RawResult r = raw_exchange(port(), kGetUser, 5000ms);
  EXPECT_EQ(r.ending, Ending::eof);
  EXPECT_TRUE(r.bytes.empty());
  EXPECT_GE(r.elapsed, 150ms);
  EXPECT_TRUE(inflight_drains_to_zero());
}

TEST_F(FakePartnerFaults, ATruncatedAnswerAnnouncesMoreBodyThanItSends) {
  start(fault_on_get({{"kind", "truncate"}, {"p", 1}}));
  const RawResult r = raw_exchange(port(), kGetUser, 3000ms);
  EXPECT_EQ(r.ending, Ending::eof);
  const ParsedResponse p = parse_response(r.bytes);
  EXPECT_EQ(p.status, 200);
  ASSERT_TRUE(p.content_length);
  EXPECT_LT(p.body.size(), *p.content_length);
  // An HTTP client reports the short body as an error.
  httplib::Client c("127.0.0.1", port());
  c.set_read_timeout(3, 0);
  EXPECT_FALSE(c.Get("/api/v2/users/auth0%7Cu1"));
  expect_still_serving();
}

TEST_F(FakePartnerFaults, AGarbageAnswerIsNotHttp) {
  start(fault_on_get({{"kind", "garbage"}, {"p", 1}}));
  const RawResult r = raw_exchange(port(), kGetUser, 3000ms);
  EXPECT_EQ(r.ending, Ending::eof);
  EXPECT_EQ(r.bytes.size(), 23u);  // all of it, NUL byte included
  EXPECT_EQ(parse_response(r.bytes).status, 0);
  httplib::Client c("127.0.0.1", port());
  c.set_read_timeout(3, 0);
  EXPECT_FALSE(c.Get("/api/v2/users/auth0%7Cu1"));
  expect_still_serving();
}

TEST_F(FakePartnerFaults, ASlowBodyArrivesWholeInManyPieces) {
  start(fault_on_get({{"kind", "slow_body"}, {"p", 1}, {"bytes_per_s", 400}}));
  const RawResult r = raw_exchange(port(), kGetUser, 10000ms);
  const ParsedResponse p = parse_response(r.bytes);
  ASSERT_EQ(p.status, 200) << r.bytes;
  ASSERT_TRUE(p.content_length);
  EXPECT_EQ(p.body.size(), *p.content_length);
  EXPECT_TRUE(json::parse(p.body, nullptr, false).is_object());
  EXPECT_GE(r.reads, 3);
  // At 400 B/s the body takes body/400 s; allow half of it, the tick is coarse.
  EXPECT_GE(r.elapsed.count(), static_cast<long>(p.body.size() * 1000 / 400 / 2));
}

TEST_F(FakePartnerFaults, AClientThatDisconnectsBeforeTheAnswerStillCompletesTheCall) {
  start({{"latency", {{"auth0.get", {{"dist", "fixed"}, {"ms", 300}}}}}});
  send_and_reset(port(), kGetUser);
  const RawResult r = raw_exchange(port(), kGetUser, 100ms);  // gives up before the answer
  EXPECT_EQ(r.ending, Ending::timeout);
  EXPECT_TRUE(inflight_drains_to_zero());
  expect_still_serving();
}

TEST_F(FakePartnerFaults, PipelinedRequestsAreAnsweredInOrderOnOneConnection) {
  start({{"latency", {{"auth0.get", {{"dist", "fixed"}, {"ms", 50}}}}}});
  const RawResult r = raw_exchange(port(),
                                   "GET /api/v2/users/auth0%7Cu1 HTTP/1.1\r\nHost: x\r\n\r\n"
                                   "GET /v1/charges/ch_missing HTTP/1.1\r\nHost: x\r\n\r\n"
                                   "GET /api/v2/users/auth0%7Cu2 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                                   3000ms);
  EXPECT_EQ(r.ending, Ending::eof);
  std::vector<int> statuses;
  for (std::size_t at = r.bytes.find("HTTP/1.1 "); at != std::string::npos; at = r.bytes.find("HTTP/1.1 ", at + 1)) {
    statuses.push_back(std::atoi(r.bytes.c_str() + at + 9));
  }
  EXPECT_EQ(statuses, (std::vector<int>{200, 404, 200}));
  EXPECT_LT(r.bytes.find("auth0|u1"), r.bytes.find("auth0|u2"));
}

TEST_F(FakePartnerFaults, ExpectContinueGetsAGoAheadBeforeTheAnswer) {
  start();
  const std::string body = R"({"provider":"google-oauth2","user_id":"u1"})";
  const RawResult r = raw_exchange(port(),
                                   "DELETE /api/v2/users/auth0%7Cu1/identities/google-oauth2/u1 HTTP/1.1\r\nHost: x\r\n\r\n"
                                   "POST /api/v2/users/auth0%7Cu1/identities HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                                   "Expect: 100-continue\r\nContent-Type: application/json\r\nContent-Length: " +
                                       std::to_string(body.size()) + "\r\n\r\n" + body,
                                   3000ms);
  const auto go_ahead = r.bytes.find("HTTP/1.1 100 Continue\r\n\r\n");
  ASSERT_NE(go_ahead, std::string::npos) << r.bytes;
  EXPECT_EQ(r.bytes.find("HTTP/1.1 201 ", go_ahead), go_ahead + 25) << r.bytes;
}

// --- bad input: each followed by a good request that succeeds ------------------

TEST_F(FakePartnerFaults, BadJsonWrongTypesAndMissingFieldsAre400AndServingGoesOn) {
  start();
  const char* bodies[] = {"{not json", "[1,2]", "{}", R"({"provider":"google-oauth2"})",
                          R"({"provider":1,"user_id":"u1"})", R"({"provider":"google-oauth2","user_id":{"a":1}})", ""};
  for (const char* body : bodies) {
    auto res = http().Post("/api/v2/users/auth0%7Cu1/identities", body, "application/json");
    ASSERT_TRUE(res) << body;
    EXPECT_EQ(res->status, 400) << body;
    EXPECT_EQ(body_of(res)["errorCode"], "invalid_body") << body;
    expect_still_serving();
  }
  auto res = http().Post("/v1/charges", R"({"amount":"lots"})", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  res = http().Put("/admin/config", "[]", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  expect_still_serving();
}

TEST_F(FakePartnerFaults, AnOversizedBodyIs413AndOversizedHeadersAre431) {
  start({}, {"--max-body-bytes", "1024", "--max-header-bytes", "2048"});
  const std::string big_body(4096, 'x');
  RawResult r = raw_exchange(port(),
                             "POST /v1/charges HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                             "Content-Length: 4096\r\n\r\n" + big_body,
                             3000ms);
  EXPECT_EQ(parse_response(r.bytes).status, 413) << r.bytes;
  expect_still_serving();

  r = raw_exchange(port(), "GET /api/v2/users/auth0%7Cu1 HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(4000, 'y') +
                               "\r\n\r\n",
                   3000ms);
  EXPECT_EQ(parse_response(r.bytes).status, 431) << r.bytes;
  expect_still_serving();
}

TEST_F(FakePartnerFaults, UnparsableRequestsGet400AndAClosedSocket) {
  start();
  RawResult r = raw_exchange(port(), "hello there\r\n\r\n", 3000ms);
  EXPECT_EQ(parse_response(r.bytes).status, 400) << r.bytes;
  EXPECT_EQ(r.ending, Ending::eof);
  expect_still_serving();

  r = raw_exchange(port(), "GET /a%zz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 3000ms);
  EXPECT_EQ(parse_response(r.bytes).status, 400) << r.bytes;
  expect_still_serving();

  r = raw_exchange(port(), "BREW /api/v2/users/auth0%7Cu1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 3000ms);
  EXPECT_EQ(parse_response(r.bytes).status, 405) << r.bytes;
  expect_still_serving();
}

TEST_F(FakePartnerFaults, HalfOpenAndAbruptlyClosedConnectionsDoNotHurtOthers) {
  start();
  // Half a request, then our write side shuts: the server answers 400 or just closes.
  RawResult r = raw_exchange(port(), "GET /api/v2/users/auth0%7Cu1 HTTP/1.1\r\nHost:", 3000ms, /*shutdown_write=*/true);
  EXPECT_EQ(r.ending, Ending::eof);
  EXPECT_TRUE(r.bytes.empty() || parse_response(r.bytes).status == 400) << r.bytes;
  expect_still_serving();

  // A full request and our write side shut: the answer still comes.
  r = raw_exchange(port(), kGetUser, 3000ms, /*shutdown_write=*/true);
  EXPECT_EQ(parse_response(r.bytes).status, 200) << r.bytes;
  expect_still_serving();

  // Abrupt resets mid-header, mid-body and right after a request.
  send_and_reset(port(), "GET /api/v2/us");
  send_and_reset(port(), "POST /v1/charges HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\namount=");
  send_and_reset(port(), kGetUser);
  expect_still_serving();
  EXPECT_TRUE(inflight_drains_to_zero());
}

TEST(FakePartnerLimits, AtTheLimitTheOldestIdleConnectionMakesRoomForANewOne) {
  // No fixture: its reset connection would count against the limit until it closes.
  PartnerProcess server({"--max-connections", "2"});
  httplib::Client a("127.0.0.1", server.port()), b("127.0.0.1", server.port());
  a.set_keep_alive(true);
  b.set_keep_alive(true);
  ASSERT_TRUE(a.Get("/admin/state"));
  ASSERT_TRUE(b.Get("/admin/state"));  // a and b now idle on their keep-alive connections
  const RawResult r = raw_exchange(server.port(), "GET /admin/state HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", 2000ms);
  EXPECT_EQ(parse_response(r.bytes).status, 200) << r.bytes;
  auto res = b.Get("/admin/server");  // a was the oldest idle: b's connection may have gone too, httplib reconnects
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  const json stats = json::parse(res->body);
  EXPECT_GE(stats["connections"]["evicted"].get<int>(), 1);
  EXPECT_EQ(stats["connections"]["refused"], 0);
  EXPECT_LE(stats["connections"]["peak"].get<int>(), 3);  // 2 + the one whose room was being made
}

TEST(FakePartnerLimits, WithNoneIdleAndNoAdminReserveConnectionsBeyondTheLimitAreClosed) {
  ConfigFile config(json{{"latency", {{"*", {{"dist", "fixed"}, {"ms", 1500}}}}}});
  PartnerProcess server({"--config", config.path(), "--max-connections", "2", "--admin-connections", "0"});
  auto busy = hold_requests(server.port(), 2, "GET /api/v2/users/auth0%7Cu1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  ASSERT_TRUE(wait_all_read(server.port(), 2));  // both calls in flight (accepted and read): nothing idle
  const RawResult r = raw_exchange(server.port(), "GET /admin/state HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 1000ms);
  EXPECT_TRUE(r.bytes.empty());
  EXPECT_NE(r.ending, Ending::timeout);
  for (auto& b : busy) {  // the busy calls answered and closed
    const RawResult answer = b.receive(10s);
    EXPECT_NE(parse_response(answer.bytes).status, 0) << answer.bytes;  // an HTTP answer
    EXPECT_EQ(answer.ending, Ending::eof);
  }
  httplib::Client c("127.0.0.1", server.port());
  // A session ends just after its answer left (its last handlers run after
  // the close): until then the server is still full and a new connection is
  // refused like the one above. Count those, so the total stays exact.
  int refused_while_closing = 0;
  auto res = c.Get("/admin/server");
  for (int i = 0; !res && i < 40; ++i) {
    ++refused_while_closing;
    std::this_thread::sleep_for(50ms);
    res = c.Get("/admin/server");
  }
  ASSERT_TRUE(res);
  const json stats = json::parse(res->body);
  EXPECT_EQ(stats["connections"]["refused"], 1 + refused_while_closing);
  EXPECT_EQ(stats["connections"]["evicted"], 0);
}

}  // namespace
}  // namespace lockbench::partner_server::testing
