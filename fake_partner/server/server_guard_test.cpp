// The admin guard over real sockets: every spelling of an admin path, from a
// foreign Host or with a content type a page can send, is refused, and the
// oracle is untouched; the runner's own request still passes (issue #42).
#include <set>

#include "fake_partner/server/server_fixture.hpp"

namespace lockbench::partner_server::testing {
namespace {

// Sent byte for byte (an HTTP client would normalise the path first).
int raw_status(std::uint16_t port, const std::string& method, const std::string& target, const std::string& headers,
               const std::string& body = "{}") {
  const std::string request = method + " " + target + " HTTP/1.1\r\n" + headers +
                              "Content-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
  return parse_response(raw_exchange(port, request, std::chrono::milliseconds(3000)).bytes).status;
}

const std::vector<std::string> kAdminSpellings = {
    "/admin/reset", "//admin/reset", "///admin/reset", "/%61dmin/reset", "/%61%64%6D%69%6E/reset", "/admin//reset",
    "/admin/reset/", "/./admin/reset", "/admin/./reset", "/v1/../admin/reset", "/x/%2e%2e/admin/reset",
    "/%2e/admin/reset", "/../admin/reset", "/admin;x=1/reset", "/admin/reset;jsessionid=1", "/ADMIN/reset",
    "/Admin/Reset", "/aDmIn/rEsEt", "/admin./reset", "/admin../reset", "/admin%2e/reset", "/admin%20/reset",
    "/admin%2freset", "/admin%2Freset", "/%2fadmin/reset", "/%2F%2Fadmin/reset", "/admin%5creset", "/%2561dmin/reset",
    "/admin%00/reset", "/admin%3breset", "/admin/reset?x=1", "/admin/reset?", "/admin/metrics/reset", "//admin/check",
    "/admin/config", "//metrics", "/%6detrics", "/METRICS", "/metrics."};

TEST_F(FakePartner, EveryAdminSpellingFromAForeignHostOrContentTypeIsRefusedAndTheOracleIsUntouched) {
  const auto before = get_json("/admin/state");
  ASSERT_FALSE(before["persons"].empty()) << before.dump();
  const std::string local = "Host: 127.0.0.1:" + std::to_string(port()) + "\r\n";
  const std::set<int> refusals = {400, 403, 415};
  int refused = 0, sent = 0;
  const auto expect_refused = [&](const std::string& method, const std::string& target, const std::string& headers,
                                  const std::set<int>& allowed) {
    const int status = raw_status(port(), method, target, headers);
    ++sent;
    EXPECT_TRUE(allowed.count(status)) << method << " " << target << " with\n" << headers << "got " << status;
    refused += allowed.count(status) ? 1 : 0;
  };
  for (const std::string& target : kAdminSpellings) {
    for (const std::string method : {"POST", "PUT"}) {
      // A DNS-rebound name: 403 (or 400 for a target that is no path at all).
      expect_refused(method, target, "Host: evil.com\r\nContent-Type: application/json\r\n", {400, 403});
      // A cross-origin simple request: text/plain, a form, or no type at all: 415 (or 400).
      expect_refused(method, target, local + "Content-Type: text/plain\r\n", {400, 415});
      expect_refused(method, target, local + "Content-Type: text/plain; x=application/json\r\n", {400, 415});
      expect_refused(method, target, local + "Content-Type: application/x-www-form-urlencoded\r\n", {400, 415});
      expect_refused(method, target, local, {400, 415});
    }
    expect_refused("GET", target, "Host: evil.com\r\n", {400, 403});
  }
  for (const std::string host : {"[evil.com]", "999.999.999.999", "127.0.0.1\r\nHost: evil.com", "evil.com\r\nHost: 127.0.0.1",
                                 "127.0.0.1, evil.com", "evil.com@127.0.0.1", "127.0.0.1:99999", "0x7f.0.0.1", "127.1",
                                 "localhost.", "localhost.evil.com", ""})
    for (const std::string target : {"/admin/reset", "//admin/reset", "/%61dmin/reset", "/metrics"})
      expect_refused("POST", target, "Host: " + host + "\r\nContent-Type: application/json\r\n", refusals);
  const std::string two_types = local + "Content-Type: application/json\r\nContent-Type: text/plain\r\n";
  expect_refused("POST", "/admin/reset", two_types, {415});
  expect_refused("POST", "/admin/reset", local + "Content-Type: application/json, text/plain\r\n", {415});
  expect_refused("GET", "/metrics", "Host: evil.com\r\n", {403});
  EXPECT_EQ(refused, sent);
  EXPECT_GT(sent, 400);
  EXPECT_EQ(get_json("/admin/state"), before);  // no spelling reset or changed anything

  // The legitimate requests pass, under any spelling the router reads as theirs.
  EXPECT_EQ(raw_status(port(), "GET", "/metrics", local, ""), 200);
  EXPECT_EQ(raw_status(port(), "GET", "//admin/state", local, ""), 200);
  EXPECT_EQ(raw_status(port(), "GET", "/api/v2/users/auth0%7Cu1", "Host: evil.com\r\n", ""), 200);  // the API is open
  EXPECT_EQ(raw_status(port(), "GET", "/ADMIN/state", local, ""), 404);  // the router stays exact
  EXPECT_EQ(raw_status(port(), "POST", "/admin/reset", local + "Content-Type: application/json; charset=utf-8\r\n",
                       R"({"seed": 7})"),
            200);
  EXPECT_TRUE(get_json("/admin/state")["persons"].empty());  // that one did reset
}

}  // namespace
}  // namespace lockbench::partner_server::testing
