// Admin access under a flood of client connections (issue 8): at
// --max-connections the oldest idle connection makes room, and with every
// connection busy the admin reserve still serves /admin/* (503 for the API).
// Bounded: at most max-connections + 64 sockets per test, all closed at the end.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sys/wait.h>

#include "fake_partner/server/server_fixture.hpp"

namespace lockbench::partner_server::testing {
namespace {

// A TCP connection that sends nothing: an idle client.
class IdleClient {
 public:
  explicit IdleClient(std::uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = fd_ >= 0 && ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }
  ~IdleClient() {
    if (fd_ >= 0) ::close(fd_);
  }
  IdleClient(IdleClient&& o) noexcept : fd_(o.fd_), connected_(o.connected_) { o.fd_ = -1; }
  IdleClient(const IdleClient&) = delete;
  bool connected() const { return connected_; }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

std::vector<IdleClient> open_idle(std::uint16_t port, std::size_t n) {
  std::vector<IdleClient> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) out.emplace_back(port);
  return out;
}

json server_figures(std::uint16_t port) {
  httplib::Client c("127.0.0.1", port);
  c.set_connection_timeout(2, 0);
  c.set_read_timeout(5, 0);
  auto res = c.Get("/admin/server");
  return res && res->status == 200 ? json::parse(res->body, nullptr, false) : json();
}

// The fd limit a test can count on: raised to the hard limit (the server child,
// forked later, inherits it).
std::size_t raise_fd_limit() {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return 0;
  lim.rlim_cur = lim.rlim_max;
  setrlimit(RLIMIT_NOFILE, &lim);
  getrlimit(RLIMIT_NOFILE, &lim);
  return lim.rlim_cur == RLIM_INFINITY ? SIZE_MAX : static_cast<std::size_t>(lim.rlim_cur);
}

TEST(FakePartnerAdminRoom, MetricsAnswerWithMoreIdleClientsThanMaxConnectionsAndTheOldestIdleAreClosed) {
  raise_fd_limit();
  PartnerProcess server({"--max-connections", "200"});
  auto idle = open_idle(server.port(), 250);
  for (const auto& c : idle) ASSERT_TRUE(c.connected());

  httplib::Client admin("127.0.0.1", server.port());
  admin.set_connection_timeout(2, 0);
  admin.set_read_timeout(5, 0);
  auto res = admin.Get("/admin/metrics");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  EXPECT_TRUE(json::parse(res->body, nullptr, false).is_object());

  const json figures = server_figures(server.port());
  ASSERT_TRUE(figures.is_object());
  // 250 idle + the admin connections, 200 allowed: at least 50 idle ones went, none was refused.
  EXPECT_GE(figures["connections"]["evicted"].get<std::int64_t>(), 50);
  EXPECT_EQ(figures["connections"]["refused"], 0);
  EXPECT_LE(figures["connections"]["open"].get<std::int64_t>(), 200 + 64);
}

TEST(FakePartnerAdminRoom, WithEveryConnectionBusyTheAdminReserveServesAdminOnlyAndRefusesTheApi) {
  // Every call hangs 20 s: 20 connections busy in a call, none idle.
  ConfigFile config(json{{"latency", {{"*", {{"dist", "fixed"}, {"ms", 20000}}}}}});
  PartnerProcess server({"--config", config.path(), "--max-connections", "20", "--admin-connections", "4"});
  {
    httplib::Client c("127.0.0.1", server.port());
    auto res = c.Post("/admin/reset", kReset.dump(), "application/json");
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 200);
  }  // its connection closes: not counted below (the server's side of it is gone)
  ASSERT_TRUE(wait_until([&] { return server_sockets(server.port()).open == 0; }));
  // 20 calls sent, each on a connection the test holds: the request is with the kernel before the
  // wait below, so "20 open, none unread" means every one was accepted and read, a call in flight
  // (a connection opened but not yet sent on would look the same, and would be idle: evicted).
  auto busy = hold_requests(server.port(), 20, "GET /api/v2/users/auth0%7Cu1 HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(wait_all_read(server.port(), 20));

  // An API call on a reserve connection: 503, and the busy calls were not evicted.
  const auto api = raw_exchange(server.port(), "GET /api/v2/users/auth0%7Cu2 HTTP/1.1\r\nHost: x\r\n\r\n",
                                std::chrono::milliseconds(3000));
  EXPECT_EQ(parse_response(api.bytes).status, 503) << api.bytes;
  // The oracle stays readable.
  const auto check = raw_exchange(server.port(), "POST /admin/check HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                                  "Content-Length: 0\r\n\r\n",
                                  std::chrono::milliseconds(3000));
  EXPECT_EQ(parse_response(check.bytes).status, 200) << check.bytes;
  const json figures = server_figures(server.port());
  ASSERT_TRUE(figures.is_object());
  EXPECT_EQ(figures["connections"]["evicted"], 0);
  // Still in their calls (20 s): none was answered or closed.
  for (auto& b : busy) EXPECT_EQ(b.receive(std::chrono::milliseconds(0)).ending, Ending::timeout);
}

TEST(FakePartnerAdminRoom, MetricsAnswerWithTheDefault16384IdleClientsOpen) {
  // 16,384 client sockets here and as many in the server (a child process with
  // its own limit), plus a few: skipped where the fd limit cannot hold them.
  constexpr std::size_t kIdle = 16384;
  if (raise_fd_limit() < kIdle + 200) GTEST_SKIP() << "RLIMIT_NOFILE below " << kIdle + 200;
  PartnerProcess server;  // the default --max-connections
  auto idle = open_idle(server.port(), kIdle);
  std::size_t connected = 0;
  for (const auto& c : idle) connected += c.connected() ? 1 : 0;
  ASSERT_EQ(connected, kIdle);

  httplib::Client admin("127.0.0.1", server.port());
  admin.set_connection_timeout(5, 0);
  admin.set_read_timeout(10, 0);
  auto res = admin.Get("/admin/metrics");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  const json figures = server_figures(server.port());
  ASSERT_TRUE(figures.is_object());
  EXPECT_EQ(figures["connections"]["refused"], 0);
  EXPECT_GE(figures["connections"]["peak"].get<std::int64_t>(), static_cast<std::int64_t>(kIdle));
}

TEST(FakePartnerAdminRoom, SigtermWithIdleAndBusyConnectionsOpenStopsCleanly) {
  // The idle list must outlive the sessions the io_context still holds at shutdown.
  ConfigFile config(json{{"latency", {{"*", {{"dist", "fixed"}, {"ms", 5000}}}}}});
  PartnerProcess server({"--config", config.path()});
  auto idle = open_idle(server.port(), 50);
  auto busy = hold_requests(server.port(), 5, "GET /api/v2/users/auth0%7Cu1 HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(wait_all_read(server.port(), 55));  // all accepted, the 5 calls read (in flight, 5 s each)
  const int status = server.stop();
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace lockbench::partner_server::testing
