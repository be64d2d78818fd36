#include "fake_partner/server/http_message.hpp"

#include <gtest/gtest.h>

namespace lockbench::partner_server {
namespace {

TEST(HttpMessage, PercentDecodingTurnsEscapesIntoBytesAndRefusesBrokenOnes) {
  EXPECT_EQ(percent_decode("auth0%7Cu1"), "auth0|u1");
  EXPECT_EQ(percent_decode("a+b", true), "a b");
  EXPECT_EQ(percent_decode("a+b", false), "a+b");
  EXPECT_EQ(percent_decode("%"), std::nullopt);
  EXPECT_EQ(percent_decode("%4"), std::nullopt);
  EXPECT_EQ(percent_decode("%zz"), std::nullopt);
}

TEST(HttpMessage, TargetSplitsIntoDecodedSegmentsAndQuery) {
  auto t = parse_target("/api/v2/users/auth0%7Cu1/identities/?x=1&format=prometheus");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->segments, (std::vector<std::string>{"api", "v2", "users", "auth0|u1", "identities"}));
  EXPECT_EQ(t->query.at("format"), "prometheus");
  EXPECT_EQ(t->query.at("x"), "1");
  EXPECT_FALSE(parse_target("no-slash"));
  EXPECT_FALSE(parse_target("/a%zz"));
}

TEST(HttpMessage, FormBodyDecodesStripeStyleKeys) {
  auto f = parse_form("amount=2500&currency=eur&metadata%5Border_id%5D=o1&empty=&flag");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->at("amount"), "2500");
  EXPECT_EQ(f->at("metadata[order_id]"), "o1");
  EXPECT_EQ(f->at("empty"), "");
  EXPECT_EQ(f->at("flag"), "");
  EXPECT_FALSE(parse_form("a=%G1"));
}

TEST(HttpMessage, RenderedHeadCarriesStatusHeadersAndTheAnnouncedLength) {
  HttpResponse r;
  r.status = 429;
  r.headers = {{"X-RateLimit-Limit", "10"}};
  r.body = "{}";
  const std::string head = render_head(r, 99, false);
  EXPECT_EQ(head.rfind("HTTP/1.1 429 Too Many Requests\r\n", 0), 0u);
  EXPECT_NE(head.find("X-RateLimit-Limit: 10\r\n"), std::string::npos);
  EXPECT_NE(head.find("Content-Length: 99\r\n"), std::string::npos);
  EXPECT_NE(head.find("Connection: close\r\n\r\n"), std::string::npos);
}

TEST(HttpMessage, HeaderLookupIgnoresCase) {
  HttpRequest req;
  req.headers = {{"x-op-id", "7"}};
  EXPECT_EQ(req.header("X-Op-Id"), "7");
  EXPECT_FALSE(req.header("X-Op-Step"));
}

}  // namespace
}  // namespace lockbench::partner_server
