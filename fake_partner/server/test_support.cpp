#include "fake_partner/server/test_support.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <cstring>
#include <stdexcept>
#include <thread>

#ifndef LOCKBENCH_FAKE_PARTNER_BIN
#error "LOCKBENCH_FAKE_PARTNER_BIN must name the fake_partner executable"
#endif

namespace lockbench::partner_server::testing {

namespace {

using Clock = std::chrono::steady_clock;

// Reads one line from fd within `timeout`; "" on timeout or EOF.
std::string read_line(int fd, std::chrono::milliseconds timeout) {
  std::string line;
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline && line.size() < 4096) {
    pollfd p{fd, POLLIN, 0};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (poll(&p, 1, static_cast<int>(std::max<long>(left, 1))) <= 0) continue;
    char c = 0;
    if (read(fd, &c, 1) != 1) break;
    if (c == '\n') return line;
    line += c;
  }
  return line;
}

// Waits for the child, at most `timeout`; nullopt if still running.
std::optional<int> wait_exit(pid_t pid, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (true) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return status;
    if (Clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

struct Spawned {
  pid_t pid;
  int out_fd;
  int err_fd;
};

// capture_stderr = false: the child's stderr goes to ours (a server's log
// lines then show up in a failing test's output).
Spawned spawn(const std::vector<std::string>& args, bool capture_stderr) {
  int out[2], err[2];
  if (pipe(out) != 0 || pipe(err) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    if (capture_stderr) dup2(err[1], STDERR_FILENO);
    close(out[0]);
    close(out[1]);
    close(err[0]);
    close(err[1]);
    std::vector<char*> argv;
    std::string bin = LOCKBENCH_FAKE_PARTNER_BIN;
    argv.push_back(bin.data());
    std::vector<std::string> copy = args;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(bin.c_str(), argv.data());
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  return {pid, out[0], err[0]};
}

int connect_to(std::uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    throw std::runtime_error(std::string("connect: ") + std::strerror(errno));
  }
  return fd;
}

void send_all(int fd, const std::string& bytes) {
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return;  // the server may legitimately close early (413, 431)
    sent += static_cast<std::size_t>(n);
  }
}

}  // namespace

PartnerProcess::PartnerProcess(std::vector<std::string> args) {
  args.insert(args.begin(), {"--port", "0"});
  const Spawned s = spawn(args, /*capture_stderr=*/false);
  pid_ = s.pid;
  stdout_fd_ = s.out_fd;
  close(s.err_fd);
  const std::string line = read_line(stdout_fd_, std::chrono::seconds(10));
  const std::string prefix = "listening on 127.0.0.1:";
  if (line.rfind(prefix, 0) != 0) {
    stop();
    throw std::runtime_error("fake_partner did not start: first line '" + line + "'");
  }
  port_ = static_cast<std::uint16_t>(std::stoi(line.substr(prefix.size())));
}

PartnerProcess::~PartnerProcess() { stop(); }

int PartnerProcess::stop() {
  if (pid_ <= 0) return -1;
  kill(pid_, SIGTERM);
  auto status = wait_exit(pid_, std::chrono::seconds(5));
  if (!status) {
    kill(pid_, SIGKILL);
    status = wait_exit(pid_, std::chrono::seconds(5));
  }
  pid_ = -1;
  if (stdout_fd_ >= 0) close(stdout_fd_);
  stdout_fd_ = -1;
  return status.value_or(-1);
}

RunResult run_to_exit(const std::vector<std::string>& args) {
  const Spawned s = spawn(args, /*capture_stderr=*/true);
  RunResult r;
  r.stdout_first_line = read_line(s.out_fd, std::chrono::seconds(10));
  auto status = wait_exit(s.pid, std::chrono::seconds(10));
  if (!status) {
    kill(s.pid, SIGKILL);
    status = wait_exit(s.pid, std::chrono::seconds(5));
  }
  char buf[4096];
  ssize_t n;
  fcntl(s.err_fd, F_SETFL, O_NONBLOCK);
  while ((n = read(s.err_fd, buf, sizeof buf)) > 0) r.stderr_text.append(buf, static_cast<std::size_t>(n));
  close(s.out_fd);
  close(s.err_fd);
  if (status && WIFEXITED(*status)) r.exit_code = WEXITSTATUS(*status);
  return r;
}

namespace {

// Reads fd until EOF, reset or `deadline` (counted from `start`, which r.elapsed is measured from).
void receive_until(int fd, Clock::time_point start, Clock::time_point deadline, RawResult& r) {
  while (true) {
    // One poll at least, so a zero timeout still sees what has arrived.
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(std::max<long>(left, 0))) <= 0) {
      if (left > 0) continue;
      r.ending = Ending::timeout;
      break;
    }
    char buf[4096];
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n > 0) {
      r.bytes.append(buf, static_cast<std::size_t>(n));
      ++r.reads;
      continue;
    }
    r.ending = (n == 0) ? Ending::eof : (errno == ECONNRESET ? Ending::reset : Ending::eof);
    break;
  }
  r.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
}

}  // namespace

