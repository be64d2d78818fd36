#include "fake_partner/server/server.hpp"

#include <algorithm>
#include <array>
#include <functional>
#include <list>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <optional>
#include <string>
#include <utility>

#include "fake_partner/server/http_api.hpp"
#include "fake_partner/server/server_stats.hpp"

namespace lockbench::partner_server {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {
// Bytes a lingering close reads and drops so the peer sees our error answer
// instead of an RST caused by unread data; bounded so a flood cannot hold us.
constexpr std::size_t kDrainBytesMax = 1024 * 1024;
constexpr auto kDrainTime = std::chrono::seconds(2);
constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
// Slow bodies go out in ticks of this length.
constexpr double kSlowTickS = 0.05;
// The garbage fault: bytes that no HTTP parser accepts as a status line.
// (sv: the literal holds a NUL that a plain const char* would stop at).
constexpr std::string_view kGarbage = std::string_view("\x16\x03\x01\xde\xad\xbe\xef not-http \x00\xff\r\n\r\n", 23);
}  // namespace

struct Server::Impl {
  Impl(ServerOptions o, HttpApi& a) : options(std::move(o)), api(a) {}

  ServerOptions options;
  HttpApi& api;
  // Everything below is touched only by handlers on the single io_context
  // thread: that thread is the lock that guards the model and these counters.
  ServerStats stats;
  bool stopping = false;  // run() returned: sessions being destroyed must not call the model
  // `now` for the model: Unix time at start plus monotonic time since, so it
  // never goes backwards and X-RateLimit-Reset comes out in epoch seconds.
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  Duration unix_at_start = std::chrono::duration_cast<Duration>(std::chrono::system_clock::now().time_since_epoch());
  // Connections waiting for their next request, oldest idle first: each entry
  // closes its session (which removes itself from here before it goes).
  // Declared before ioc: sessions still queued in ioc die with it, after this.
  std::list<std::function<void()>> idle;
  asio::io_context ioc{1};
  tcp::acceptor acceptor{ioc};
  asio::signal_set signals{ioc};
  asio::steady_timer accept_backoff{ioc};

  Duration now() const { return unix_at_start + (std::chrono::steady_clock::now() - started); }
  void accept();
};

namespace {

class Session : public std::enable_shared_from_this<Session> {
 public:
  // admin_only: accepted into the admin reserve (see ServerOptions).
  Session(Server::Impl& server, tcp::socket socket, bool admin_only)
      : server_(server), socket_(std::move(socket)), timer_(server.ioc), admin_only_(admin_only) {
    auto& st = server_.stats;
    st.connections_peak = std::max(st.connections_peak, ++st.connections_open);
  }
  ~Session() {
    // Every path that drops the connection ends here: if the answer had not
    // left yet, the client never got it.
    mark_busy();
    finish_call(/*lost=*/true);
    --server_.stats.connections_open;
  }
  void start() { read_request(); }

 private:
  // One timer per connection serves every wait in turn (idle and write
  // deadlines, apply, answer, hang, slow-body ticks, drain): the phases never
  // overlap, and one timer per call keeps 10,000 calls at 10,000 timers.
  // A handler that expired just as the timer was re-armed is stale: the
  // generation tells it apart.
  template <class F>
  void arm(Duration d, F then) {
    const std::uint64_t gen = ++timer_gen_;
    timer_.expires_after(d);
    timer_.async_wait([self = shared_from_this(), gen, then = std::move(then)](beast::error_code ec) mutable {
      if (ec || gen != self->timer_gen_) return;  // cancelled or re-armed
      then(*self);
    });
  }
  void disarm() {
    ++timer_gen_;
    timer_.cancel();
  }
  void arm_deadline() {
    arm(server_.options.idle_timeout, [](Session& s) { s.close_now(); });
  }

  // Waiting for a request: the first to go when the server is full. The
  // entry's raw pointer is safe: the session removes it before it dies.
  void mark_idle() {
    if (idle_) return;
    idle_it_ = server_.idle.insert(server_.idle.end(), [this] { close_now(); });
    idle_ = true;
  }
  void mark_busy() {
    if (!idle_) return;
    server_.idle.erase(idle_it_);
    idle_ = false;
  }

