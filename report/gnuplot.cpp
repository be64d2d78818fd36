// Running gnuplot as a child process without a shell: no quoting hazards in
// paths, stderr captured for the report, and a time limit so a wedged child
// cannot hang `lockbench report`.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

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

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Rounds every decimal number in an attribute value to one decimal place
// ("86.09" -> "86.1", "3.00" -> "3"); other characters stay as they are.
std::string round_numbers(const std::string& v) {
  std::string out;
  out.reserve(v.size());
  for (std::size_t i = 0; i < v.size();) {
    const bool starts = is_digit(v[i]) && (i == 0 || !is_digit(v[i - 1])) && (i == 0 || v[i - 1] != '.');
    if (!starts) {
      out += v[i++];
      continue;
    }
    std::size_t j = i;
    while (j < v.size() && is_digit(v[j])) ++j;
    if (j + 1 < v.size() && v[j] == '.' && is_digit(v[j + 1])) {
      std::size_t k = j + 1;
      while (k < v.size() && is_digit(v[k])) ++k;
      const double x = std::round(std::stod(v.substr(i, k - i)) * 10) / 10;
      out += fmt::format("{}", x);  // shortest form: 86.1, 3
      i = k;
    } else {
      out.append(v, i, j - i);
      i = j;
    }
  }
  return out;
}

std::string rgb_to_hex(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  std::size_t at = 0;
  for (;;) {
    const std::size_t p = s.find("rgb(", at);
    const std::size_t close = p == std::string::npos ? p : s.find(')', p);
    if (close == std::string::npos) break;
    int c[3] = {-1, -1, -1};
    const bool attribute = p > 0 && (s[p - 1] == '\'' || s[p - 1] == '"');  // stroke='rgb(...)', never text
    if (attribute && std::sscanf(s.c_str() + p, "rgb(%d ,%d ,%d )", &c[0], &c[1], &c[2]) == 3 &&
        std::all_of(std::begin(c), std::end(c), [](int x) { return x >= 0 && x <= 255; })) {
      out.append(s, at, p - at);
      out += fmt::format("#{:02x}{:02x}{:02x}", c[0], c[1], c[2]);
    } else {
      out.append(s, at, close + 1 - at);
    }
    at = close + 1;
  }
  out.append(s, at, std::string::npos);
  return out;
}

// Path data and transforms: d='...' / transform='...' (either quote).
std::string round_attributes(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  std::size_t at = 0;
  for (;;) {
    std::size_t best = std::string::npos, value = 0;
    char quote = 0;
    for (const char* name : {" d=", " transform=", " points="}) {
      const std::size_t p = s.find(name, at);
      if (p < best && p + std::strlen(name) < s.size()) {
        best = p;
        value = p + std::strlen(name) + 1;
        quote = s[p + std::strlen(name)];
      }
    }
    if (best == std::string::npos || (quote != '\'' && quote != '"')) break;
    const std::size_t end = s.find(quote, value);
    if (end == std::string::npos) break;
    out.append(s, at, value - at);
    out += round_numbers(s.substr(value, end - value));
    at = end;
  }
  out.append(s, at, std::string::npos);
  return out;
}

// gnuplot wraps each path in a group of its own, most of them alike:
// "</g><g X>" right after a group opened as "<g X>" joins the two.
std::string join_alike_groups(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  std::vector<std::string> open;  // the opening tag of each group we are in
  std::size_t at = 0;
  while (at < s.size()) {
    const std::size_t lt = s.find('<', at);
    if (lt == std::string::npos) break;
    out.append(s, at, lt - at);
    const std::size_t gt = s.find('>', lt);
    if (gt == std::string::npos) break;
    const std::string tag = s.substr(lt, gt + 1 - lt);
    at = gt + 1;
    if (tag.rfind("<g ", 0) == 0 || tag == "<g>") {
      if (tag.back() != '/' && tag[tag.size() - 2] != '/') open.push_back(tag);
      out += tag;
      continue;
    }
    if (tag == "</g>") {
      std::size_t k = at;
      while (k < s.size() && (s[k] == '\n' || s[k] == ' ' || s[k] == '\t')) ++k;
      const std::size_t next_gt = s.compare(k, 3, "<g ") == 0 ? s.find('>', k) : std::string::npos;
      if (!open.empty() && next_gt != std::string::npos && s.compare(k, next_gt + 1 - k, open.back()) == 0) {
        at = next_gt + 1;  // the same group goes on
        if (at < s.size() && s[at] == '\n') out += '\n', ++at;
        continue;
      }
      if (!open.empty()) open.pop_back();
    }
    out += tag;
  }
  out.append(s, at, std::string::npos);
  return out;
}

// Removes lines' leading blanks and blank lines, then groups with nothing inside, until none is left.
std::string drop_empty_groups(const std::string& s) {
  std::string lines;
  lines.reserve(s.size());
  bool line_start = true;
  for (char c : s) {
    if (line_start && (c == ' ' || c == '\t' || c == '\n')) continue;  // indentation and blank lines
    lines += c;
    line_start = c == '\n';
  }
  for (bool changed = true; changed;) {
    changed = false;
    std::string out;
    out.reserve(lines.size());
    std::size_t at = 0;
    for (;;) {
      const std::size_t open = lines.find("<g ", at);
      if (open == std::string::npos) break;
      const std::size_t gt = lines.find('>', open);
      if (gt == std::string::npos || lines[gt - 1] == '/') {
        out.append(lines, at, (gt == std::string::npos ? lines.size() : gt + 1) - at);
        at = gt == std::string::npos ? lines.size() : gt + 1;
        continue;
      }
      std::size_t k = gt + 1;
      while (k < lines.size() && (lines[k] == '\n' || lines[k] == ' ')) ++k;
      if (lines.compare(k, 4, "</g>") == 0) {
        out.append(lines, at, open - at);
        at = k + 4;
        if (at < lines.size() && lines[at] == '\n') ++at;
        changed = true;
      } else {
        out.append(lines, at, gt + 1 - at);
        at = gt + 1;
      }
    }
    out.append(lines, at, std::string::npos);
    lines = std::move(out);
  }
  return lines;
}

}  // namespace

std::string tidy_svg(const std::string& svg) {
  return drop_empty_groups(join_alike_groups(drop_empty_groups(round_attributes(rgb_to_hex(svg)))));
}

std::vector<std::vector<double>> thin_by_max(const std::vector<std::vector<double>>& rows, std::size_t points_max) {
  if (points_max == 0 || rows.size() <= points_max) return rows;
  const std::size_t per = (rows.size() + points_max - 1) / points_max;
  std::vector<std::vector<double>> out;
  out.reserve(points_max);
  for (std::size_t first = 0; first < rows.size(); first += per) {
    std::vector<double> merged = rows[first];
    for (std::size_t i = first + 1; i < std::min(rows.size(), first + per); ++i)
      for (std::size_t v = 1; v < merged.size() && v < rows[i].size(); ++v) merged[v] = std::max(merged[v], rows[i][v]);
    out.push_back(std::move(merged));
  }
  return out;
}

}  // namespace lockbench::report::detail
