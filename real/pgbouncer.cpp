#include "real/pgbouncer.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/units.hpp"

namespace lockbench::real {

namespace {

constexpr const char* kBinary = "/usr/sbin/pgbouncer";
constexpr auto kReadyWithin = std::chrono::seconds(10);
constexpr auto kStopWithin = std::chrono::seconds(5);

[[noreturn]] void fail(const std::string& why) { throw SettingError("--pgbouncer: " + why); }

// host, port, dbname, user, password of a libpq URL.
struct Target {
  std::string host = "127.0.0.1", port = "5432", dbname, user, password;
};

Target parse_url(const std::string& url) {
  char* err = nullptr;
  PQconninfoOption* opts = PQconninfoParse(url.c_str(), &err);
  if (!opts) {
    std::string why = err ? err : "cannot parse --db";
    PQfreemem(err);
    fail("cannot read --db: " + why);
  }
  Target t;
  for (PQconninfoOption* o = opts; o->keyword; ++o) {
    if (!o->val) continue;
    const std::string k = o->keyword, v = o->val;
    if (k == "host" || k == "hostaddr") t.host = v;
    else if (k == "port") t.port = v;
    else if (k == "dbname") t.dbname = v;
    else if (k == "user") t.user = v;
    else if (k == "password") t.password = v;
  }
  PQconninfoFree(opts);
  if (t.user.empty()) {
    if (const char* u = std::getenv("PGUSER")) t.user = u;
    else if (const passwd* pw = ::getpwuid(::getuid())) t.user = pw->pw_name;
  }
  if (t.dbname.empty()) t.dbname = t.user;
  if (t.password.empty())
    if (const char* p = std::getenv("PGPASSWORD")) t.password = p;
  return t;
}

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) fail("no socket for a free port");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = -1;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  ::close(fd);
  if (port <= 0) fail("no free port on 127.0.0.1");
  return port;
}

bool accepts(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

// A value in pgbouncer.ini's [databases] connection string: quoted.
std::string quoted(const std::string& v) {
  std::string out = "'";
  for (char c : v) {
    if (c == '\'' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out + "'";
}

std::string last_line_of(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return last;
}

}  // namespace

PgBouncerChild::PgBouncerChild(const std::string& db_url, const std::string& pool_mode, int pool_size) {
  if (::access(kBinary, X_OK) != 0) fail(std::string("no ") + kBinary + " (apt-get install pgbouncer)");
  const Target t = parse_url(db_url);
  // As root, PgBouncer runs as postgres: its directory must be that user's.
  const bool root = ::geteuid() == 0;
  const passwd* pg = root ? ::getpwnam("postgres") : nullptr;
  if (root && !pg) fail("running as root, and PgBouncer refuses root: no `postgres` user to run it as");
  const uid_t uid = pg ? pg->pw_uid : 0;
  const gid_t gid = pg ? pg->pw_gid : 0;

  char tmpl[] = "/tmp/lockbench-pgbouncer.XXXXXX";
  if (!::mkdtemp(tmpl)) fail(std::string("cannot make a directory in /tmp: ") + std::strerror(errno));
  dir_ = tmpl;
  const int port = free_port();
  {
    std::ofstream users(dir_ + "/userlist.txt");
    users << '"' << t.user << "\" \"\"\n";
    std::ofstream ini(dir_ + "/pgbouncer.ini");
    ini << "; written by lockbench for one run: throw-away, loopback only\n"
        << "[databases]\n"
        << t.dbname << " = host=" << quoted(t.host) << " port=" << t.port << " dbname=" << quoted(t.dbname)
        << " user=" << quoted(t.user) << (t.password.empty() ? "" : " password=" + quoted(t.password)) << "\n"
        << "[pgbouncer]\n"
        << "listen_addr = 127.0.0.1\nlisten_port = " << port << "\nunix_socket_dir =\n"
        << "auth_type = trust\nauth_file = " << dir_ << "/userlist.txt\n"
        << "pool_mode = " << pool_mode << "\ndefault_pool_size = " << pool_size << "\nmax_client_conn = 5000\n"
        << "server_reset_query = DISCARD ALL\nignore_startup_parameters = extra_float_digits,options\n"
        << "logfile = " << dir_ << "/pgbouncer.log\n";
  }
  ::chmod((dir_ + "/pgbouncer.ini").c_str(), 0600);
  if (root) {
    for (const char* f : {"", "/userlist.txt", "/pgbouncer.ini"})
      if (::chown((dir_ + f).c_str(), uid, gid) != 0) fail(std::string("cannot hand its files to postgres: ") + std::strerror(errno));
  }
  const std::string ini = dir_ + "/pgbouncer.ini", out = dir_ + "/stderr.log";
  const int out_fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ < 0) fail(std::string("fork: ") + std::strerror(errno));
  if (pid_ == 0) {
    // The child: async-signal-safe calls only, then exec.
    if (out_fd >= 0) {
      ::dup2(out_fd, 1);
      ::dup2(out_fd, 2);
    }
    ::setpgid(0, 0);  // the terminal's Ctrl-C reaches lockbench, which stops it
    if (root && (::setgroups(0, nullptr) != 0 || ::setgid(gid) != 0 || ::setuid(uid) != 0)) ::_exit(126);
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);  // after setuid, which would clear it
    if (::getppid() != parent) ::_exit(1);
    const char* argv[] = {kBinary, "-q", ini.c_str(), nullptr};
    ::execv(kBinary, const_cast<char* const*>(argv));
    ::_exit(127);
  }
  if (out_fd >= 0) ::close(out_fd);
  const auto deadline = std::chrono::steady_clock::now() + kReadyWithin;
  for (;;) {
    if (accepts(port)) break;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      std::string why = last_line_of(dir_ + "/pgbouncer.log");
      if (why.empty()) why = last_line_of(out);
      std::filesystem::remove_all(dir_);
      fail("PgBouncer exited at start" + (why.empty() ? std::string() : ": " + why));
    }
    if (std::chrono::steady_clock::now() > deadline) {
      stop();
      fail("PgBouncer did not accept connections on 127.0.0.1:" + std::to_string(port) + " within 10 s");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  url_ = "postgresql://" + t.user + "@127.0.0.1:" + std::to_string(port) + "/" + t.dbname;
}

PgBouncerChild::~PgBouncerChild() { stop(); }

void PgBouncerChild::stop() {
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);  // immediate shutdown: its server connections close
    const auto deadline = std::chrono::steady_clock::now() + kStopWithin;
    int status = 0;
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    pid_ = -1;
  }
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    dir_.clear();
  }
}

}  // namespace lockbench::real
