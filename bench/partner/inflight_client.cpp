// partner_inflight_client: holds N requests in flight at the fake partner at
// once and measures the latency it adds beyond its configured delay.
//
// What it measures: for each request, (answer fully read - request written)
// - expected delay. Connections are opened first (bounded concurrency, so the
// listen backlog never overflows into SYN retries), then the N requests are
// written over --ramp-ms (the server reads them as fast as they come, not
// in one 10,000-request burst it would have to queue), so with a 1 s delay and
// a 500 ms ramp all N are in flight together; peak_inflight proves it.
// One thread, one io_context; prints one JSON object.
//
//   partner_inflight_client --port P [--requests 10000] [--delay-ms 1000]
//                           [--ramp-ms 500] [--path /api/v2/users/auth0%7Cu1]
//                           [--samples-out FILE.csv]
#include <sys/resource.h>

#include <algorithm>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  unsigned short port = 0;
  std::size_t requests = 10000;
  double delay_ms = 1000;
  double ramp_ms = 500;
  std::size_t connect_concurrency = 256;
  std::string path = "/api/v2/users/auth0%7Cu1";
  double timeout_s = 60;  // the whole run; a hung server cannot hold the bench forever
  std::string samples_out;  // optional CSV: sent_ms (since the first send), added_ms
};

struct Conn {
  explicit Conn(asio::io_context& ioc) : socket(ioc) {}
  tcp::socket socket;
  beast::flat_buffer buffer;
  http::response<http::string_body> response;
  Clock::time_point sent_at;
};

class Client {
 public:
  Client(asio::io_context& ioc, Options o) : ioc_(ioc), o_(std::move(o)), deadline_(ioc), ticker_(ioc) {
    request_ = "GET " + o_.path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n";
  }

  void start() {
    deadline_.expires_after(std::chrono::milliseconds(static_cast<long>(o_.timeout_s * 1000)));
    deadline_.async_wait([this](beast::error_code ec) {
      if (!ec) {
        timed_out_ = true;
        ioc_.stop();
      }
    });
    for (std::size_t i = 0; i < o_.requests; ++i) conns_.push_back(std::make_unique<Conn>(ioc_));
    for (std::size_t i = 0; i < std::min(o_.connect_concurrency, conns_.size()); ++i) connect_next();
  }

  nlohmann::json result() const {
    std::vector<double> added = added_ms_;
    std::sort(added.begin(), added.end());
    auto q = [&](double p) {
      if (added.empty()) return 0.0;
      return added[std::min(added.size() - 1, static_cast<std::size_t>(p * static_cast<double>(added.size())))];
    };
    return {{"requests", o_.requests},
            {"connected", connected_},
            {"ok", ok_},
            {"errors", errors_},
            {"timed_out", timed_out_},
            {"peak_inflight", peak_inflight_},
            {"delay_ms", o_.delay_ms},
            {"ramp_ms", o_.ramp_ms},
            {"added_ms", {{"p50", q(0.50)}, {"p90", q(0.90)}, {"p99", q(0.99)}, {"max", added.empty() ? 0.0 : added.back()}}}};
  }

