// ManagementServer: `lockbench serve --management-port`'s listener, which no
// client can starve (issue #42; docs/safety.md states its limits).
//
// A thread-per-connection server (cpp-httplib's) gives each connection a
// thread until it sends its request or its deadline passes: 8 idle sockets, or
// 8 readiness probes that wait for an exhausted pool, took every thread and
// liveness failed. Here one thread polls every connection without blocking:
//   - it reads each request head (at most `head_bytes_max`, else 431) within
//     `read_deadline` of the connection's accept (else it is closed; a
//     slowloris costs a socket and a buffer, never a thread);
//   - at `max_connections` the oldest connection is closed to make room, so a
//     new probe always gets in;
//   - an `inline_answer` route (liveness) is answered on that thread at once;
//   - every other route runs on `workers` threads of their own, with a queue
//     of `queue_max` (beyond it: 503 at once). Its head is already read, so
//     only the handler's own work (readiness's bounded borrow) holds a worker.
// GET and HEAD only (405 otherwise); every answer closes its connection.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

namespace lockbench::real {

struct ManagementAnswer {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
};

struct ManagementRoute {
  // The query string after '?' (still encoded), "" when none.
  std::function<ManagementAnswer(std::string_view query)> handler;
  bool inline_answer = false;  // on the polling thread: must never block
};

struct ManagementLimits {
  std::size_t head_bytes_max = 8 * 1024;
  std::chrono::milliseconds read_deadline{2'000};  // from accept to the end of the request head
  std::chrono::milliseconds write_timeout{2'000};  // a worker's answer to a client that does not read
  int max_connections = 512;
  int workers = 4;
  std::size_t queue_max = 64;
};

class ManagementServer {
 public:
  // Binds host:port (0 = a free port) or throws std::runtime_error with the reason.
  ManagementServer(const std::string& host, int port, std::map<std::string, ManagementRoute> routes,
                   ManagementLimits limits = {});
  ~ManagementServer();  // stops and joins
  ManagementServer(const ManagementServer&) = delete;
  ManagementServer& operator=(const ManagementServer&) = delete;

  int port() const;
  void start();  // the polling thread and the workers
  void stop();   // idempotent

  struct Counters {
    long answered_inline = 0, answered_by_workers = 0, closed_at_deadline = 0, evicted = 0, refused_busy = 0;
  };
  Counters counters() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lockbench::real
