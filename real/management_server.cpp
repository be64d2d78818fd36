// ManagementServer (contract in management_server.hpp): one poll() loop over
// the listening socket, a wake pipe and every open connection; workers for
// the routes that may wait.
#include "real/management_server.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace lockbench::real {

namespace {

using Clock = std::chrono::steady_clock;

std::string_view reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 431: return "Request Header Fields Too Large";
    case 503: return "Service Unavailable";
    default: return "Status";
  }
}

std::string render(const ManagementAnswer& a, bool head_only) {
  std::string out = "HTTP/1.1 " + std::to_string(a.status) + " " + std::string(reason(a.status)) +
                    "\r\nContent-Type: " + a.content_type + "\r\nContent-Length: " + std::to_string(a.body.size()) +
                    "\r\nConnection: close\r\n\r\n";
  if (!head_only) out += a.body;
  return out;
}

ManagementAnswer plain(int status, std::string text) { return {status, "text/plain", std::move(text) + "\n"}; }

struct Conn {
  int fd = -1;
  Clock::time_point accepted;
  std::string head;
};

struct Job {
  int fd = -1;
  const ManagementRoute* route = nullptr;
  std::string query;
  bool head_only = false;
};

}  // namespace

struct ManagementServer::Impl {
  std::map<std::string, ManagementRoute> routes;
  ManagementLimits limits;
  int listen_fd = -1;
  int wake[2] = {-1, -1};
  int port = 0;
  std::atomic<bool> stopping{false};
  std::thread poller;
  std::vector<std::thread> workers;
  std::mutex mu, stop_mu;
  std::condition_variable cv;
  std::deque<Job> jobs;
  std::vector<Conn> conns;  // the poller's only
  mutable std::mutex counters_mu;
  Counters counters;

  void count(long Counters::*field) {
    std::lock_guard lock(counters_mu);
    ++(counters.*field);
  }

  // A small answer on a fresh socket fits its send buffer: sent at once or never.
  static void send_and_close(int fd, const std::string& bytes) {
    ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    ::close(fd);
  }

  // The request head is complete: answer, queue, or refuse. Takes the fd.
  void dispatch(int fd, const std::string& head) {
    const std::size_t line_end = head.find("\r\n");
    const std::string_view line(head.data(), line_end);
    const std::size_t sp1 = line.find(' ');
    const std::size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
    if (sp2 == std::string_view::npos || line.substr(sp2 + 1).rfind("HTTP/1.", 0) != 0)
      return send_and_close(fd, render(plain(400, "malformed request line"), false));
    const std::string_view method = line.substr(0, sp1);
    const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
    const bool head_only = method == "HEAD";
    if (method != "GET" && !head_only)
      return send_and_close(fd, render(plain(405, "the management port answers GET and HEAD only"), false));
    const std::size_t q = target.find('?');
    const auto route = routes.find(std::string(target.substr(0, q)));
    if (route == routes.end()) return send_and_close(fd, render(plain(404, "not found"), head_only));
    const std::string query(q == std::string_view::npos ? std::string_view() : target.substr(q + 1));
    if (route->second.inline_answer) {
      count(&Counters::answered_inline);
      return send_and_close(fd, render(route->second.handler(query), head_only));
    }
    {
      std::lock_guard lock(mu);
      if (jobs.size() < limits.queue_max) {
        jobs.push_back({fd, &route->second, query, head_only});
        cv.notify_one();
        return;
      }
    }
    count(&Counters::refused_busy);
    send_and_close(fd, render(plain(503, "every management worker is busy"), head_only));
  }

  void work() {
    while (true) {
      Job job;
      {
        std::unique_lock lock(mu);
        cv.wait(lock, [&] { return stopping.load() || !jobs.empty(); });
        if (jobs.empty()) return;
        job = std::move(jobs.front());
        jobs.pop_front();
      }
      ManagementAnswer a;
      try {
        a = job.route->handler(job.query);
      } catch (const std::exception& e) {
        a = plain(503, e.what());
      }
      const std::string bytes = render(a, job.head_only);
      // Blocking, bounded: a client that reads nothing holds this worker for write_timeout at most.
      ::fcntl(job.fd, F_SETFL, ::fcntl(job.fd, F_GETFL) & ~O_NONBLOCK);
      const timeval tv{static_cast<time_t>(limits.write_timeout.count() / 1000),
                       static_cast<suseconds_t>(limits.write_timeout.count() % 1000 * 1000)};
      ::setsockopt(job.fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
      for (std::size_t sent = 0; sent < bytes.size();) {
        const ssize_t n = ::send(job.fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
        if (n <= 0) break;
        sent += static_cast<std::size_t>(n);
      }
      ::close(job.fd);
      count(&Counters::answered_by_workers);
    }
  }

  void accept_all() {
    while (true) {
      const int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) return;  // EAGAIN, or a transient error: poll again
      if (static_cast<int>(conns.size()) >= limits.max_connections) {
        // The oldest has had the longest to send its request: it makes room.
        ::close(conns.front().fd);
        conns.erase(conns.begin());
        count(&Counters::evicted);
      }
      conns.push_back({fd, Clock::now(), {}});
    }
  }

  // Reads what the connection has; true when it is done with (answered, queued or closed).
  bool read_some(Conn& c) {
    char buf[4096];
    while (true) {
      const ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        ::close(c.fd);
        return true;
      }
      if (n < 0) return false;
      c.head.append(buf, static_cast<std::size_t>(n));
      if (c.head.find("\r\n\r\n") != std::string::npos) {
        dispatch(c.fd, c.head);
        return true;
      }
      if (c.head.size() > limits.head_bytes_max) {
        send_and_close(c.fd, render(plain(431, "request head larger than the management port's limit"), false));
        return true;
      }
    }
  }