 private:
  void connect_next() {
    if (next_connect_ >= conns_.size()) return;
    Conn& c = *conns_[next_connect_++];
    c.socket.async_connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), o_.port), [this, &c](beast::error_code ec) {
      if (ec) {
        ++errors_;
        std::fprintf(stderr, "connect: %s\n", ec.message().c_str());
      } else {
        c.socket.set_option(tcp::no_delay(true));
        ++connected_;
      }
      if (++connect_done_ == conns_.size()) return start_sending();
      connect_next();
    });
  }

  // Writes the requests in 1 ms ticks over ramp_ms.
  void start_sending() {
    send_start_ = Clock::now();
    tick();
  }

  void tick() {
    const double elapsed_ms = std::chrono::duration<double, std::milli>(Clock::now() - send_start_).count();
    const double share = o_.ramp_ms <= 0 ? 1.0 : std::min(1.0, elapsed_ms / o_.ramp_ms);
    const auto due = static_cast<std::size_t>(share * static_cast<double>(conns_.size()));
    while (next_send_ < due) send(*conns_[next_send_++]);
    if (next_send_ < conns_.size()) {
      ticker_.expires_after(std::chrono::milliseconds(1));
      ticker_.async_wait([this](beast::error_code ec) {
        if (!ec) tick();
      });
    }
  }

  void send(Conn& c) {
    if (!c.socket.is_open()) return finish();
    c.sent_at = Clock::now();
    peak_inflight_ = std::max(peak_inflight_, ++inflight_);
    asio::async_write(c.socket, asio::buffer(request_), [this, &c](beast::error_code ec, std::size_t) {
      if (ec) return fail(c, ec);
      http::async_read(c.socket, c.buffer, c.response, [this, &c](beast::error_code e, std::size_t) {
        if (e) return fail(c, e);
        const double ms = std::chrono::duration<double, std::milli>(Clock::now() - c.sent_at).count();
        --inflight_;
        if (c.response.result_int() == 200) {
          ++ok_;
          added_ms_.push_back(ms - o_.delay_ms);
          sent_ms_.push_back(std::chrono::duration<double, std::milli>(c.sent_at - send_start_).count());
        } else {
          ++errors_;
        }
        finish();
      });
    });
  }

  void fail(Conn&, beast::error_code ec) {
    --inflight_;
    ++errors_;
    if (errors_ <= 5) std::fprintf(stderr, "request: %s\n", ec.message().c_str());
    finish();
  }

  void finish() {
    if (++finished_ == conns_.size()) {
      deadline_.cancel();
      for (auto& c : conns_) {
        beast::error_code ignored;
        c->socket.close(ignored);
      }
    }
  }

  asio::io_context& ioc_;
  Options o_;
  asio::steady_timer deadline_;
  asio::steady_timer ticker_;
  std::string request_;
  std::vector<std::unique_ptr<Conn>> conns_;
  std::size_t next_connect_ = 0, connect_done_ = 0, connected_ = 0;
  std::size_t next_send_ = 0, finished_ = 0, ok_ = 0, errors_ = 0;
  std::size_t inflight_ = 0, peak_inflight_ = 0;
  bool timed_out_ = false;
  Clock::time_point send_start_;
  std::vector<double> added_ms_;
  std::vector<double> sent_ms_;  // beside added_ms_, for --samples-out

 public:
  void write_samples(const std::string& path) const {
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (!f) return;
    std::fprintf(f, "sent_ms,added_ms\n");
    for (std::size_t i = 0; i < added_ms_.size(); ++i) std::fprintf(f, "%.3f,%.3f\n", sent_ms_[i], added_ms_[i]);
    std::fclose(f);
  }
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr, "partner_inflight_client: %s\n", why);
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) usage(("missing value for " + a).c_str());
    const std::string v = argv[++i];
    try {
      if (a == "--port") o.port = static_cast<unsigned short>(std::stoul(v));
      else if (a == "--requests") o.requests = std::stoul(v);
      else if (a == "--delay-ms") o.delay_ms = std::stod(v);
      else if (a == "--ramp-ms") o.ramp_ms = std::stod(v);
      else if (a == "--path") o.path = v;
      else if (a == "--timeout-s") o.timeout_s = std::stod(v);
      else if (a == "--samples-out") o.samples_out = v;
      else usage(("unknown flag " + a + " (use --port --requests --delay-ms --ramp-ms --path --timeout-s --samples-out)").c_str());
    } catch (const std::logic_error&) {
      usage((a + ": '" + v + "' is not a number").c_str());
    }
  }
  if (o.port == 0) usage("--port is required");
  // One descriptor per connection: ask for the hard limit.
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    setrlimit(RLIMIT_NOFILE, &lim);
  }
  asio::io_context ioc{1};
  Client client(ioc, o);
  client.start();
  ioc.run();
  if (!o.samples_out.empty()) client.write_samples(o.samples_out);
  std::cout << client.result().dump() << std::endl;
  return client.result()["ok"] == o.requests ? 0 : 1;
}
