// GuardedServer (contract in http_guard.hpp): one GuardStream per connection,
// a keep-alive loop of httplib's own process_request over it.
#include "real/http_guard.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>

namespace lockbench::real {

namespace {

using Clock = std::chrono::steady_clock;

thread_local bool close_requested = false;

int ms_until(Clock::time_point t) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(ms, 0, 1'000'000));
}

bool wait_for(socket_t sock, short events, int timeout_ms) {
  pollfd p{sock, events, 0};
  return ::poll(&p, 1, timeout_ms) > 0 && (p.revents & (events | POLLHUP | POLLERR)) != 0;
}

// A socket read through the limits; bytes are buffered (httplib reads a
// request's line and headers one byte at a time).
class GuardStream final : public httplib::Stream {
 public:
  GuardStream(socket_t sock, const HttpLimits& limits) : sock_(sock), limits_(limits) {}

  void start_request() {
    phase_ = Phase::waiting;
    header_bytes_ = body_bytes_ = 0;
    window_ = 0;
  }
  bool failed() const { return failed_; }
  bool refused() const { return refused_; }

  bool is_readable() const override {
    return pos_ < len_ || wait_for(sock_, POLLIN, static_cast<int>(limits_.read_timeout.count()));
  }
  bool is_writable() const override { return wait_for(sock_, POLLOUT, static_cast<int>(limits_.read_timeout.count())); }

  ssize_t read(char* ptr, size_t size) override {
    if (failed_ || size == 0) return failed_ ? -1 : 0;
    if (pos_ == len_ && !fill()) return -1;
    if (phase_ == Phase::waiting) begin_request();  // a pipelined request already buffered
    std::size_t n = std::min(size, len_ - pos_);
    if (phase_ == Phase::headers) {
      // Deliver up to the blank line only, so the body is counted as body.
      std::size_t i = 0;
      while (i < n && phase_ == Phase::headers) {
        window_ = (window_ << 8) | static_cast<unsigned char>(buf_[pos_ + i]);
        ++i;
        if (++header_bytes_ > limits_.header_bytes_max) return refuse_headers();
        if ((window_ & 0xFFFFFFFFu) == 0x0D0A0D0Au) phase_ = Phase::body;
      }
      n = i;
    } else {
      body_bytes_ += n;
      // httplib answers 413 by Content-Length; what it would read past the limit is never read.
      if (body_bytes_ > limits_.body_bytes_max + sizeof buf_) {
        refused_ = true;  // httplib answers it (413, or 400 for a cut chunked body)
        fail();
        return -1;
      }
    }
    std::copy_n(buf_.data() + pos_, n, ptr);
    pos_ += n;
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (!wait_for(sock_, POLLOUT, static_cast<int>(limits_.read_timeout.count()))) return -1;
    return ::send(sock_, ptr, size, MSG_NOSIGNAL);
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override { address(::getpeername, ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { address(::getsockname, ip, port); }
  socket_t socket() const override { return sock_; }

 private:
  enum class Phase { waiting, headers, body };

  // Waits for bytes: between requests up to the idle timeout; within one, each
  // read up to the read timeout and all of them up to the request's deadline.
  bool fill() {
    const int wait_ms = phase_ == Phase::waiting
                            ? static_cast<int>(limits_.idle_timeout.count())
                            : std::min(static_cast<int>(limits_.read_timeout.count()), ms_until(deadline_));
    if (wait_ms <= 0 || !wait_for(sock_, POLLIN, wait_ms)) return fail();
    const ssize_t got = ::recv(sock_, buf_.data(), buf_.size(), 0);
    if (got <= 0) return fail();
    pos_ = 0;
    len_ = static_cast<std::size_t>(got);
    return true;
  }
  void begin_request() {
    phase_ = Phase::headers;
    deadline_ = Clock::now() + limits_.request_read_timeout;
  }
  bool fail() {
    failed_ = true;
    return false;
  }
  ssize_t refuse_headers() {
    static constexpr char k431[] =
        "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: text/plain\r\nContent-Length: 33\r\n"
        "Connection: close\r\n\r\nrequest headers beyond the limit\n";
    ::send(sock_, k431, sizeof k431 - 1, MSG_NOSIGNAL);
    refused_ = true;
    fail();
    return -1;
  }
  template <class Name>
  void address(Name name, std::string& ip, int& port) const {
    sockaddr_storage a{};
    socklen_t len = sizeof a;
    ip.clear();
    port = 0;
    if (name(sock_, reinterpret_cast<sockaddr*>(&a), &len) != 0) return;
    char text[INET6_ADDRSTRLEN] = {};
    if (a.ss_family == AF_INET) {
      const auto* v4 = reinterpret_cast<const sockaddr_in*>(&a);
      ::inet_ntop(AF_INET, &v4->sin_addr, text, sizeof text);
      port = ntohs(v4->sin_port);
    } else if (a.ss_family == AF_INET6) {
      const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&a);
      ::inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof text);
      port = ntohs(v6->sin6_port);
    }
    ip = text;
  }

  socket_t sock_;
  const HttpLimits& limits_;
  std::array<char, 4096> buf_{};
  std::size_t pos_ = 0, len_ = 0;
  Phase phase_ = Phase::waiting;
  std::size_t header_bytes_ = 0, body_bytes_ = 0;
  std::uint32_t window_ = 0;  // the last four header bytes
  Clock::time_point deadline_{};
  bool failed_ = false;
  bool refused_ = false;  // answered (431) or cut (body): close gently
};

std::string lower_trimmed(std::string v) {
  const auto space = [](unsigned char c) { return std::isspace(c) != 0; };
  v.erase(v.begin(), std::find_if_not(v.begin(), v.end(), space));
  v.erase(std::find_if_not(v.rbegin(), v.rend(), space).base(), v.end());
  for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return v;
}

}  // namespace