RawResult raw_exchange(std::uint16_t port, const std::string& request, std::chrono::milliseconds timeout,
                       bool shutdown_write) {
  RawResult r;
  const auto start = Clock::now();
  const int fd = connect_to(port);
  send_all(fd, request);
  if (shutdown_write) shutdown(fd, SHUT_WR);
  receive_until(fd, start, start + timeout, r);
  close(fd);
  return r;
}

HeldConnection::HeldConnection(std::uint16_t port) : fd_(connect_to(port)) {}

HeldConnection::~HeldConnection() {
  if (fd_ >= 0) close(fd_);
}

HeldConnection::HeldConnection(HeldConnection&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }

void HeldConnection::send(const std::string& bytes) { send_all(fd_, bytes); }

RawResult HeldConnection::receive(std::chrono::milliseconds timeout) {
  RawResult r;
  const auto start = Clock::now();
  receive_until(fd_, start, start + timeout, r);
  return r;
}

std::vector<HeldConnection> hold_requests(std::uint16_t port, int n, const std::string& request) {
  std::vector<HeldConnection> held;
  held.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    held.emplace_back(port);
    held.back().send(request);
  }
  return held;
}

bool wait_all_read(std::uint16_t port, int open) {
  return wait_until([&] {
    const ServerSockets s = server_sockets(port);
    return s.open == open && s.unread == 0;
  });
}

ServerSockets server_sockets(std::uint16_t port) {
  ServerSockets s;
  std::ifstream tcp("/proc/net/tcp");
  std::string line;
  std::getline(tcp, line);  // the header
  char local[64], state[8], queues[64];
  while (std::getline(tcp, line)) {
    // "  sl  local_address rem_address   st tx_queue:rx_queue ..."; addresses are hex ADDR:PORT.
    if (std::sscanf(line.c_str(), "%*s %63s %*s %7s %63s", local, state, queues) != 3) continue;
    const char* colon = std::strchr(local, ':');
    if (!colon || std::strtoul(colon + 1, nullptr, 16) != port) continue;  // the server's side only
    const std::string st = state;
    if (st != "01" && st != "08") continue;  // ESTABLISHED, CLOSE_WAIT
    ++s.open;
    const char* rx = std::strchr(queues, ':');
    if (rx && std::strtoul(rx + 1, nullptr, 16) > 0) ++s.unread;
  }
  return s;
}

void send_and_reset(std::uint16_t port, const std::string& bytes) {
  const int fd = connect_to(port);
  send_all(fd, bytes);
  linger l{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  close(fd);
}

ParsedResponse parse_response(const std::string& bytes) {
  ParsedResponse p;
  const auto end = bytes.find("\r\n\r\n");
  if (bytes.rfind("HTTP/1.1 ", 0) != 0 || end == std::string::npos) return p;
  p.status = std::atoi(bytes.c_str() + 9);
  p.headers = bytes.substr(0, end + 2);
  p.body = bytes.substr(end + 4);
  const std::string key = "Content-Length: ";
  if (auto at = p.headers.find(key); at != std::string::npos) {
    p.content_length = std::stoul(p.headers.substr(at + key.size()));
  }
  return p;
}

}  // namespace lockbench::partner_server::testing
