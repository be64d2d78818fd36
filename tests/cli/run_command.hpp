// Runs a command line and captures its exit status, stdout and stderr.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace lockbench::testing {

struct CommandResult {
  int status = -1;
  std::string out;
  std::string err;
};

inline std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

inline CommandResult run_command(const std::string& cmd) {
  char err_name[] = "/tmp/lockbench-cmd-err-XXXXXX";
  const int fd = mkstemp(err_name);
  close(fd);
  CommandResult r;
  FILE* p = popen((cmd + " 2>" + err_name).c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  std::size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.err = slurp(err_name);
  std::remove(err_name);
  return r;
}

}  // namespace lockbench::testing

#include <signal.h>

#include <chrono>
#include <thread>
#include <vector>

namespace lockbench::testing {

// A command started in the background (no shell), its stdout and stderr into
// files: for tests that signal it mid-run.
struct Spawned {
  pid_t pid = -1;
  std::string out_path, err_path;
};

inline Spawned spawn(const std::vector<std::string>& argv, const std::string& out_path, const std::string& err_path) {
  Spawned s{-1, out_path, err_path};
  s.pid = fork();
  if (s.pid == 0) {
    FILE* o = std::freopen(out_path.c_str(), "w", stdout);
    FILE* e = std::freopen(err_path.c_str(), "w", stderr);
    (void)o;
    (void)e;
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  return s;
}

// The exit status (or 128 + signal) once it has exited; SIGKILL and -1 after `timeout`.
inline int wait_exit(pid_t pid, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int st = 0;
    const pid_t r = waitpid(pid, &st, WNOHANG);
    if (r == pid) return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    if (r < 0) return -1;
    if (std::chrono::steady_clock::now() >= deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &st, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// Polls `ready` every 20 ms until it holds or `timeout` passes.
template <class F>
bool wait_for(F ready, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!ready()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

}  // namespace lockbench::testing
