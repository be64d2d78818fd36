// Child processes of the real-world tests: a binary with arguments and extra
// environment, its stdout read line by line (for its "listening on" line), and
// a `lockbench serve` pod on top of it. Killed (SIGKILL) and reaped with the
// object: no test leaves one behind.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

extern char** environ;

namespace lockbench::test {

class Child {
 public:
  enum class Stderr { inherit, discard };

  // `bin args...`, with this process's environment and `env` (NAME=VALUE) before it.
  Child(const std::string& bin, std::vector<std::string> args, std::vector<std::string> env = {},
        Stderr err = Stderr::discard) {
    int fds[2];
    if (::pipe(fds) != 0) return;
    args.insert(args.begin(), bin);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
    std::vector<char*> envp;
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(fds[1], STDOUT_FILENO);
      if (err == Stderr::discard) {
        const int devnull = ::open("/dev/null", O_WRONLY);
        if (devnull >= 0) ::dup2(devnull, STDERR_FILENO);
      }
      ::close(fds[0]);
      ::execve(bin.c_str(), argv.data(), envp.data());
      ::_exit(127);
    }
    ::close(fds[1]);
    fd_ = fds[0];
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (fd_ >= 0) ::close(fd_);
  }

  // The rest of the next stdout line that starts with `prefix` (lines before it are read and
  // dropped); "" when none came within 15 s or stdout closed.
  std::string line_after(const std::string& prefix) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    while (std::chrono::steady_clock::now() < deadline) {
      const auto nl = out_.find('\n');
      if (nl != std::string::npos) {
        const std::string line = out_.substr(0, nl);
        out_.erase(0, nl + 1);
        if (line.rfind(prefix, 0) == 0) return line.substr(prefix.size());
        continue;
      }
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 200) <= 0) continue;
      char buf[512];
      const ssize_t n = ::read(fd_, buf, sizeof buf);
      if (n <= 0) return "";
      out_.append(buf, static_cast<std::size_t>(n));
    }
    return "";
  }
  // The port of the next line starting with `prefix` ("listening on 127.0.0.1:PORT"), 0 if none.
  int port_after(const std::string& prefix) {
    const std::string rest = line_after(prefix);
    const auto colon = rest.rfind(':');
    return colon == std::string::npos ? 0 : std::stoi(rest.substr(colon + 1));
  }
  long rss_kb() const {
    std::ifstream f("/proc/" + std::to_string(pid_) + "/status");
    for (std::string line; std::getline(f, line);)
      if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
    return -1;
  }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
  std::string out_;
};

#ifdef LOCKBENCH_BIN
// `lockbench serve SERVE_ARGS...` (its stderr the test's): url() is http://HOST:PORT from its
// "listening on HOST:PORT" line, "" when it printed none.
class ServePod {
 public:
  explicit ServePod(std::vector<std::string> serve_args, std::vector<std::string> env = {})
      : child_(LOCKBENCH_BIN, with_serve(std::move(serve_args)), std::move(env), Child::Stderr::inherit) {
    const std::string address = child_.line_after("listening on ");
    if (!address.empty()) url_ = "http://" + address;
  }
  const std::string& url() const { return url_; }

 private:
  static std::vector<std::string> with_serve(std::vector<std::string> args) {
    args.insert(args.begin(), "serve");
    return args;
  }
  Child child_;
  std::string url_;
};
#endif

}  // namespace lockbench::test
