// PgBouncerChild: a throw-away PgBouncer for one real run (--pgbouncer
// transaction|session), a child process of lockbench in front of --db.
//
//  - Listens on a free 127.0.0.1 port, no unix socket; auth_type trust towards
//    lockbench (the server's own authentication applies behind it: a password
//    in --db is written into its config, a 0600 file in its own directory).
//  - pool_mode and default_pool_size from the settings; server_reset_query
//    DISCARD ALL (PgBouncer's default: used in session mode only).
//  - PgBouncer refuses root: as root the child switches to the `postgres` user
//    before exec (setgid/setuid), and asks for SIGTERM when lockbench dies
//    (PR_SET_PDEATHSIG), so even a kill -9 of lockbench does not leave it behind.
//  - The destructor stops it (SIGTERM, then SIGKILL after 5 s) and removes its
//    directory, whatever the way out of the run. Its server connections close
//    with it, and with them every session lock left on its backends.
#pragma once

#include <string>

#include <sys/types.h>

namespace lockbench::real {

class PgBouncerChild {
 public:
  // Starts it and waits until it accepts connections (at most 10 s); throws
  // SettingError naming --pgbouncer with the reason (binary missing, its log's
  // last line).
  PgBouncerChild(const std::string& db_url, const std::string& pool_mode, int pool_size);
  ~PgBouncerChild();
  PgBouncerChild(const PgBouncerChild&) = delete;
  PgBouncerChild& operator=(const PgBouncerChild&) = delete;

  // postgresql://USER@127.0.0.1:PORT/DB: the same database and user through it.
  const std::string& url() const { return url_; }

 private:
  void stop();
  pid_t pid_ = -1;
  std::string dir_;
  std::string url_;
};

}  // namespace lockbench::real
