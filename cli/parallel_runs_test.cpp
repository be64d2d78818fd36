#include "cli/parallel_runs.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/settings.hpp"

using namespace lockbench::cli;
using nlohmann::json;

TEST(RunIndexed, HandsOnEveryResultInIndexOrderWhateverOrderTheyFinishIn) {
  for (int jobs : {1, 2, 4}) {
    std::vector<std::size_t> order;
    run_indexed(
        20, jobs,
        [](std::size_t i) {
          if (i % 3 == 0) std::this_thread::yield();  // later indices often finish first
          return json{{"i", i}};
        },
        [&](std::size_t i, json&& r) {
          EXPECT_EQ(r["i"].get<std::size_t>(), i);
          order.push_back(i);
        });
    ASSERT_EQ(order.size(), 20u) << jobs;
    for (std::size_t i = 0; i < order.size(); ++i) EXPECT_EQ(order[i], i) << jobs;
  }
}

TEST(RunIndexed, UsesMoreThanOneThreadWhenAskedTo) {
  std::atomic<int> running{0}, most{0};
  run_indexed(
      8, 2,
      [&](std::size_t) {
        const int now = ++running;
        for (int seen = most.load(); now > seen && !most.compare_exchange_weak(seen, now);) {
        }
        // Wait (bounded: 10 s at most, over at once when it is) for the other thread to be inside a run too.
        for (int spin = 0; spin < 20000 && most.load() < 2; ++spin) std::this_thread::sleep_for(std::chrono::microseconds(500));
        --running;
        return json{};
      },
      [](std::size_t, json&&) {});
  EXPECT_EQ(most.load(), 2);
}

TEST(RunIndexed, AFailedRunStopsTheSweepAfterHandingOnTheRunsBeforeIt) {
  for (int jobs : {1, 2}) {
    std::vector<std::size_t> handed;
    std::atomic<int> started{0};
    EXPECT_THROW(run_indexed(
                     100, jobs,
                     [&](std::size_t i) -> json {
                       ++started;
                       if (i == 5) throw std::runtime_error("run 5 failed");
                       return json{{"i", i}};
                     },
                     [&](std::size_t i, json&&) { handed.push_back(i); }),
                 std::runtime_error)
        << jobs;
    // Runs after the failed one may have finished on the other thread, but none is handed on.
    EXPECT_EQ(handed, (std::vector<std::size_t>{0, 1, 2, 3, 4})) << jobs;
    if (jobs == 1) {
      EXPECT_EQ(started.load(), 6);  // one after the other: nothing starts after the failure
    }
  }
}

TEST(ParseJobs, AcceptsOneTo256AndRefusesTheRestNamingTheFlag) {
  EXPECT_EQ(parse_jobs("1"), 1);
  EXPECT_EQ(parse_jobs("256"), 256);
  for (const char* bad : {"0", "257", "-1", "two", "2x", ""}) {
    try {
      parse_jobs(bad);
      ADD_FAILURE() << bad;
    } catch (const lockbench::SettingError& e) {
      EXPECT_NE(std::string(e.what()).find("--jobs"), std::string::npos);
    }
  }
  EXPECT_GE(default_jobs(), 1);
}
