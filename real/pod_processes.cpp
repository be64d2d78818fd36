#include "real/pod_processes.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/settings.hpp"
#include "real/pod_protocol.hpp"
#include "real/run_common.hpp"

namespace lockbench::real {

namespace {

using Clock = std::chrono::steady_clock;

// Our environment with `mine` (NAME=VALUE) replacing or adding entries.
std::vector<std::string> environment_with(const std::vector<std::string>& mine) {
  std::vector<std::string> out = mine;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const bool replaced = std::any_of(mine.begin(), mine.end(), [&](const std::string& m) {
      return entry.substr(0, entry.find('=') + 1) == std::string_view(m).substr(0, m.find('=') + 1);
    });
    if (!replaced) out.emplace_back(entry);
  }
  return out;
}

std::vector<char*> c_strings(std::vector<std::string>& items) {
  std::vector<char*> out;
  for (auto& s : items) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

pid_t PodProcesses::fork_exec(std::vector<std::string> argv_s, const std::vector<std::string>& env, int out_fd) {
  std::vector<std::string> env_s = environment_with(env);
  std::vector<char*> argv = c_strings(argv_s), envp = c_strings(env_s);
  const pid_t parent = ::getpid();
  const pid_t group = pgid_;
  const pid_t pid = ::fork();
  if (pid < 0) throw SettingError(std::string("--pods: cannot fork: ") + std::strerror(errno));
  if (pid == 0) {  // the child: async-signal-safe calls only until exec
    ::setpgid(0, group > 0 ? group : 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the parent died before prctl
    ::dup2(out_fd, STDOUT_FILENO);
    ::execve("/proc/self/exe", argv.data(), envp.data());
    ::_exit(127);
  }
  ::setpgid(pid, group > 0 ? group : pid);  // both sides: no race with the exec
  if (pgid_ <= 0) pgid_ = pid;
  return pid;
}

std::string PodProcesses::read_first_line(int fd, Duration wait) {
  std::string line;
  const auto deadline = Clock::now() + wait;
  while (line.find('\n') == std::string::npos) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) throw SettingError("--pods: a `lockbench serve` child did not start listening in time");
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
    char buf[256];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) throw SettingError("--pods: a `lockbench serve` child exited before listening (its error is above)");
    line.append(buf, static_cast<std::size_t>(n));
  }
  return line;
}

Child PodProcesses::start(const std::vector<std::string>& args, const std::vector<std::string>& env, Duration wait) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw SettingError(std::string("--pods: cannot create a pipe: ") + std::strerror(errno));
  std::vector<std::string> argv = {"lockbench", "serve"};
  argv.insert(argv.end(), args.begin(), args.end());
  pid_t pid = -1;
  try {
    std::lock_guard one_fork(fork_mu_);  // the process group is the first child's
    pid = fork_exec(std::move(argv), env, fds[1]);
  } catch (...) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw;
  }
  ::close(fds[1]);
  Child c{pid, fds[0], ""};
  {
    std::lock_guard lock(mu_);
    fds_to_close_.push_back(fds[0]);
    children_.push_back(c);
  }
  const std::string line = read_first_line(fds[0], wait);
  const auto at = line.find(kListeningPrefix);
  if (at == std::string::npos) throw SettingError("--pods: unexpected first line from a serve child: " + one_line(line));
  c.url = "http://" + line.substr(at + kListeningPrefix.size(), line.find('\n') - at - kListeningPrefix.size());
  // Keep draining its stdout so that a chatty child never blocks on a full pipe.
  const int fd = fds[0];
  std::lock_guard lock(mu_);
  drainers_.emplace_back([fd] {
    char buf[512];
    while (::read(fd, buf, sizeof buf) > 0) {
    }
  });
  return c;
}

void PodProcesses::signal(pid_t pid, int sig) { ::kill(pid, sig); }

void PodProcesses::reap(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  std::lock_guard lock(mu_);
  for (auto& c : children_)
    if (c.pid == pid) c.pid = -1;
}

void PodProcesses::reap_within(const std::vector<pid_t>& pids, Duration grace) {
  const auto deadline = Clock::now() + grace;
  for (pid_t p : pids) {
    for (;;) {
      int status = 0;
      const pid_t r = ::waitpid(p, &status, WNOHANG);
      if (r == p || (r < 0 && errno == ECHILD)) break;
      if (Clock::now() >= deadline) {
        ::kill(p, SIGKILL);
        ::waitpid(p, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
}

void PodProcesses::kill_all() {
  std::vector<pid_t> pids;
  {
    std::lock_guard lock(mu_);
    for (auto& c : children_)
      if (c.pid > 0) pids.push_back(c.pid);
  }
  for (pid_t p : pids) {
    ::kill(p, SIGCONT);  // a paused child cannot handle SIGTERM
    ::kill(p, SIGTERM);
  }
  reap_within(pids, std::chrono::seconds(3));
  pid_t group = -1;
  {
    std::lock_guard one_fork(fork_mu_);
    group = pgid_;
  }
  if (group > 0) ::kill(-group, SIGKILL);  // anything left in the group
  std::vector<std::thread> drainers;
  std::vector<int> fds;
  {
    std::lock_guard lock(mu_);
    children_.clear();
    drainers.swap(drainers_);
    fds.swap(fds_to_close_);
  }
  for (auto& t : drainers) t.join();  // their pipes hit EOF once the children are gone
  for (int fd : fds) ::close(fd);
}

}  // namespace lockbench::real
