#include "sim/event_loop.hpp"

#include "core/task.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace lockbench::sim {
namespace {

using namespace std::chrono_literals;

struct Log {
  EventLoop* loop;
  std::vector<std::pair<std::uint64_t, Duration>> seen;  // (arg, time)
};
void note(void* ctx, std::uint64_t arg) {
  auto* log = static_cast<Log*>(ctx);
  log->seen.emplace_back(arg, log->loop->now());
}

TEST(EventLoop, RunsEventsInTimeOrderAndEqualTimesInInsertionOrder) {
  EventLoop loop;
  Log log{&loop, {}};
  loop.at(20ms, kGlobal, &note, &log, 1);
  loop.at(10ms, kGlobal, &note, &log, 2);
  loop.at(20ms, kGlobal, &note, &log, 3);
  loop.at(10ms, kGlobal, &note, &log, 4);
  EXPECT_TRUE(loop.run(Duration::max(), 100));
  ASSERT_EQ(log.seen.size(), 4u);
  EXPECT_EQ(log.seen[0].first, 2u);
  EXPECT_EQ(log.seen[1].first, 4u);
  EXPECT_EQ(log.seen[2].first, 1u);
  EXPECT_EQ(log.seen[3].first, 3u);
  EXPECT_EQ(loop.now(), 20ms);
  EXPECT_EQ(loop.events_run(), 4u);
}

// Invariants (base/assert.hpp): virtual time never runs back, a wait is never negative.
TEST(EventLoopDeathTest, AnEventScheduledInThePastStopsTheSimulatorWithItsPlace) {
  EventLoop loop;
  Log log{&loop, {}};
  loop.at(20ms, kGlobal, &note, &log, 1);
  ASSERT_TRUE(loop.run(Duration::max(), 100));
  loop.at(20ms, kGlobal, &note, &log, 2);  // now is fine
  EXPECT_DEATH(loop.at(19ms, kGlobal, &note, &log, 3), "invariant broken at .*event_loop\\.cpp:[0-9]+: an event scheduled in the past");
  const int stream = loop.new_stream();
  EXPECT_DEATH(loop.at_stream(stream, 5ms, kGlobal, &note, &log, 4), "an event scheduled in the past");
}

Task<void> sleep_for_loop(EventLoop& loop, Duration d) { co_await Sleep{loop, d, kGlobal}; }

TEST(EventLoopDeathTest, ANegativeWaitStopsTheSimulator) {
  EXPECT_DEATH(
      {
        EventLoop loop;
        spawn(sleep_for_loop(loop, -1ms), [](std::exception_ptr) {});
      },
      "invariant broken at .*event_loop\\.hpp:[0-9]+: a negative wait");
}

// Each event schedules up to two more, with delays that repeat (they take lanes)
// and delays that do not (the heap); every event remembers when it was due and
// its scheduling order, and the run must see them sorted by exactly that.
struct Spawner {
  EventLoop* loop = nullptr;
  std::uint64_t made = 0;
  std::vector<std::pair<Duration, std::uint64_t>> due;   // by event id: (time, order scheduled)
  std::vector<std::pair<Duration, std::uint64_t>> seen;  // in the order run
  std::uint64_t state = 12345;
  std::uint64_t roll() { return (state = state * 6364136223846793005ULL + 1442695040888963407ULL) >> 33; }
  int stream = -1;  // when set, every other event goes through it (in order or not)
  void schedule(Duration d) {
    const std::uint64_t id = made++;
    due.emplace_back(loop->now() + d, id);
    if (stream >= 0 && id % 2 == 0)
      loop->at_stream(stream, loop->now() + d, kGlobal, &Spawner::run, this, id);
    else
      loop->at(loop->now() + d, kGlobal, &Spawner::run, this, id);
  }
  static void run(void* ctx, std::uint64_t id) {
    auto* s = static_cast<Spawner*>(ctx);
    s->seen.push_back(s->due[id]);
    EXPECT_EQ(s->due[id].first, s->loop->now());
    for (int k = 0; k < 2 && s->made < 20000; ++k) {
      static const Duration fixed[] = {0ms, 500us, 500us, 3ms, 7ms};
      const std::uint64_t r = s->roll();
      s->schedule(r % 3 == 0 ? Duration(static_cast<std::int64_t>(r % 50'000'000)) : fixed[r % 5]);
    }
  }
};

TEST(EventLoop, EventsInLanesAndInTheHeapRunInOneTimeThenInsertionOrder) {
  EventLoop loop;
  Spawner s;
  s.loop = &loop;
  for (int i = 0; i < 8; ++i) s.schedule(Duration(i * 1000));
  EXPECT_TRUE(loop.run(Duration::max(), 100'000));
  ASSERT_EQ(s.seen.size(), s.made);
  EXPECT_TRUE(std::is_sorted(s.seen.begin(), s.seen.end()));
  EXPECT_EQ(loop.pending(), 0u);
  EXPECT_EQ(loop.next_time(), Duration::max());
}

TEST(EventLoop, AStreamsEventsRunInOneOrderWithTheOthersEvenWhenScheduledOutOfOrder) {
  EventLoop loop;
  Spawner s;
  s.loop = &loop;
  s.stream = loop.new_stream();
  ASSERT_GE(s.stream, 0);
  for (int i = 0; i < 8; ++i) s.schedule(Duration(i * 1000));
  EXPECT_TRUE(loop.run(Duration::max(), 100'000));
  ASSERT_EQ(s.seen.size(), s.made);
  EXPECT_TRUE(std::is_sorted(s.seen.begin(), s.seen.end()));
  EXPECT_EQ(loop.pending(), 0u);
}

TEST(EventLoop, StreamsAreDistinctOutliveClearAndFallBackToTheHeapWhenNoneIsFree) {
  EventLoop loop;
  Log log{&loop, {}};
  std::vector<int> streams;
  for (int s = loop.new_stream(); s >= 0; s = loop.new_stream()) streams.push_back(s);
  ASSERT_FALSE(streams.empty());
  std::vector<int> sorted = streams;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end());
  // Every lane is a stream's: a repeated delay cannot take one and waits in the heap.
  for (std::uint64_t i = 0; i < 3; ++i) loop.at(5ms, kGlobal, &note, &log, 10 + i);
  loop.at_stream(streams[0], 7ms, kGlobal, &note, &log, 1);
  loop.at_stream(streams[0], 3ms, kGlobal, &note, &log, 2);  // earlier than the stream's last: the heap
  loop.at_stream(streams[0], 7ms, kGlobal, &note, &log, 3);  // in order again: the stream
  loop.at_stream(-1, 4ms, kGlobal, &note, &log, 4);           // no stream: the heap
  EXPECT_EQ(loop.pending(), 7u);
  EXPECT_TRUE(loop.run(Duration::max(), 100));
  std::vector<std::uint64_t> order;
  for (const auto& [arg, t] : log.seen) order.push_back(arg);
  EXPECT_EQ(order, (std::vector<std::uint64_t>{2, 4, 10, 11, 12, 1, 3}));

  // clear() forgets the events and keeps the lanes the streams'.
  loop.at_stream(streams[0], 9ms, kGlobal, &note, &log, 20);
  loop.clear();
  EXPECT_EQ(loop.pending(), 0u);
  EXPECT_EQ(loop.new_stream(), -1);
  log.seen.clear();
  loop.at_stream(streams[0], 9ms, kGlobal, &note, &log, 5);
  loop.at_stream(streams[0], 9ms, kGlobal, &note, &log, 6);
  loop.at(8ms, kGlobal, &note, &log, 7);
  loop.at(9ms, kGlobal, &note, &log, 8);
  EXPECT_TRUE(loop.run(Duration::max(), 100));
  order.clear();
  for (const auto& [arg, t] : log.seen) order.push_back(arg);
  EXPECT_EQ(order, (std::vector<std::uint64_t>{7, 5, 6, 8}));
}

// Delays that alternate are never seen twice running: every event waits in the
// heap. Equal times keep their insertion order as it grows past a few levels,
// shrinks and grows again.
TEST(EventLoop, EqualTimesInTheHeapKeepInsertionOrderAsItGrowsAndShrinks) {
  EventLoop loop;
  Log log{&loop, {}};
  std::vector<std::uint64_t> early, late;
  for (std::uint64_t i = 0; i < 200; ++i) {
    const bool first = i % 2 == 0;
    loop.at(first ? 1ms : 2ms, kGlobal, &note, &log, i);
    (first ? early : late).push_back(i);
  }
  EXPECT_EQ(loop.pending(), 200u);
  // Most of them, then more scheduled: the heap shrinks to a few and grows again.
  EXPECT_FALSE(loop.run(Duration::max(), 190));
  for (std::uint64_t i = 200; i < 300; ++i) {
    loop.at(i % 2 == 0 ? 3ms : 4ms, kGlobal, &note, &log, i);
    (i % 2 == 0 ? early : late).push_back(i);
  }
  EXPECT_TRUE(loop.run(Duration::max(), 1000));
  ASSERT_EQ(log.seen.size(), 300u);
  std::vector<std::uint64_t> order;
  for (const auto& [arg, t] : log.seen) order.push_back(arg);
  std::vector<std::uint64_t> want;
  for (auto i : early) if (i < 200) want.push_back(i);
  for (auto i : late) if (i < 200) want.push_back(i);
  for (auto i : early) if (i >= 200) want.push_back(i);
  for (auto i : late) if (i >= 200) want.push_back(i);
  EXPECT_EQ(order, want);
}

TEST(EventLoop, DropsTheEventsOfADeadOwner) {
  EventLoop loop;
  Log log{&loop, {}};
  const int pod = loop.new_owner();
  loop.at(10ms, pod, &note, &log, 1);
  loop.at(10ms, kGlobal, &note, &log, 2);
  loop.kill(pod);
  loop.run(Duration::max(), 100);
  ASSERT_EQ(log.seen.size(), 1u);
  EXPECT_EQ(log.seen[0].first, 2u);
}

TEST(EventLoop, DefersAPausedOwnersEventsToTheEndOfThePauseInTheirOrder) {
  EventLoop loop;
  Log log{&loop, {}};
  const int pod = loop.new_owner();
  loop.pause(pod, 100ms);
  loop.at(30ms, pod, &note, &log, 1);
  loop.at(10ms, pod, &note, &log, 2);
  loop.at(50ms, kGlobal, &note, &log, 3);  // the database and partner never pause
  loop.at(150ms, pod, &note, &log, 4);
  loop.run(Duration::max(), 100);
  ASSERT_EQ(log.seen.size(), 4u);
  EXPECT_EQ(log.seen[0], std::make_pair(std::uint64_t{3}, Duration(50ms)));
  EXPECT_EQ(log.seen[1], std::make_pair(std::uint64_t{2}, Duration(100ms)));
  EXPECT_EQ(log.seen[2], std::make_pair(std::uint64_t{1}, Duration(100ms)));
  EXPECT_EQ(log.seen[3], std::make_pair(std::uint64_t{4}, Duration(150ms)));
}

// A held owner (a pod whose carriers are all pinned): its due events wait, in
// their order, until release; its twin (the pinned requests) runs on.
struct Releaser {
  EventLoop* loop;
  int owner;
  static void run(void* ctx, std::uint64_t) {
    auto* r = static_cast<Releaser*>(ctx);
    r->loop->release(r->owner);
  }
};

TEST(EventLoop, ParksAHeldOwnersEventsInTheirOrderUntilReleaseWhileItsTwinRuns) {
  EventLoop loop;
  Log log{&loop, {}};
  const int pod = loop.new_owner();
  const int twin = loop.new_twin(pod);
  loop.hold(pod);
  EXPECT_TRUE(loop.held(pod));
  EXPECT_FALSE(loop.held(twin));
  loop.at(30ms, pod, &note, &log, 1);
  loop.at(10ms, pod, &note, &log, 2);
  loop.at(20ms, twin, &note, &log, 3);
  loop.at(40ms, kGlobal, &note, &log, 4);
  Releaser releaser{&loop, pod};
  loop.at(60ms, kGlobal, &Releaser::run, &releaser);
  loop.at(70ms, pod, &note, &log, 5);  // after the release: on time
  loop.run(Duration::max(), 100);
  const std::vector<std::pair<std::uint64_t, Duration>> want = {
      {3, 20ms}, {4, 40ms}, {2, 60ms}, {1, 60ms}, {5, 70ms}};
  EXPECT_EQ(log.seen, want);
  EXPECT_FALSE(loop.held(pod));
  EXPECT_EQ(loop.pending(), 0u);
}

TEST(EventLoop, AKillDropsParkedEventsAndKillsAndPausesTheTwinWithItsOwner) {
  EventLoop loop;
  Log log{&loop, {}};
  const int pod = loop.new_owner();
  const int twin = loop.new_twin(pod);
  loop.pause(pod, 100ms);
  EXPECT_EQ(loop.paused_until(twin), 100ms);
  loop.hold(pod);
  EXPECT_EQ(loop.paused_until(pod), 100ms);  // held is not a pause: the pause's end is still told
  loop.at(10ms, twin, &note, &log, 1);        // paused with its owner
  loop.at(20ms, pod, &note, &log, 2);
  loop.run(50ms, 100);
  EXPECT_TRUE(log.seen.empty());
  EXPECT_EQ(loop.pending(), 2u);  // one parked, one deferred to the pause's end
  loop.kill(pod);
  EXPECT_FALSE(loop.alive(twin));
  loop.run(Duration::max(), 100);
  EXPECT_TRUE(log.seen.empty());
}

TEST(EventLoop, AReleaseInsideAPauseDefersTheParkedEventsToThePausesEnd) {
  EventLoop loop;
  Log log{&loop, {}};
  const int pod = loop.new_owner();
  loop.hold(pod);
  loop.at(10ms, pod, &note, &log, 1);
  loop.run(20ms, 100);
  loop.pause(pod, 100ms);
  loop.release(pod);
  loop.run(Duration::max(), 100);
  ASSERT_EQ(log.seen.size(), 1u);
  EXPECT_EQ(log.seen[0], std::make_pair(std::uint64_t{1}, Duration(100ms)));
}

TEST(EventLoop, StopsAtTheTimeBoundAndKeepsLaterEvents) {
  EventLoop loop;
  Log log{&loop, {}};
  loop.at(10ms, kGlobal, &note, &log, 1);
  loop.at(30ms, kGlobal, &note, &log, 2);
  EXPECT_FALSE(loop.run(20ms, 100));
  EXPECT_EQ(log.seen.size(), 1u);
  EXPECT_EQ(loop.next_time(), 30ms);
}

}  // namespace
}  // namespace lockbench::sim
