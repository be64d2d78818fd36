// Test support for the socket-level tests: runs the fake_partner binary as a
// child process on a free port, and talks raw TCP where HTTP clients would
// hide what a fault did to the bytes.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <thread>
#include <sys/types.h>
#include <vector>

namespace lockbench::partner_server::testing {

// The fake_partner executable started with --port 0 and `args`; the port is
// read from its first stdout line. The destructor sends SIGTERM and waits
// (SIGKILL after 5 s), so no test leaves a server behind.
class PartnerProcess {
 public:
  explicit PartnerProcess(std::vector<std::string> args = {});
  ~PartnerProcess();
  PartnerProcess(const PartnerProcess&) = delete;
  PartnerProcess& operator=(const PartnerProcess&) = delete;

  std::uint16_t port() const { return port_; }
  pid_t pid() const { return pid_; }
  // SIGTERM, then the exit status (as from waitpid) once it has exited.
  int stop();

 private:
  pid_t pid_ = -1;
  int stdout_fd_ = -1;
  std::uint16_t port_ = 0;
};

// Runs `binary args...` to the end (bounded by 10 s) and returns its exit code
// and stderr: for the flag tests.
struct RunResult {
  int exit_code = -1;
  std::string stderr_text;
  std::string stdout_first_line;
};
RunResult run_to_exit(const std::vector<std::string>& args);

// How a raw exchange ended.
enum class Ending { eof, reset, timeout };

struct RawResult {
  std::string bytes;  // everything received
  Ending ending = Ending::timeout;
  std::chrono::milliseconds elapsed{0};
  int reads = 0;  // recv() calls that returned data
};

// The server's side of its TCP connections on 127.0.0.1:`port`, as the kernel
// sees them (/proc/net/tcp), so that a test can wait for connections to open,
// be read or close without opening one of its own (which would count):
// open: ESTABLISHED or CLOSE_WAIT (the peer closed, the server not yet);
// unread: of those, the ones with received bytes the server has not read.
struct ServerSockets {
  int open = 0;
  int unread = 0;
};
ServerSockets server_sockets(std::uint16_t port);

// Polls `done` every 5 ms until it holds (true) or `deadline` passed (false).
template <class F>
bool wait_until(F done, std::chrono::milliseconds deadline = std::chrono::seconds(30)) {
  const auto until = std::chrono::steady_clock::now() + deadline;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

// Connects, sends `request` (optionally shutting down our write side), then
// reads until EOF, reset or `timeout`.
RawResult raw_exchange(std::uint16_t port, const std::string& request, std::chrono::milliseconds timeout,
                       bool shutdown_write = false);

// A client connection the test holds open: connected by the constructor (throws
// when it cannot), closed by the destructor. send() has handed every byte to
// the kernel when it returns, so once a test has sent a request on each of its
// connections, the server's side of them (server_sockets: open, none unread)
// tells that the server has accepted and read every one; a connection made by
// another thread cannot tell that (connected but not yet sent looks read).
class HeldConnection {
 public:
  explicit HeldConnection(std::uint16_t port);
  ~HeldConnection();
  HeldConnection(HeldConnection&& o) noexcept;
  HeldConnection(const HeldConnection&) = delete;
  HeldConnection& operator=(const HeldConnection&) = delete;
  HeldConnection& operator=(HeldConnection&&) = delete;

  void send(const std::string& bytes);
  // Reads until EOF, reset or `timeout`.
  RawResult receive(std::chrono::milliseconds timeout);

 private:
  int fd_ = -1;
};

// `n` HeldConnections, each with `request` sent on it.
std::vector<HeldConnection> hold_requests(std::uint16_t port, int n, const std::string& request);

// Waits (30 s at most) until the server has `open` connections and has read every byte sent on
// them: with the requests sent on HeldConnections first, every one is accepted and read.
bool wait_all_read(std::uint16_t port, int open);

// Connects, sends `bytes`, then closes at once with RST (SO_LINGER 0).
void send_and_reset(std::uint16_t port, const std::string& bytes);

// Parsed HTTP/1.1 response from raw bytes: status 0 when the bytes are not HTTP.
struct ParsedResponse {
  int status = 0;
  std::optional<std::size_t> content_length;
  std::string headers;  // the raw header block
  std::string body;     // what followed the header block
};
ParsedResponse parse_response(const std::string& bytes);

}  // namespace lockbench::partner_server::testing
