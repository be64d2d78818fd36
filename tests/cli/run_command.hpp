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
