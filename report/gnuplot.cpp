// Running gnuplot as a child process without a shell: no quoting hazards in
// paths, stderr captured for the report, and a time limit so a wedged child
// cannot hang `lockbench report`.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "report/charts.hpp"

extern char** environ;

namespace lockbench::report::detail {

std::string run_gnuplot(const std::string& gnuplot, const std::filesystem::path& script,
                        const std::filesystem::path& cwd) {
  const std::filesystem::path err_path =
      std::filesystem::absolute(cwd / script).replace_extension(".stderr");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  // Scripts name their files relative to the charts directory, so the folder
  // can be moved and re-drawn with `cd charts && gnuplot gnuplot/x.gp`.
  posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  std::string prog = gnuplot, arg = script.string();
  char* argv[] = {prog.data(), arg.data(), nullptr};
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, prog.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return fmt::format("could not start '{}' (is gnuplot installed?)", gnuplot);

  // A chart takes well under a second; 30 s means something is wrong.
  constexpr auto limit = std::chrono::seconds(30);
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int status = 0;
  for (;;) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0) return "lost track of the gnuplot process";
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return "gnuplot did not finish within 30 s";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::ifstream err(err_path);
  std::stringstream text;
  text << err.rdbuf();
  std::string message = text.str();
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    std::filesystem::remove(err_path);
    return "";
  }
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  const auto last = message.rfind('\n');
  if (last != std::string::npos) message = message.substr(last + 1);
  return fmt::format("gnuplot failed: {}", message.empty() ? "no message" : message);
}

}  // namespace lockbench::report::detail
