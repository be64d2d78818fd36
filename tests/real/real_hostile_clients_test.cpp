// Hostile clients against `lockbench serve` and the fake partner, over real
// loopback sockets (docs/safety.md states the limits): a slowloris of 500
// connections, a 100 MB body, a header flood and request-smuggling framings.
// Throughout, health must answer within 1 s (an acceptance bound, measured and
// printed) and the server's RSS must stay under its idle size + 100 MB. Each
// attack is bounded and stops by itself; both tests take about 25 s together.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "real/pg_conn.hpp"
#include "scenarios/registry.hpp"
#include "tests/real/child_process.hpp"
#include "tests/real/test_env.hpp"

namespace lockbench {
namespace real_hostile_clients_test {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr int kSlowConnections = 500;
constexpr long kRssGrowthMaxKb = 100 * 1024;  // the stated bound: idle RSS + 100 MB
constexpr auto kHealthBound = 1000ms;         // the acceptance bound for a probe's answer

using test::Child;

int connect_to(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Sends `head`, then up to `body_bytes` of filler (stopping when the server
// stops reading), and returns the status of the answer (0 = none in 10 s).
int status_of_exchange(int port, const std::string& head, std::size_t body_bytes = 0) {
  const int fd = connect_to(port);
  if (fd < 0) return 0;
  ::send(fd, head.data(), head.size(), MSG_NOSIGNAL);
  const std::string chunk(64 * 1024, 'x');
  for (std::size_t sent = 0; sent < body_bytes;) {
    pollfd p{fd, POLLOUT | POLLIN, 0};
    if (::poll(&p, 1, 2000) <= 0 || (p.revents & POLLIN)) break;  // the server answered or stopped reading
    const ssize_t n = ::send(fd, chunk.data(), std::min(chunk.size(), body_bytes - sent), MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<std::size_t>(n);
  }
  std::string answer;
  const auto deadline = Clock::now() + 10s;
  while (answer.find("\r\n") == std::string::npos && Clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 200) <= 0) continue;
    char buf[1024];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    answer.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  if (answer.rfind("HTTP/1.1 ", 0) != 0 || answer.size() < 12) return 0;
  return std::stoi(answer.substr(9, 3));
}

// A header flood: one request whose headers go on (1 kB lines) up to `bytes`.
std::string header_flood(const std::string& request_line, std::size_t bytes) {
  std::string h = request_line + "\r\nHost: 127.0.0.1\r\n";
  const std::string line = "X-Flood: " + std::string(1000, 'f') + "\r\n";
  while (h.size() < bytes) h += line;
  return h;
}

// Probes GET `path` on `port` every 50 ms from another thread; the slowest answer.
class HealthWatch {
 public:
  HealthWatch(int port, std::string path) : port_(port), path_(std::move(path)) {
    thread_ = std::thread([this] {
      while (!stop_) {
        httplib::Client c("127.0.0.1", port_);
        c.set_connection_timeout(3s);
        c.set_read_timeout(3s);
        const auto t0 = Clock::now();
        const auto r = c.Get(path_);
        const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0);
        ++probes_;
        if (!r || r->status != 200) ++failed_;
        slowest_ms_ = std::max<long>(slowest_ms_, took.count());
        std::this_thread::sleep_for(50ms);
      }
    });
  }
  ~HealthWatch() { stop(); }
  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  long slowest_ms() const { return slowest_ms_; }
  int probes() const { return probes_; }
  int failed() const { return failed_; }

 private:
  int port_;
  std::string path_;
  std::atomic<bool> stop_{false};
  std::atomic<long> slowest_ms_{0};
  std::atomic<int> probes_{0}, failed_{0};
  std::thread thread_;
};

// 500 connections that each send a request line and then one header byte a
// second, for `length`. Returns how many the server closed before the end.
int slowloris(int port, const std::string& request_line, std::chrono::seconds length) {
  std::vector<int> fds;
  for (int i = 0; i < kSlowConnections; ++i) {
    const int fd = connect_to(port);
    if (fd < 0) continue;
    ::fcntl(fd, F_SETFL, O_NONBLOCK);
    const std::string start = request_line + "\r\nHost: 127.0.0.1\r\nX-Slow: ";
    ::send(fd, start.data(), start.size(), MSG_NOSIGNAL);
    fds.push_back(fd);
  }
  std::vector<bool> closed(fds.size(), false);
  const auto end = Clock::now() + length;
  while (Clock::now() < end) {
    std::this_thread::sleep_for(1s);
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (closed[i]) continue;
      char buf[512];
      const ssize_t got = ::recv(fds[i], buf, sizeof buf, 0);
      if (got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK) ||
          ::send(fds[i], "s", 1, MSG_NOSIGNAL) < 0)
        closed[i] = true;
      else if (got > 0)  // an answer (408, or a close after it)
        closed[i] = true;
    }
  }
  int n = 0;
  for (std::size_t i = 0; i < fds.size(); ++i) {
    n += closed[i] ? 1 : 0;
    ::close(fds[i]);
  }
  return n;
}

TEST(HostileClients, ServeKeepsHealthAndMemoryThroughSlowlorisBigBodiesHeaderFloodsAndSmuggling) {
  LOCKBENCH_NEED_DB();
  const std::int64_t run = test::private_run_id();
  {
    auto c = real::open_session(test::test_db());
    real::create_schema(*c);
    real::seed_rows(*c, run, make_scenario("single-call")->tables(), 5);
  }
  // Few request threads (8 workers + 8 queued + 16 = 32 connection threads): easy to take them all.
  Child pod(LOCKBENCH_BIN,
            {"serve", "--scenario", "single-call", "--strategy", "none", "--db", test::test_db(), "--partner",
             "http://127.0.0.1:1", "--port", "0", "--management-port", "0", "--run-id", std::to_string(run), "--keys",
             "5", "--maximum-pool-size", "2", "--max-threads", "8", "--accept-count", "8"},
            {"LOCKBENCH_CONTROL_TOKEN=t0ken-for-the-test"});
  const int port = pod.port_after("listening on ");
  const int management = pod.port_after("management on ");
  ASSERT_GT(port, 0);
  ASSERT_GT(management, 0) << "serve printed no 'management on' line";
  const std::string op = "POST /calls/1 HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Request-Id: 1\r\n";
  ASSERT_EQ(status_of_exchange(management, "GET /health/liveness HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"), 200);
  const long rss_idle = pod.rss_kb();

  HealthWatch health(management, "/health/liveness");
  // The framings and limits, one request each: answered at once, never read to the end.
  EXPECT_EQ(status_of_exchange(port, "POST /calls/1 HTTP/1.1\r\nHost: x\r\nX-Request-Id: 1\r\n\r\n"), 411);  // no length
  EXPECT_EQ(status_of_exchange(port, op + "Content-Length: 4\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n"), 400);  // smuggling
  EXPECT_EQ(status_of_exchange(port, op + "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n"), 400);
  EXPECT_EQ(status_of_exchange(port, op + "Content-Length: 104857600\r\n\r\n", 100u << 20), 413);  // 100 MB body
  const int chunked = status_of_exchange(port, op + "Transfer-Encoding: chunked\r\n\r\n100000\r\n", 100u << 20);
  EXPECT_TRUE(chunked == 413 || chunked == 400) << chunked;  // 100 MB of chunks: cut at the body limit
  EXPECT_EQ(status_of_exchange(port, header_flood("GET /health/liveness HTTP/1.1", 50u << 20)), 431);  // 50 MB of headers
  EXPECT_EQ(status_of_exchange(port, "POST /calls/1000001 HTTP/1.1\r\nHost: x\r\nX-Request-Id: 2\r\nContent-Length: 0\r\n\r\n"),
            404);  // outside --keys 5: no row is inserted for it
  // The control endpoint: the token, not just any client.
  EXPECT_EQ(status_of_exchange(port, "POST /lockbench/requests-over HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"), 403);
  EXPECT_EQ(status_of_exchange(port, "POST /lockbench/requests-over HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n"
                           "Authorization: Bearer t0ken-for-the-test\r\n\r\n"),
            200);
  const long rss_after_bodies = pod.rss_kb();

  // Slowloris: every request thread taken; the management port still answers.
  const int closed = slowloris(port, "POST /calls/1 HTTP/1.1", 14s);
  const long rss_after_slowloris = pod.rss_kb();
  health.stop();
  // The first connections' requests passed their 10 s deadline before the attack ended.
  EXPECT_GE(closed, 8) << "slow requests were never cut off";
  std::printf("serve under attack: %d health probes, slowest %ld ms, %d failed; RSS idle %ld kB, after bodies %ld kB, "
              "after slowloris %ld kB; %d of %d slow connections closed by the server\n",
              health.probes(), health.slowest_ms(), health.failed(), rss_idle, rss_after_bodies, rss_after_slowloris,
              closed, kSlowConnections);
  EXPECT_GT(health.probes(), 50);
  EXPECT_EQ(health.failed(), 0);
  EXPECT_LT(health.slowest_ms(), kHealthBound.count());
  EXPECT_LT(rss_after_bodies - rss_idle, kRssGrowthMaxKb);
  EXPECT_LT(rss_after_slowloris - rss_idle, kRssGrowthMaxKb);
  // The attack over, the request port answers again.
  bool served = false;
  for (const auto until = Clock::now() + 30s; !served && Clock::now() < until; std::this_thread::sleep_for(200ms))
    served = status_of_exchange(port, "GET /health/liveness HTTP/1.1\r\nHost: x\r\n\r\n") == 200;
  EXPECT_TRUE(served);
  {
    auto c = real::open_session(test::test_db());
    real::drop_rows(*c, run);
  }
}

// GET `path`, its status if answered within `bound` (0 otherwise).
int status_within(int port, const std::string& path, std::chrono::milliseconds bound) {
  const int fd = connect_to(port);
  if (fd < 0) return 0;
  const std::string head = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  ::send(fd, head.data(), head.size(), MSG_NOSIGNAL);
  std::string answer;
  const auto deadline = Clock::now() + bound;
  while (answer.find("\r\n") == std::string::npos && Clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    char buf[512];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    answer.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return answer.rfind("HTTP/1.1 ", 0) == 0 && answer.size() >= 12 ? std::stoi(answer.substr(9, 3)) : 0;
}

// Issue #42: with the pool exhausted, 8 readiness probes asking timeout_ms=999999 and 40 idle or
// trickling connections on the management port took its 8 threads, and liveness failed 5 of 5.
TEST(HostileClients, TheManagementPortAnswersLivenessWithThePoolExhaustedAndASlowlorisOnIt) {
  LOCKBENCH_NEED_DB();
  const std::int64_t run = test::private_run_id();
  {
    auto c = real::open_session(test::test_db());
    real::create_schema(*c);
    real::seed_rows(*c, run, make_scenario("single-call")->tables(), 5);
  }
  // A partner of our own that answers after 4 s: held-tx keeps the pool's one connection meanwhile.
  char config[] = "/tmp/lockbench_mgmt_partner_XXXXXX";
  const int cfd = ::mkstemp(config);
  ASSERT_GE(cfd, 0);
  const std::string doc = R"({"latency": {"*": {"dist": "fixed", "ms": 4000}}})";
  ASSERT_EQ(::write(cfd, doc.data(), doc.size()), static_cast<ssize_t>(doc.size()));
  ::close(cfd);
  Child partner(LOCKBENCH_FAKE_PARTNER_BIN, {"--port", "0", "--config", config});
  const int partner_port = partner.port_after("listening on ");
  ::unlink(config);
  ASSERT_GT(partner_port, 0);
  Child pod(LOCKBENCH_BIN,
            {"serve", "--scenario", "single-call", "--strategy", "held-tx", "--db", test::test_db(), "--partner",
             "http://127.0.0.1:" + std::to_string(partner_port), "--port", "0", "--management-port", "0", "--run-id",
             std::to_string(run), "--keys", "5", "--maximum-pool-size", "1", "--max-threads", "8", "--accept-count", "8",
             "--probe-timeout", "1s"});
  const int port = pod.port_after("listening on ");
  const int management = pod.port_after("management on ");
  ASSERT_GT(port, 0);
  ASSERT_GT(management, 0);
  ASSERT_EQ(status_within(management, "/health/readiness", 3000ms), 200);  // the pool is there and free

  // Exhaust the pool for 8 s: one request holds its connection through its 4 s partner call, the next waits for it.
  std::vector<std::thread> ops;
  for (int i = 1; i <= 2; ++i)
    ops.emplace_back([port, i] {
      status_of_exchange(port, "POST /calls/" + std::to_string(i) + " HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Request-Id: " +
                                   std::to_string(i) + "\r\nContent-Length: 0\r\n\r\n");
    });
  bool exhausted = false;
  for (const auto until = Clock::now() + 3s; !exhausted && Clock::now() < until; std::this_thread::sleep_for(50ms)) {
    httplib::Client c("127.0.0.1", port);
    const auto r = c.Get("/lockbench/pool");
    exhausted = r && r->status == 200 && nlohmann::json::parse(r->body)["active"] == 1 &&
                nlohmann::json::parse(r->body)["pending"].get<int>() >= 1;
  }
  ASSERT_TRUE(exhausted) << "the pool was never exhausted";

  // 8 readiness probes asking for 999999 ms, and 40 slow connections on the management port.
  std::atomic<int> readiness_down{0}, readiness_answered{0};
  std::vector<std::thread> probes;
  for (int i = 0; i < 8; ++i)
    probes.emplace_back([&] {
      const int st = status_within(management, "/health/readiness?timeout_ms=999999", 5000ms);
      readiness_answered += st != 0 ? 1 : 0;
      readiness_down += st == 503 ? 1 : 0;
    });
  std::vector<int> slow;
  for (int i = 0; i < 40; ++i) {
    const int fd = connect_to(management);
    ASSERT_GE(fd, 0);
    ::fcntl(fd, F_SETFL, O_NONBLOCK);
    if (i % 2 == 0) ::send(fd, "GET /health/liveness HTTP/1.1\r\nX-Slow: ", 39, MSG_NOSIGNAL);  // half trickle, half say nothing
    slow.push_back(fd);
  }
  int answered = 0, sent = 0;
  for (const auto until = Clock::now() + 3s; Clock::now() < until; std::this_thread::sleep_for(100ms)) {
    ++sent;
    answered += status_within(management, "/health/liveness", 1000ms) == 200 ? 1 : 0;
    for (std::size_t i = 0; i < slow.size(); i += 2) ::send(slow[i], "s", 1, MSG_NOSIGNAL);
  }
  // The management port's own read deadline (2 s from accept) closed the slow connections.
  int closed = 0;
  for (const int fd : slow) {
    pollfd p{fd, POLLIN, 0};
    char buf[256];
    closed += ::poll(&p, 1, 2000) > 0 && ::recv(fd, buf, sizeof buf, 0) <= 0 ? 1 : 0;
    ::close(fd);
  }
  for (auto& t : probes) t.join();
  for (auto& t : ops) t.join();
  std::printf("management port under attack: %d of %d liveness probes answered within 1 s; readiness %d of 8 answered "
              "(%d DOWN); %d of 40 slow connections closed by the server\n",
              answered, sent, readiness_answered.load(), readiness_down.load(), closed);
  EXPECT_GE(sent, 10);
  EXPECT_GE(answered, sent * 9 / 10);
  EXPECT_EQ(readiness_answered.load(), 8);  // within 5 s, not 999999 ms
  EXPECT_EQ(readiness_down.load(), 8);      // the pool stayed taken for 8 s: each gave up at --probe-timeout
  EXPECT_GE(closed, 36);
  {
    auto c = real::open_session(test::test_db());
    real::drop_rows(*c, run);
  }
}

TEST(HostileClients, TheFakePartnerKeepsHealthAndMemoryThroughTheSameAttacksAndGuardsItsAdmin) {
  Child partner(LOCKBENCH_FAKE_PARTNER_BIN, {"--port", "0", "--idle-timeout", "3s"});
  const int port = partner.port_after("listening on ");
  ASSERT_GT(port, 0);
  const std::string admin = "POST /admin/reset HTTP/1.1\r\nContent-Length: 2\r\n";
  ASSERT_EQ(status_of_exchange(port, admin + "Host: 127.0.0.1\r\nContent-Type: application/json\r\n\r\n{}"), 200);
  const long rss_idle = partner.rss_kb();
  HealthWatch health(port, "/admin/server");
  // The oracle: no cross-origin text/plain POST, no foreign Host (DNS rebinding).
  EXPECT_EQ(status_of_exchange(port, admin + "Host: 127.0.0.1\r\nContent-Type: text/plain\r\n\r\n{}"), 415);
  EXPECT_EQ(status_of_exchange(port, admin + "Host: evil.example\r\nContent-Type: application/json\r\n\r\n{}"), 403);
  const std::string charge = "POST /v1/charges HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  EXPECT_EQ(status_of_exchange(port, charge + "Content-Length: 4\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n"), 400);
  EXPECT_EQ(status_of_exchange(port, charge + "Transfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n"), 400);
  EXPECT_EQ(status_of_exchange(port, charge + "Content-Length: 104857600\r\n\r\n", 100u << 20), 413);
  EXPECT_EQ(status_of_exchange(port, header_flood("GET /admin/server HTTP/1.1", 50u << 20)), 431);
  const long rss_after_bodies = partner.rss_kb();
  const int closed = slowloris(port, "POST /v1/charges HTTP/1.1", 6s);  // --idle-timeout 3s cuts them
  const long rss_after_slowloris = partner.rss_kb();
  health.stop();
  std::printf("fake partner under attack: %d health probes, slowest %ld ms, %d failed; RSS idle %ld kB, after bodies "
              "%ld kB, after slowloris %ld kB; %d of %d slow connections closed by the server\n",
              health.probes(), health.slowest_ms(), health.failed(), rss_idle, rss_after_bodies, rss_after_slowloris,
              closed, kSlowConnections);
  EXPECT_GE(closed, kSlowConnections * 9 / 10);
  EXPECT_GT(health.probes(), 20);
  EXPECT_EQ(health.failed(), 0);
  EXPECT_LT(health.slowest_ms(), kHealthBound.count());
  EXPECT_LT(rss_after_bodies - rss_idle, kRssGrowthMaxKb);
  EXPECT_LT(rss_after_slowloris - rss_idle, kRssGrowthMaxKb);
}

}  // namespace real_hostile_clients_test
}  // namespace lockbench