GuardedServer::GuardedServer(HttpLimits limits) : limits_(limits) {
  set_payload_max_length(limits_.body_bytes_max);
}

namespace {
// After a refusal the client may still be sending: closing with unread bytes
// would reset the connection and could drop the answer on its way. So the
// sending side closes first, and what still comes is read and dropped, at most
// 1 MiB for at most 1 s.
void close_after_refusal(socket_t sock) {
  ::shutdown(sock, SHUT_WR);
  std::array<char, 16 * 1024> sink{};
  std::size_t dropped = 0;
  const auto until = Clock::now() + std::chrono::seconds(1);
  while (dropped < (1u << 20) && wait_for(sock, POLLIN, ms_until(until))) {
    const ssize_t n = ::recv(sock, sink.data(), sink.size(), 0);
    if (n <= 0) break;
    dropped += static_cast<std::size_t>(n);
  }
}
}  // namespace

bool GuardedServer::process_and_close_socket(socket_t sock) {
  GuardStream strm(sock, limits_);
  bool ok = true, refused = false;
  for (std::size_t left = keep_alive_max_count_; left > 0 && is_running(); --left) {
    strm.start_request();
    close_requested = false;
    bool closed = false;
    ok = process_request(strm, left == 1, closed, nullptr);
    refused = close_requested || strm.refused();
    if (!ok || closed || refused || strm.failed()) break;
  }
  if (refused) close_after_refusal(sock);
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return ok;
}

void close_after_this_response() { close_requested = true; }

std::optional<Refusal> framing_refusal(const httplib::Request& req, std::size_t body_bytes_max) {
  const std::size_t encodings = req.get_header_value_count("Transfer-Encoding");
  const bool has_length = req.has_header("Content-Length");
  if (encodings > 0) {
    if (has_length) return Refusal{400, "Transfer-Encoding together with Content-Length (RFC 9112 section 6)"};
    if (encodings > 1 || lower_trimmed(req.get_header_value("Transfer-Encoding")) != "chunked")
      return Refusal{400, "a Transfer-Encoding other than chunked (RFC 9112 section 6)"};
    return std::nullopt;
  }
  if (has_length) {
    const std::string v = req.get_header_value("Content-Length");
    if (req.get_header_value_count("Content-Length") > 1 || v.empty() || v.size() > 18 ||
        !std::all_of(v.begin(), v.end(), [](unsigned char c) { return std::isdigit(c) != 0; }))
      return Refusal{400, "a Content-Length that is not one decimal number"};
    if (std::stoull(v) > body_bytes_max)
      return Refusal{413, "a body larger than " + std::to_string(body_bytes_max) + " bytes"};
    return std::nullopt;
  }
  if (req.method == "POST" || req.method == "PUT" || req.method == "PATCH")
    return Refusal{411, "a " + req.method + " needs Content-Length (or Transfer-Encoding: chunked)"};
  return std::nullopt;
}

bool loopback_peer(const std::string& addr) {
  return addr.rfind("127.", 0) == 0 || addr == "::1" || addr.rfind("::ffff:127.", 0) == 0;
}

}  // namespace lockbench::real
