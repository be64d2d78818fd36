// PodProcesses: the `lockbench serve` children of a run of process pods.
//
// Each child is forked from the calling thread, joins one process group (the
// first child's), dies with its parent's forking thread (PR_SET_PDEATHSIG) and
// is killed and reaped by kill_all(), which the destructor calls, so that no
// exit path (an exception included) leaves a child behind. A child's stdout is
// read for its "listening on" line (real/pod_protocol.hpp), then drained.
#pragma once

#include <sys/types.h>

#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/units.hpp"

namespace lockbench::real {

struct Child {
  pid_t pid = -1;
  int out_fd = -1;  // the child's stdout (its "listening on" line)
  std::string url;
};

class PodProcesses {
 public:
  PodProcesses() = default;
  PodProcesses(const PodProcesses&) = delete;
  PodProcesses& operator=(const PodProcesses&) = delete;
  ~PodProcesses() { kill_all(); }

  // Starts `lockbench serve ARGS` with `env` added to our environment
  // (NAME=VALUE; a NAME of ours is replaced) and waits for its "listening on"
  // line. Throws SettingError when it exits or stays silent for `wait`. Several
  // threads may start children at once (the runner's kubelet restarts pods in
  // parallel): only the fork itself is one at a time.
  Child start(const std::vector<std::string>& args, const std::vector<std::string>& env, Duration wait);
  void signal(pid_t pid, int sig);  // SIGKILL, SIGSTOP, SIGCONT
  void reap(pid_t pid);             // after SIGKILL
  // SIGCONT + SIGTERM, a short grace, then SIGKILL to the whole group; every child reaped.
  void kill_all();

 private:
  pid_t fork_exec(std::vector<std::string> argv, const std::vector<std::string>& env, int out_fd);
  std::string read_first_line(int fd, Duration wait);
  void reap_within(const std::vector<pid_t>& pids, Duration grace);

  std::mutex fork_mu_;
  std::mutex mu_;
  std::vector<Child> children_;  // GUARDED_BY(mu_)
  pid_t pgid_ = -1;              // GUARDED_BY(fork_mu_) while children start: the first child's pid, the group of them all
  std::vector<std::thread> drainers_;  // GUARDED_BY(mu_)
  std::vector<int> fds_to_close_;      // GUARDED_BY(mu_)
};

}  // namespace lockbench::real