  void poll_loop() {
    std::vector<pollfd> fds;
    while (!stopping.load()) {
      fds.clear();
      fds.push_back({listen_fd, POLLIN, 0});
      fds.push_back({wake[0], POLLIN, 0});
      for (const Conn& c : conns) fds.push_back({c.fd, POLLIN, 0});
      auto next = Clock::now() + std::chrono::milliseconds(500);
      for (const Conn& c : conns) next = std::min(next, c.accepted + limits.read_deadline);
      const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next - Clock::now()).count();
      const int ready = ::poll(fds.data(), fds.size(), static_cast<int>(std::clamp<long long>(wait + 1, 0, 500)));
      if (ready < 0 && errno != EINTR) break;
      if (stopping.load()) break;
      // Connections first (fds[2..] are conns in order), then the new ones.
      std::vector<Conn> kept;
      kept.reserve(conns.size());
      const auto now = Clock::now();
      for (std::size_t i = 0; i < conns.size(); ++i) {
        Conn& c = conns[i];
        if ((fds[i + 2].revents & (POLLIN | POLLHUP | POLLERR)) != 0 && read_some(c)) continue;
        if (now - c.accepted >= limits.read_deadline) {  // slowloris: a socket, never a thread
          ::close(c.fd);
          count(&Counters::closed_at_deadline);
          continue;
        }
        kept.push_back(std::move(c));
      }
      conns = std::move(kept);
      if ((fds[0].revents & POLLIN) != 0) accept_all();
    }
    for (const Conn& c : conns) ::close(c.fd);
    conns.clear();
  }
};

ManagementServer::ManagementServer(const std::string& host, int port, std::map<std::string, ManagementRoute> routes,
                                   ManagementLimits limits)
    : impl_(std::make_unique<Impl>()) {
  impl_->routes = std::move(routes);
  impl_->limits = limits;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (const int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0)
    throw std::runtime_error(std::string(gai_strerror(rc)));
  std::string why = "no address";
  for (addrinfo* a = found; a != nullptr && impl_->listen_fd < 0; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 128) == 0) {
      impl_->listen_fd = fd;
    } else {
      why = std::strerror(errno);
      ::close(fd);
    }
  }
  ::freeaddrinfo(found);
  if (impl_->listen_fd < 0) throw std::runtime_error(why);
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  ::getsockname(impl_->listen_fd, reinterpret_cast<sockaddr*>(&bound), &len);
  impl_->port = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                                  : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  if (::pipe2(impl_->wake, O_CLOEXEC | O_NONBLOCK) != 0) {
    ::close(impl_->listen_fd);
    throw std::runtime_error(std::strerror(errno));
  }
}

ManagementServer::~ManagementServer() {
  stop();
  ::close(impl_->listen_fd);
  ::close(impl_->wake[0]);
  ::close(impl_->wake[1]);
}

int ManagementServer::port() const { return impl_->port; }

void ManagementServer::start() {
  impl_->poller = std::thread([this] { impl_->poll_loop(); });
  for (int i = 0; i < impl_->limits.workers; ++i) impl_->workers.emplace_back([this] { impl_->work(); });
}

void ManagementServer::stop() {
  std::lock_guard once(impl_->stop_mu);  // a second caller waits until the first has joined
  if (impl_->stopping.exchange(true)) return;
  [[maybe_unused]] const ssize_t n = ::write(impl_->wake[1], "x", 1);
  impl_->cv.notify_all();
  if (impl_->poller.joinable()) impl_->poller.join();
  for (auto& t : impl_->workers)
    if (t.joinable()) t.join();
  for (const Job& j : impl_->jobs) ::close(j.fd);  // never answered: the pod is stopping
  impl_->jobs.clear();
}

ManagementServer::Counters ManagementServer::counters() const {
  std::lock_guard lock(impl_->counters_mu);
  return impl_->counters;
}

}  // namespace lockbench::real
