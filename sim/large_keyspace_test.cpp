// A key space of millions: the simulator's memory follows the work, not the keys.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

#include "sim/run_sim.hpp"
#include "scenarios/registry.hpp"
#include "fake_partner/model/config.hpp"

namespace lockbench {
namespace {

using namespace std::chrono_literals;

Settings ten_million_keys() {
  Settings s;
  s.scenario = "switch-primary";
  s.strategy = "held-tx";
  s.keys = 10'000'000;
  s.key_dist = KeyDist::uniform;
  s.rate_per_s = 3.2;
  s.duration = 30s;
  return s;
}

nlohmann::json reset_of(const Settings& s) { return make_scenario(s.scenario)->partner_reset(s); }

TEST(LargeKeySpace, TheResetDocumentIsCompactWhateverTheKeySpaceAndTheModelReadsIt) {
  Settings s = ten_million_keys();
  const auto doc = reset_of(s);
  EXPECT_FALSE(doc.contains("persons"));
  EXPECT_EQ(doc["person_range"]["count"], 10'000'000);
  EXPECT_EQ(doc["person_range"]["identities"], s.identities_per_person);
  EXPECT_LT(doc.dump().size(), 200u);  // far below the partner's 1 MiB body limit
  EXPECT_NO_THROW(partner::ResetSpec::from_json(doc));
}

TEST(LargeKeySpace, AKeySpaceAboveTheListedLimitRunsWithEveryRequestServed) {
  // 20,000 keys: more than a listed reset document could carry.
  Settings s = ten_million_keys();
  s.keys = 20'000;
  s.duration = 60s;
  const auto r = run_sim(s);
  EXPECT_GT(r["requests"]["total"].get<int>(), 100);
  EXPECT_EQ(r["requests"]["ok"], r["requests"]["total"]);
  EXPECT_EQ(r["requests"]["error"], 0);
}

TEST(LargeKeySpace, TenMillionKeysRunInAFewHundredMegabytes) {
  const Settings s = ten_million_keys();
  // In a child process, so its peak RSS is the run's alone.
  int fd[2];
  ASSERT_EQ(::pipe(fd), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(fd[0]);
    long ok = -1;
    try {
      ok = run_sim(s)["requests"]["ok"].get<long>();
    } catch (...) {
    }
    rusage u{};
    ::getrusage(RUSAGE_SELF, &u);
    char line[64];
    const int n = std::snprintf(line, sizeof line, "%ld %ld", ok, u.ru_maxrss);
    (void)!::write(fd[1], line, static_cast<std::size_t>(n));
    ::_exit(0);
  }
  ::close(fd[1]);
  char buf[64] = {};
  const auto got = ::read(fd[0], buf, sizeof buf - 1);
  ::close(fd[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_GT(got, 0);
  long ok = 0, maxrss_kb = 0;
  ASSERT_EQ(std::sscanf(buf, "%ld %ld", &ok, &maxrss_kb), 2);
  EXPECT_GT(ok, 50);                    // about 96 requests in 30 s, nearly all ok
  EXPECT_LT(maxrss_kb, 400L * 1024);    // the goal is 200 MB; 2x margin for allocator and test process
}

}  // namespace
}  // namespace lockbench