  // rearm = false after an answer: the deadline armed for its write still
  // runs and covers the idle wait too (one timer update per request, not two).
  void read_request(bool rearm = true) {
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(std::min<std::size_t>(server_.options.max_header_bytes, UINT32_MAX)));
    parser_->body_limit(server_.options.max_body_bytes);
    if (rearm) arm_deadline();  // keep-alive idle, or a request that never finishes
    mark_idle();
    // Headers first: a client that sent "Expect: 100-continue" (curl does for
    // larger bodies) waits for our go-ahead before it sends the body.
    http::async_read_header(socket_, buffer_, *parser_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      self->mark_busy();
      if (ec) return self->on_read_error(ec);
      const auto& fields = self->parser_->get();
      std::vector<std::string> encodings;
      for (auto [it, end] = fields.equal_range(http::field::transfer_encoding); it != end; ++it)
        encodings.emplace_back(it->value());
      if (auto refused = framing_refusal(encodings, fields.count(http::field::content_length) > 0)) {
        self->keep_alive_ = false;  // the rest of the bytes cannot be framed
        return self->write_answer(std::move(*refused));
      }
      if (self->parser_->is_done()) return self->on_read({});
      if (beast::iequals(fields[http::field::expect], "100-continue")) {
        asio::async_write(self->socket_, asio::buffer(kContinue), [self](beast::error_code e, std::size_t) {
          if (e) return self->close_now();
          self->read_body();
        });
        return;
      }
      self->read_body();
    });
  }

