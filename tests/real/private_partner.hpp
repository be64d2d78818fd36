// A fake_partner process of a test's own (for runs that must not share the
// partner, or that kill it), and helpers to reach other databases of the test
// server.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memory>
#include <string>

#include <pqxx/pqxx>

namespace lockbench::test {

// fake_partner --port 0, its port read from the first stdout line. The
// destructor kills it (if still alive) and reaps it: no test leaves one behind.
class PrivatePartner {
 public:
  PrivatePartner() {
    int fds[2];
    if (pipe(fds) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(fds[1], STDOUT_FILENO);
      const int devnull = open("/dev/null", O_WRONLY);
      if (devnull >= 0) dup2(devnull, STDERR_FILENO);
      close(fds[0]);
      execl(LOCKBENCH_FAKE_PARTNER_BIN, LOCKBENCH_FAKE_PARTNER_BIN, "--port", "0", static_cast<char*>(nullptr));
      _exit(127);
    }
    close(fds[1]);
    std::string line;
    char ch = 0;
    while (line.size() < 200 && read(fds[0], &ch, 1) == 1 && ch != '\n') line += ch;
    close(fds[0]);
    const auto colon = line.rfind(':');
    if (line.rfind("listening on ", 0) == 0 && colon != std::string::npos) url_ = "http://127.0.0.1" + line.substr(colon);
  }
  ~PrivatePartner() { kill9(); }
  PrivatePartner(const PrivatePartner&) = delete;
  PrivatePartner& operator=(const PrivatePartner&) = delete;

  const std::string& url() const { return url_; }  // empty when it did not start
  void kill9() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    int st = 0;
    waitpid(pid_, &st, 0);
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
  std::string url_;
};

// The test server's URL with another database name.
inline std::string url_for_database(const std::string& url, const std::string& db) {
  const auto authority = url.find("://") + 3;
  const auto slash = url.find('/', authority);
  const auto query = url.find('?', authority);
  const std::string base = url.substr(0, slash == std::string::npos ? query : slash);
  return base + "/" + db + (query == std::string::npos ? "" : url.substr(query));
}

// A database created for one test and dropped (with its sessions) afterwards.
class ScratchDatabase {
 public:
  ScratchDatabase(const std::string& server_url, std::string name) : admin_url_(server_url), name_(std::move(name)) {
    pqxx::connection c(admin_url_);
    pqxx::nontransaction tx(c);
    tx.exec("DROP DATABASE IF EXISTS " + c.quote_name(name_) + " WITH (FORCE)");
    tx.exec("CREATE DATABASE " + c.quote_name(name_));
  }
  ~ScratchDatabase() {
    try {
      pqxx::connection c(admin_url_);
      pqxx::nontransaction tx(c);
      tx.exec("DROP DATABASE IF EXISTS " + c.quote_name(name_) + " WITH (FORCE)");
    } catch (const std::exception&) {
    }
  }
  std::string url() const { return url_for_database(admin_url_, name_); }

 private:
  std::string admin_url_;
  std::string name_;
};

}  // namespace lockbench::test
