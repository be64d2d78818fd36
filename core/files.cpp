#include "core/files.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/units.hpp"

namespace fs = std::filesystem;

namespace lockbench {

std::string byte_size_text(std::uintmax_t bytes) {
  if (bytes >= (std::uintmax_t{1} << 20) && bytes % (std::uintmax_t{1} << 20) == 0)
    return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= (std::uintmax_t{1} << 10) && bytes % (std::uintmax_t{1} << 10) == 0)
    return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " bytes";
}

std::string read_file_capped(const fs::path& path, std::uintmax_t cap, std::string_view origin, std::string_view kind) {
  const std::string where = std::string(origin) + ": '" + path.string() + "'";
  const auto too_large = [&] {
    return SettingError(where + " is larger than " + byte_size_text(cap) + ", the cap for " + std::string(kind));
  };
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw SettingError(where + ": cannot read: " + std::strerror(errno));
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw SettingError(where + ": cannot read: " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw SettingError(where + " is a directory, not a file");
  if (S_ISREG(st.st_mode) && static_cast<std::uintmax_t>(st.st_size) > cap) throw too_large();
  // Blocking reads from here (a FIFO opened non-blocking would read nothing yet).
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  std::string text;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw SettingError(where + ": cannot read: " + std::strerror(errno));
    }
    if (n == 0) break;
    if (text.size() + static_cast<std::size_t>(n) > cap) throw too_large();
    text.append(buf, static_cast<std::size_t>(n));
  }
  return text;
}

void check_writable_target(const fs::path& path, std::string_view flag) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);  // through a symlink: what the writer would reach
  if (ec || st.type() == fs::file_type::not_found || st.type() == fs::file_type::regular) return;
  const char* what = st.type() == fs::file_type::directory   ? "a directory"
                     : st.type() == fs::file_type::character ? "a character device"
                     : st.type() == fs::file_type::block     ? "a block device"
                     : st.type() == fs::file_type::fifo      ? "a FIFO"
                     : st.type() == fs::file_type::socket    ? "a socket"
                                                             : "not a regular file";
  throw SettingError(std::string(flag) + ": " + path.string() + " is " + what +
                     "; lockbench writes only regular files (give a file name, or - for standard output)");
}

namespace {
// `p` resolved as far as it exists (symlinks followed), the rest appended.
fs::path resolved_path(const fs::path& p) {
  std::error_code ec;
  fs::path abs = fs::absolute(p, ec);
  if (ec) abs = p;
  fs::path out = fs::weakly_canonical(abs, ec);
  return ec ? abs.lexically_normal() : out;
}
}  // namespace

bool resolves_inside(const fs::path& dir, const fs::path& path) {
  const fs::path d = resolved_path(dir), p = resolved_path(path);
  const fs::path rel = p.lexically_relative(d);
  if (rel.empty()) return false;
  const auto first = rel.begin();
  return rel.is_relative() && (first == rel.end() || *first != "..");
}

bool same_directory(const fs::path& a, const fs::path& b) {
  const auto norm = [](const fs::path& p) {
    fs::path r = resolved_path(p).lexically_normal();
    return r.has_filename() ? r : r.parent_path();
  };
  return norm(a) == norm(b);
}

fs::path path_inside(const fs::path& dir, const std::string& name, std::string_view origin) {
  const auto refuse = [&](const std::string& why) {
    return SettingError(std::string(origin) + ": the path '" + name + "' " + why +
                        " (accepted: a relative path inside " + dir.string() + ")");
  };
  if (name.empty()) throw refuse("is empty");
  if (name.find('\0') != std::string::npos) throw refuse("holds a NUL byte");
  const fs::path p(name);
  if (p.is_absolute() || p.has_root_name() || p.has_root_directory()) throw refuse("is absolute");
  for (const auto& part : p)
    if (part == ".." || part == ".") throw refuse("has a '" + part.string() + "' segment");
  const fs::path full = dir / p;
  if (!resolves_inside(dir, full)) throw refuse("leads out of its directory through a symlink");
  return full;
}

std::size_t remove_stale_temporaries(const fs::path& dir, std::string_view marker) {
  std::size_t removed = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const auto at = name.rfind(marker);
    if (at == std::string::npos) continue;
    const std::string pid_text = name.substr(at + marker.size());
    if (pid_text.empty() || pid_text.size() > 9 || pid_text.find_first_not_of("0123456789") != std::string::npos)
      continue;
    const pid_t pid = static_cast<pid_t>(std::stol(pid_text));
    if (pid <= 0 || pid == ::getpid()) continue;
    if (::kill(pid, 0) == 0 || errno != ESRCH) continue;  // alive (or not ours to judge): kept
    std::error_code rm;
    if (fs::remove_all(it->path(), rm) > 0 && !rm) ++removed;
  }
  return removed;
}

}  // namespace lockbench