  void read_body() {
    http::async_read(socket_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
  }

  void on_read(beast::error_code ec) {
    if (ec) return on_read_error(ec);
    auto message = parser_->release();
    parser_.reset();
    HttpRequest request;
    request.method = std::string(message.method_string());
    request.target = std::string(message.target());
    for (const auto& field : message) {
      request.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
    }
    request.body = std::move(message.body());
    keep_alive_ = message.keep_alive();

    const Duration arrived = server_.now();
    // Every guard reads the normalised target, as the router does (http_message.hpp's parse_target).
    const auto target = parse_target(request.target);
    if (!target)
      return write_answer(HttpApi::error(400, "invalid_uri", "Malformed request target (bad percent-encoding, an "
                                         "encoded '/', '\\', ';' or control byte, or double encoding).", request.target));
    if (admin_only_ && !guarded_target(*target)) {
      keep_alive_ = false;
      return write_answer(HttpApi::error(503, "server_busy",
                                         "Every connection is in use; this one is kept for /admin/*.", request.target));
    }
    if (auto refused = admin_refusal(request, *target, server_.options.admin_hosts)) return write_answer(std::move(*refused));
    if (target->segments == std::vector<std::string>{"admin", "server"}) return write_answer(server_stats_answer(request));
    auto routed = server_.api.handle(request, *target, arrived);
    if (auto* response = std::get_if<HttpResponse>(&routed)) return write_answer(std::move(*response));
    call_ = std::get<Pending>(routed);
    answer_due_ = arrived + call_->delay;
    // A zero wait skips the timer: zero-latency configs are throughput runs.
    if (call_->apply_after <= Duration{0}) return on_apply();
    arm(call_->apply_after, [](Session& s) { s.on_apply(); });
  }

  void on_read_error(beast::error_code ec) {
    // Clean close between requests, reset, closed by the deadline: nothing to answer.
    if (ec == http::error::end_of_stream || ec.category() != http_category()) return close_now();
    keep_alive_ = false;
    if (ec == http::error::header_limit) {
      return write_answer(HttpApi::error(431, "header_too_large", "Request headers are larger than the limit.", ""));
    }
    if (ec == http::error::body_limit) {
      return write_answer(HttpApi::error(413, "body_too_large", "Request body is larger than the limit.", ""));
    }
    // Malformed request line, headers or chunking; or the peer half-closed mid-request.
    write_answer(HttpApi::error(400, "bad_request", "Malformed HTTP request: " + ec.message(), ""));
  }

  HttpResponse server_stats_answer(const HttpRequest& request) const {
    if (request.method != "GET") {
      HttpResponse r = HttpApi::error(405, "method_not_allowed", "Use GET on /admin/server.", request.target);
      r.headers.emplace_back("Allow", "GET");
      return r;
    }
    HttpResponse r;
    r.body = server_.stats.to_json().dump();
    return r;
  }

  static const boost::system::error_category& http_category() {
    static const auto& c = http::make_error_code(http::error::bad_target).category();
    return c;
  }

  void on_apply() {
    answer_ = server_.api.execute(call_->call_id, server_.now());
    const Duration rest = call_->delay - call_->apply_after;
    if (rest <= Duration{0}) return on_answer_due();
    arm(rest, [](Session& s) { s.on_answer_due(); });
  }

  void on_answer_due() {
    const Transport d = call_->transport;
    switch (d.kind) {
      case Transport::Kind::normal:
        return write_answer(std::move(answer_));
      case Transport::Kind::hang:
        return hang(d.hang_for);
      case Transport::Kind::reset:
        return reset();
      case Transport::Kind::slow_body:
        return start_slow_body(d.bytes_per_s);
      case Transport::Kind::truncate:
        return truncate();
      case Transport::Kind::garbage:
        return garbage();
    }
  }

  // --- answers -------------------------------------------------------------

  void write_answer(HttpResponse response) {
    out_ = render_head(response, response.body.size(), keep_alive_);
    out_ += response.body;
    // How late the server got to it; the bytes leave in this call (Asio tries
    // the send at once), its completion handler may queue behind others.
    if (call_) server_.stats.lateness.add(to_ms(server_.now() - answer_due_));
    arm_deadline();  // a client that never reads
    asio::async_write(socket_, asio::buffer(out_), [self = shared_from_this()](beast::error_code ec, std::size_t) {
      self->finish_call(/*lost=*/bool(ec));
      if (ec) return self->close_now();
      if (self->keep_alive_) return self->read_request(/*rearm=*/false);
      self->close_gracefully();
    });
  }

  // No answer: after hang_for the connection closes, or never (nullopt).
  // Either way a client that gives up (read timeout, close) ends the call at once.
  void hang(std::optional<Duration> hang_for) {
    disarm();  // no deadline: hanging is the point
    watch_disconnect();
    if (!hang_for) return;
    arm(*hang_for, [](Session& s) {
      s.finish_call(/*lost=*/false);  // the hang was the plan
      s.close_now();                  // also ends the disconnect watch
    });
  }

  // Waits until the socket is readable: EOF or an error means the client left.
  // Data (a pipelined request) just ends the watch: it waits in the kernel.
  void watch_disconnect() {
    socket_.async_wait(tcp::socket::wait_read, [self = shared_from_this()](beast::error_code ec) {
      if (ec == asio::error::operation_aborted || !self->call_) return;
      char byte = 0;
      beast::error_code peek_ec;
      const std::size_t n = self->socket_.receive(asio::buffer(&byte, 1), tcp::socket::message_peek, peek_ec);
      if (ec || peek_ec || n == 0) self->close_now();  // the destructor completes the call as lost
    });
  }

  // TCP RST: SO_LINGER with a zero timeout, then close.
  void reset() {
    finish_call(/*lost=*/false);
    beast::error_code ignored;
    socket_.set_option(asio::socket_base::linger(true, 0), ignored);
    disarm();
    socket_.close(ignored);  // no shutdown(): that would send a FIN first
  }

  // Correct headers, then the body a few bytes per tick.
  void start_slow_body(double bytes_per_s) {
    keep_alive_ = false;  // a fault answer ends the connection
    out_ = render_head(answer_, answer_.body.size(), keep_alive_);
    slow_chunk_bytes_ = std::max<std::size_t>(1, static_cast<std::size_t>(bytes_per_s * kSlowTickS));
    slow_tick_ = from_s(static_cast<double>(slow_chunk_bytes_) / std::max(bytes_per_s, 1e-9));
    slow_sent_ = 0;
    arm_deadline();
    asio::async_write(socket_, asio::buffer(out_), [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec) return self->close_now();
      self->slow_step();
    });
  }

  void slow_step() {
    if (slow_sent_ >= answer_.body.size()) {
      finish_call(/*lost=*/false);
      return close_gracefully();
    }
    arm(slow_tick_, [](Session& s) {
      const std::size_t n = std::min(s.slow_chunk_bytes_, s.answer_.body.size() - s.slow_sent_);
      auto chunk = asio::buffer(s.answer_.body.data() + s.slow_sent_, n);
      s.arm_deadline();
      asio::async_write(s.socket_, chunk, [self = s.shared_from_this(), n](beast::error_code e, std::size_t) {
        if (e) return self->close_now();
        self->slow_sent_ += n;
        self->slow_step();
      });
    });
  }

  // Content-Length announces the whole body, half of it is sent, then the connection closes.
  void truncate() {
    keep_alive_ = false;
    out_ = render_head(answer_, answer_.body.size(), keep_alive_);
    out_.append(answer_.body, 0, answer_.body.size() / 2);
    write_then_close();
  }

  void garbage() {
    keep_alive_ = false;
    out_.assign(kGarbage.data(), kGarbage.size());
    write_then_close();
  }

