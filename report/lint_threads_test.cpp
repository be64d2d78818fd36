// lint check 7 (check_virtual_threads): synchronized around the partner call
// on virtual threads pins carriers below JDK 24; without Tomcat's worker cap a
// dry pool's queue is bounded by connectionTimeout only.
#include <gtest/gtest.h>

#include "report/lint.hpp"

namespace lockbench::report {
namespace {

using namespace std::chrono_literals;

LintInput service(const std::string& strategy, int jdk, bool virtual_threads = true) {
  LintInput in;
  in.read_timeout = 5s;
  in.strategy = strategy;
  in.pool_size = 10;
  in.rate_per_s = 20;
  in.partner_mean = 1500ms;
  in.partner_p99 = 4s;
  in.virtual_threads = virtual_threads;
  in.jdk = jdk;
  return in;
}

std::vector<LintFinding> threads(const LintReport& r) {
  std::vector<LintFinding> out;
  for (const auto& f : r.findings)
    if (f.check == "threads") out.push_back(f);
  return out;
}

bool says(const std::vector<LintFinding>& fs, LintFinding::Level level, const std::string& text) {
  for (const auto& f : fs)
    if (f.level == level && f.message.find(text) != std::string::npos) return true;
  return false;
}

TEST(LintThreads, FlagsSynchronizedAroundTheCallOnVirtualThreadsBelowJdk24) {
  const auto f = threads(lint(service("synchronized", 21)));
  EXPECT_TRUE(says(f, LintFinding::Level::flag, "pin their carrier threads")) << f.front().message;
  EXPECT_TRUE(says(f, LintFinding::Level::flag, "on JDK 21")) << f.front().message;
  // 20/s x 2 calls x 1.5 s: at least 60 requests hold or wait for the monitor at once.
  EXPECT_TRUE(says(f, LintFinding::Level::flag, "at least 60.0 requests hold or wait for the monitor"))
      << f.front().message;
  EXPECT_TRUE(lint(service("synchronized", 23)).flagged());
}

TEST(LintThreads, PassesSynchronizedOnJdk24AndSaysNothingOfPinningWithoutItsCauses) {
  EXPECT_TRUE(says(threads(lint(service("synchronized", 24))), LintFinding::Level::ok, "JEP 491"));
  // ReentrantLock.tryLock() does not pin; platform threads do not either.
  EXPECT_FALSE(says(threads(lint(service("synchronized:try", 21))), LintFinding::Level::flag, "pin"));
  EXPECT_TRUE(threads(lint(service("synchronized", 21, false))).empty());
}

TEST(LintThreads, WarnsWhenTheJdkIsNotKnownAndSaysJava17KeepsPlatformThreads) {
  EXPECT_TRUE(says(threads(lint(service("synchronized", 0))), LintFinding::Level::warn, "--jdk not given"));
  const auto old = threads(lint(service("synchronized", 17)));
  ASSERT_EQ(old.size(), 1u);
  EXPECT_EQ(old[0].level, LintFinding::Level::warn);
  EXPECT_NE(old[0].message.find("Java 21 and up only"), std::string::npos) << old[0].message;
}

TEST(LintThreads, WarnsOfAnUnboundedQueueWhenThePoolRunsDryOnVirtualThreads) {
  const auto held = threads(lint(service("held-tx", 21)));  // 20/s x 3 s = 60 busy of 10
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0].level, LintFinding::Level::warn);
  EXPECT_NE(held[0].message.find("--rate 20 x connectionTimeout 30s = 600 requests"), std::string::npos)
      << held[0].message;
  const auto lease = threads(lint(service("row-lease", 21)));
  ASSERT_EQ(lease.size(), 1u);
  EXPECT_EQ(lease[0].level, LintFinding::Level::ok) << lease[0].message;
}

}  // namespace
}  // namespace lockbench::report
