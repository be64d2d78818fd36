// The Mermaid diagrams: they name the right requests, keep the order things
// happened in, and stay within the Mermaid syntax GitHub renders.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "report/sequence.hpp"
#include "report/test_fixtures.hpp"

namespace lockbench::report {
namespace {

using nlohmann::json;

std::size_t pos(const std::string& text, const std::string& needle) {
  const auto at = text.find(needle);
  EXPECT_NE(at, std::string::npos) << "missing: " << needle;
  return at;
}

// Every line is one of the statements we emit: a participant, an arrow or a note.
void expect_valid_mermaid(const std::string& diagram) {
  std::istringstream in(diagram);
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  EXPECT_EQ(line, "sequenceDiagram");
  const std::regex statement(
      R"(    (participant [A-Za-z0-9]+ as [^;#<>{}"`]+|[A-Za-z0-9]+--?>>[A-Za-z0-9]+: [^;#<>{}"`]+|Note over [A-Za-z0-9]+(,[A-Za-z0-9]+)?: [^;#<>{}"`]+))");
  while (std::getline(in, line)) EXPECT_TRUE(std::regex_match(line, statement)) << line;
}

TEST(RaceDiagram, OfANoneHotKeyResultNamesTheTwoInterleavedRequests) {
  const auto d = race_diagram(fixtures::none_hot_with_race());
  ASSERT_TRUE(d.has_value());
  EXPECT_NE(d->find("participant A as request r-17"), std::string::npos);
  EXPECT_NE(d->find("participant B as request r-18"), std::string::npos);
  // Interleaved as it happened: A's unlink starts, B's unlink starts, A's unlink returns.
  const auto a_unlink = pos(*d, "A->>Partner: t=1001.1 ms unlink");
  const auto b_unlink = pos(*d, "B->>Partner: t=1041.1 ms unlink");
  const auto a_done = pos(*d, "Partner-->>A: t=1601.1 ms unlink done");
  EXPECT_LT(a_unlink, b_unlink);
  EXPECT_LT(b_unlink, a_done);
  EXPECT_NE(d->find("Note over A,Partner: from t=1041.1 ms to t=2201.2 ms both requests were calling the partner for p-1"),
            std::string::npos);
  EXPECT_NE(d->find("overlap_person 37"), std::string::npos);
  expect_valid_mermaid(*d);
}

TEST(RaceDiagram, AcceptsNumericRequestIdsAndNamesTheFlaggedKind) {
  // core/result.cpp writes request ids as numbers and the race's kind.
  auto r = fixtures::none_hot_with_race();
  for (auto& e : r["trace"]["events"]) e["request_id"] = e["request_id"] == "r-17" ? 17 : 18;
  r["trace"]["race"] = {{"kind", "flow_interleaving"}, {"person", "p-1"}, {"request_ids", {17, 18}}};
  const auto d = race_diagram(r);
  ASSERT_TRUE(d.has_value());
  EXPECT_NE(d->find("participant A as request 17"), std::string::npos);
  EXPECT_NE(d->find("B->>Partner: t=1041.1 ms unlink"), std::string::npos);
  EXPECT_NE(d->find("flagged as flow_interleaving"), std::string::npos);
  expect_valid_mermaid(*d);
}

TEST(RaceDiagram, IsAbsentWhenTheResultCapturedNoRace) {
  EXPECT_FALSE(race_diagram(fixtures::held_tx(20)).has_value());
  EXPECT_FALSE(race_diagram(fixtures::base_result("none", 1, 5)).has_value());
}

TEST(RaceDiagram, StripsCharactersThatWouldBreakMermaidFromDetails) {
  auto r = fixtures::none_hot_with_race();
  r["trace"]["events"][4]["detail"] = "unlink a;b #1 <x> {y} \"z\"";
  const auto d = race_diagram(r);
  ASSERT_TRUE(d.has_value());
  expect_valid_mermaid(*d);
}

// A lease store's calls (sim/renewal.cpp, real/real_world.cpp: "redis lease 7",
// "etcd lease 7 revision 3") go to the store's own lifeline, not PostgreSQL's;
// a row lease (the lease table) and a row lock stay on PostgreSQL.
json with_lock_steps(const std::string& a_detail, const std::string& b_detail) {
  auto r = fixtures::none_hot_with_race();
  r["strategy"] = "redis-lease:fenced";
  r["trace"]["race"]["kind"] = "overlap_person";
  json& events = r["trace"]["events"];
  events.push_back(fixtures::event("r-17", "lock.acquire", 1000.3, 1000.8, nullptr, a_detail));
  events.push_back(fixtures::event("r-18", "lock.acquire", 1040.3, 1052.0, nullptr, b_detail));
  return r;
}

TEST(RaceDiagram, DrawsRedisLeaseCallsOnARedisLifelineNotPostgres) {
  const auto d = race_diagram(with_lock_steps("redis lease 7", "redis lease 7 took over the expired lease of r-17"));
  ASSERT_TRUE(d.has_value());
  EXPECT_NE(d->find("participant Redis as Redis (lease store)"), std::string::npos);
  EXPECT_NE(d->find("A->>Redis: t=1000.3 ms lock.acquire redis lease 7"), std::string::npos);
  EXPECT_NE(d->find("B->>Redis: t=1040.3 ms lock.acquire redis lease 7 took over"), std::string::npos);
  EXPECT_NE(d->find("Redis-->>B: t=1052.0 ms lock.acquire after 11.7 ms"), std::string::npos);
  EXPECT_EQ(d->find("->>DB: t=1000.3 ms lock.acquire"), std::string::npos);
  // The database's own steps stay on PostgreSQL, and the store sits between it and the partner.
  EXPECT_NE(d->find("A->>DB: t=1000.2 ms db.begin"), std::string::npos);
  EXPECT_LT(pos(*d, "participant DB as PostgreSQL"), pos(*d, "participant Redis"));
  EXPECT_LT(pos(*d, "participant Redis"), pos(*d, "participant Partner"));
  EXPECT_EQ(d->find("participant Etcd"), std::string::npos);
  expect_valid_mermaid(*d);
}

TEST(RaceDiagram, DrawsEtcdLeaseCallsOnAnEtcdLifeline) {
  const auto d = race_diagram(with_lock_steps("etcd lease 7 revision 12", "etcd lease 7 held by r-17"));
  ASSERT_TRUE(d.has_value());
  EXPECT_NE(d->find("participant Etcd as etcd (lease store)"), std::string::npos);
  EXPECT_NE(d->find("A->>Etcd: t=1000.3 ms lock.acquire etcd lease 7 revision 12"), std::string::npos);
  EXPECT_EQ(d->find("participant Redis"), std::string::npos);
  expect_valid_mermaid(*d);
}

TEST(RaceDiagram, KeepsRowLeasesAndRowLocksOnPostgres) {
  const auto d = race_diagram(with_lock_steps("lease 7", "lease 7"));
  ASSERT_TRUE(d.has_value());
  EXPECT_NE(d->find("A->>DB: t=1000.3 ms lock.acquire lease 7"), std::string::npos);
  EXPECT_EQ(d->find("participant Redis"), std::string::npos);
  EXPECT_EQ(d->find("participant Etcd"), std::string::npos);
  expect_valid_mermaid(*d);
}

TEST(RaceDiagramSvg, IsTitledWithTheRaceItShows) {
  const auto svg = race_diagram_svg(with_lock_steps("redis lease 7", "redis lease 7"));
  ASSERT_TRUE(svg.has_value());
  EXPECT_NE(svg->find("<title>The race under redis-lease:fenced: overlap_person on p-1, as it happened</title>"),
            std::string::npos);
  EXPECT_NE(svg->find(">Redis (lease store)<"), std::string::npos);
  auto plain = fixtures::none_hot_with_race();
  const auto other = race_diagram_svg(plain);
  ASSERT_TRUE(other.has_value());
  EXPECT_NE(other->find("<title>The race under none on p-1, as it happened</title>"), std::string::npos);
}

TEST(PoolExhaustionDiagram, ShowsTheHoldersAndTheRequestThatTimedOut) {
  const auto d = pool_exhaustion_diagram(fixtures::held_tx(20));
  ASSERT_TRUE(d.has_value());
  EXPECT_NE(d->find("participant H1 as request r-30"), std::string::npos);
  EXPECT_NE(d->find("participant V as request r-40"), std::string::npos);
  EXPECT_NE(d->find("all 10 connections busy"), std::string::npos);
  EXPECT_NE(d->find("10 holders traced, 7 not drawn"), std::string::npos);
  EXPECT_NE(d->find("Note over V: t=31000.0 ms outcome pool_timeout after 30s"), std::string::npos);
  // The victim asks before it gives up.
  EXPECT_LT(pos(*d, "V->>Pool: t=1000.0 ms acquire connection"), pos(*d, "outcome pool_timeout"));
  expect_valid_mermaid(*d);
}

TEST(PoolExhaustionDiagram, IsAbsentWithoutAPoolTimeoutInTheTrace) {
  EXPECT_FALSE(pool_exhaustion_diagram(fixtures::none_hot_with_race()).has_value());
  EXPECT_FALSE(pool_exhaustion_diagram(fixtures::held_tx(2)).has_value());
}

}  // namespace
}  // namespace lockbench::report