  void write_then_close() {
    arm_deadline();
    asio::async_write(socket_, asio::buffer(out_), [self = shared_from_this()](beast::error_code ec, std::size_t) {
      self->finish_call(/*lost=*/bool(ec));
      if (ec) return self->close_now();
      self->close_gracefully();
    });
  }

  // --- closing -------------------------------------------------------------

  void finish_call(bool lost) {
    if (!call_) return;
    const auto id = call_->call_id;
    call_.reset();
    if (!server_.stopping) server_.api.complete(id, server_.now(), lost);
  }

  // Closing cancels the socket's operations and the timer: with no handler
  // left holding it, the session is destroyed at once.
  void close_now() {
    mark_busy();
    disarm();
    beast::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
  }

  // Send FIN, then read and drop what the client still sends for a bounded
  // time, so our last answer is not destroyed by an RST for unread bytes.
  void close_gracefully() {
    beast::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_send, ignored);
    arm(kDrainTime, [](Session& s) { s.close_now(); });
    drained_ = 0;
    drain();
  }

  void drain() {
    socket_.async_read_some(asio::buffer(drain_buffer_), [self = shared_from_this()](beast::error_code ec, std::size_t n) {
      self->drained_ += n;
      if (ec || self->drained_ >= kDrainBytesMax) return self->close_now();
      self->drain();
    });
  }

  Server::Impl& server_;
  tcp::socket socket_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  asio::steady_timer timer_;        // see arm()
  std::uint64_t timer_gen_ = 0;     // bumped by every arm() and disarm()
  std::optional<Pending> call_;     // the call in flight on this connection, until complete()
  Duration answer_due_{0};          // arrival + planned delay of call_
  HttpResponse answer_;
  std::string out_;                 // bytes being written; lives until the write finishes
  bool keep_alive_ = true;
  std::size_t slow_chunk_bytes_ = 1;
  Duration slow_tick_{0};
  std::size_t slow_sent_ = 0;
  std::size_t drained_ = 0;
  std::array<char, 4096> drain_buffer_{};
  const bool admin_only_;
  bool idle_ = false;                                  // in server_.idle (idle_it_ valid)
  std::list<std::function<void()>>::iterator idle_it_;
};

}  // namespace

void Server::Impl::accept() {
  acceptor.async_accept([this](beast::error_code ec, tcp::socket socket) {
    if (!acceptor.is_open()) return;
    if (ec) {
      // Out of file descriptors and the like: back off instead of spinning.
      accept_backoff.expires_after(std::chrono::milliseconds(50));
      accept_backoff.async_wait([this](beast::error_code e) {
        if (!e) accept();
      });
      return;
    }
    // Full: the oldest idle connection makes room; with none idle, the admin
    // reserve takes it; beyond that, it is closed at once.
    bool admin_only = false;
    if (stats.connections_open >= options.max_connections) {
      if (!idle.empty()) {
        ++stats.connections_evicted;
        const auto close_oldest = std::move(idle.front());
        close_oldest();  // removes its entry; the session goes once its handlers ran
      } else {
        admin_only = true;
      }
    }
    if (admin_only && stats.connections_open >= options.max_connections + options.admin_connections) {
      ++stats.connections_refused;
      beast::error_code ignored;
      socket.close(ignored);
    } else {
      beast::error_code ignored;
      socket.set_option(tcp::no_delay(true), ignored);
      std::make_shared<Session>(*this, std::move(socket), admin_only)->start();
    }
    accept();
  });
}

Server::Server(ServerOptions options, HttpApi& api) : impl_(std::make_unique<Impl>(std::move(options), api)) {
  const tcp::endpoint endpoint(asio::ip::make_address(impl_->options.bind_address), impl_->options.port);
  impl_->acceptor.open(endpoint.protocol());
  impl_->acceptor.set_option(asio::socket_base::reuse_address(true));
  impl_->acceptor.bind(endpoint);
  impl_->acceptor.listen(asio::socket_base::max_listen_connections);
}

Server::~Server() = default;

std::uint16_t Server::port() const { return impl_->acceptor.local_endpoint().port(); }

void Server::handle_signals() {
  impl_->signals.add(SIGINT);
  impl_->signals.add(SIGTERM);
  impl_->signals.async_wait([this](beast::error_code ec, int) {
    if (!ec) stop();
  });
}

void Server::run() {
  impl_->accept();
  impl_->ioc.run();
  impl_->stopping = true;
}

void Server::stop() { impl_->ioc.stop(); }

}  // namespace lockbench::partner_server
