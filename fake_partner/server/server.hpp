// The fake partner's HTTP front: Boost.Asio on one io_context thread.
//
// One thread means the model (which is not thread-safe) needs no lock, and a
// call that waits 1 s costs a timer, not a thread: 10,000 calls in flight are
// 10,000 sockets and timers. Per call: arrive -> timer(apply_after) -> execute
// -> timer(delay - apply_after) -> write the answer as the planned fault
// shapes it -> complete.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/units.hpp"

namespace lockbench::partner_server {

class HttpApi;

struct ServerOptions {
  std::string bind_address = "127.0.0.1";
  std::uint16_t port = 0;                    // 0 = the kernel picks a free port
  // At max_connections, the oldest idle connection (waiting for its next
  // request) is closed to make room; with none idle, up to admin_connections
  // more are accepted that serve only /admin/* (503 for anything else), so the
  // oracle and the metrics stay readable under a flood; beyond, closed at once.
  std::size_t max_connections = 16384;
  std::size_t admin_connections = 64;
  std::size_t max_header_bytes = 8 * 1024;   // request line + headers; more -> 431
  std::size_t max_body_bytes = 1024 * 1024;  // more -> 413
  Duration idle_timeout = std::chrono::seconds(60);  // keep-alive idle or a request that never finishes
  // Host names besides addresses and localhost that /admin/* answers (http_api.hpp's admin_refusal).
  std::vector<std::string> admin_hosts;
};

class Server {
 public:
  // Binds and listens at once (so the port is known); throws std::system_error.
  Server(ServerOptions options, HttpApi& api);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  std::uint16_t port() const;
  // Serves until stop() or SIGINT/SIGTERM (when handle_signals was called).
  void run();
  // Safe from any thread: makes run() return.
  void stop();
  void handle_signals();

  struct Impl;  // opaque: defined in server.cpp, where the connections use it

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace lockbench::partner_server
