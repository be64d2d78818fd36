// GuardedServer: cpp-httplib's Server with the limits a server that any client
// can reach needs (`lockbench serve`; docs/safety.md states them).
//
// cpp-httplib 0.11 (Debian 12) reads a request's headers without a size or
// count cap and without a deadline for the whole request: a client that sends
// one header byte every few seconds, or 200 MB of headers, keeps a thread and
// memory for as long as it likes. GuardedServer reads every connection
// through a stream of its own that enforces, per request:
//   - the request line and headers: at most `header_bytes_max`, else 431 and close;
//   - the body: at most `body_bytes_max` (also httplib's payload limit: 413), and
//     bytes beyond it are never read, so a 100 MB upload costs no memory;
//   - the whole request, from its first byte: within `request_read_timeout`, and
//     each read waits at most `read_timeout` (then the connection closes);
//   - between requests on a keep-alive connection: at most `idle_timeout`.
// The request's framing is checked before any handler runs (`framing_refusal`):
// a POST or PUT without Content-Length or chunked Transfer-Encoding is 411 at
// once (httplib would read it until the client closes), and Transfer-Encoding
// other than exactly chunked, or with Content-Length, is 400 (RFC 9112 section 6).
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>

#include <httplib.h>

namespace lockbench::real {

struct HttpLimits {
  std::size_t header_bytes_max = 16 * 1024;
  std::size_t body_bytes_max = 1024 * 1024;
  std::chrono::milliseconds request_read_timeout{10'000};
  std::chrono::milliseconds read_timeout{5'000};
  std::chrono::milliseconds idle_timeout{5'000};
};

class GuardedServer : public httplib::Server {
 public:
  explicit GuardedServer(HttpLimits limits);
  const HttpLimits& limits() const { return limits_; }

 private:
  bool process_and_close_socket(socket_t sock) override;
  HttpLimits limits_;
};

// The status and reason to refuse a request's framing with, before routing
// (411, 400, or 413 for a Content-Length beyond `body_bytes_max`), or nullopt
// when its length is known for sure and allowed.
struct Refusal {
  int status;
  std::string reason;
};
std::optional<Refusal> framing_refusal(const httplib::Request& req, std::size_t body_bytes_max);

// From a handler (the pre-routing one included): this connection closes after
// its answer (the rest of a refused request's bytes cannot be framed).
void close_after_this_response();

// Is `addr` (httplib's remote_addr) a loopback address?
bool loopback_peer(const std::string& addr);

}  // namespace lockbench::real
