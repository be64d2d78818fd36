// Host loss proper: a `lockbench serve` pod in a network namespace of its own,
// reaching a PostgreSQL and a fake partner of this test's own over a veth pair
// (10.201.N.0/30, nothing beyond this machine), holds held-tx's row lock inside
// a 30 s partner call; then nothing it sends gets out any more (and the pod is
// frozen), as when its host dies without closing a socket. PostgreSQL's TCP keepalives (set per
// session in the --db URL's options) end the session and free the lock while
// the host is still gone; with the defaults (2 h) the lock is still held when
// the link comes back. Skipped unless `ip netns` works (root). Bounded: 30 s.
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <httplib.h>
#include <nlohmann/json.hpp>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/settings.hpp"
#include "real/partner_http.hpp"
#include "real/pg_conn.hpp"
#include "scenarios/registry.hpp"
#include "tests/cli/run_command.hpp"
#include "tests/real/test_env.hpp"

namespace lockbench {
namespace real_hostloss_test {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;
using testing::run_command;

bool sh(const std::string& cmd) { return std::system((cmd + " >/dev/null 2>&1").c_str()) == 0; }

std::string trimmed_last_line(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  const auto nl = s.rfind('\n');
  return nl == std::string::npos ? s : s.substr(nl + 1);
}

// A child process whose first stdout line is "listening on HOST:PORT"; killed and reaped on destruction.
class Listener {
 public:
  explicit Listener(std::vector<std::string> argv) {
    int fds[2];
    if (::pipe(fds) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(fds[1], STDOUT_FILENO);
      ::close(fds[0]);
      std::vector<char*> args;
      for (auto& a : argv) args.push_back(a.data());
      args.push_back(nullptr);
      ::execvp(args[0], args.data());
      ::_exit(127);
    }
    ::close(fds[1]);
    std::string line;
    const auto deadline = std::chrono::steady_clock::now() + 15s;
    while (line.find('\n') == std::string::npos && std::chrono::steady_clock::now() < deadline) {
      pollfd p{fds[0], POLLIN, 0};
      if (::poll(&p, 1, 200) <= 0) continue;
      char buf[256];
      const ssize_t n = ::read(fds[0], buf, sizeof buf);
      if (n <= 0) break;
      line.append(buf, static_cast<std::size_t>(n));
    }
    fd_ = fds[0];
    const std::string prefix = "listening on ";
    if (const auto at = line.find(prefix); at != std::string::npos)
      address_ = line.substr(at + prefix.size(), line.find('\n') - at - prefix.size());
  }
  ~Listener() {
    if (pid_ > 0) {
      ::kill(pid_, SIGCONT);
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (fd_ >= 0) ::close(fd_);
  }
  const std::string& address() const { return address_; }  // HOST:PORT, empty when it did not start
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
  std::string address_;
};

// A network namespace with a veth pair: HOST_IP (this side) and POD_IP (inside). Removed on destruction.
class Netns {
 public:
  Netns() {
    const int n = 1 + static_cast<int>(::getpid() % 60);
    name_ = "lbhl" + std::to_string(::getpid());
    outside_ = "lbo" + std::to_string(::getpid() % 100000);
    inside_ = "lbi" + std::to_string(::getpid() % 100000);
    host_ip_ = "10.201." + std::to_string(n) + ".1";
    pod_ip_ = "10.201." + std::to_string(n) + ".2";
    ok_ = sh("ip netns add " + name_) && sh("ip link add " + outside_ + " type veth peer name " + inside_) &&
          sh("ip link set " + inside_ + " netns " + name_) && sh("ip addr add " + host_ip_ + "/30 dev " + outside_) &&
          sh("ip link set " + outside_ + " up") &&
          sh("ip netns exec " + name_ + " ip addr add " + pod_ip_ + "/30 dev " + inside_) &&
          sh("ip netns exec " + name_ + " ip link set " + inside_ + " up") &&
          sh("ip netns exec " + name_ + " ip link set lo up");
  }
  ~Netns() {
    sh("ip link del " + outside_);  // also removes its peer
    sh("ip netns del " + name_);
  }
  bool ok() const { return ok_; }
  // The pod's side stops answering: a blackhole route inside the namespace eats
  // every packet it would send this side (its ACKs included), while this side's
  // link stays up. (Setting the link down is no host loss: the kernel then
  // fails the keepalive probes locally and retries them for ever.)
  bool cut(bool gone) {
    return sh("ip netns exec " + name_ + " ip route " + (gone ? "add" : "del") + " blackhole " + host_ip_ + "/32");
  }
  const std::string& name() const { return name_; }
  const std::string& host_ip() const { return host_ip_; }
  const std::string& pod_ip() const { return pod_ip_; }

 private:
  std::string name_, outside_, inside_, host_ip_, pod_ip_;
  bool ok_ = false;
};

// Granted locks of the pod's sessions (application_name lockbench/serve-RUN/...).
std::int64_t pod_locks(const std::string& admin_url, std::int64_t run) {
  auto c = real::open_session(admin_url);
  pqxx::nontransaction tx(*c);
  return tx.exec_params1(
               "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.granted AND "
               "l.locktype IN ('transactionid', 'tuple') AND a.application_name LIKE $1",
               "lockbench/serve-" + std::to_string(run) + "/%")[0]
      .as<std::int64_t>();
}

struct Outcome {
  bool started = false;           // the pod held the lock before the link went down
  bool freed_while_gone = false;  // the server freed it while the host was gone
  double freed_after_s = -1;      // seconds after the host went
};

// One pod in `ns` (held-tx, one key, a 30 s partner call), gone for `gone`
// (frozen, nothing it sends gets out); `options` = the --db URL's libpq options.
Outcome lose_host(Netns& ns, const std::string& admin_url, int pg_port, const std::string& options, std::int64_t run,
                  std::chrono::seconds gone) {
  Outcome out;
  Settings s;
  s.scenario = "switch-primary";
  s.keys = 1;
  const auto scenario = make_scenario(s.scenario);
  {
    auto c = real::open_session(admin_url);
    real::create_schema(*c);
    real::seed_rows(*c, run, scenario->tables(), s.keys);
  }
  Listener partner({LOCKBENCH_FAKE_PARTNER_BIN, "--bind", ns.host_ip(), "--port", "0"});
  if (partner.address().empty()) return out;
  real::PartnerHttp admin("http://" + partner.address(), 1s, 5s);
  admin.reset(scenario->partner_reset(s));
  admin.configure({{"latency", {{"*", {{"dist", "fixed"}, {"ms", 30000}}}}}});
  const std::string db = "postgresql://postgres@" + ns.host_ip() + ":" + std::to_string(pg_port) + "/postgres" +
                         (options.empty() ? "" : "?options=" + options);
  Listener pod({"ip", "netns", "exec", ns.name(), LOCKBENCH_BIN, "serve", "--host", ns.pod_ip(), "--port", "0",
                "--scenario", "switch-primary", "--strategy", "held-tx", "--db", db, "--partner",
                "http://" + partner.address(), "--run-id", std::to_string(run), "--keys", "1", "--maximum-pool-size",
                "2", "--partner-read-timeout", "60s"});
  if (pod.address().empty()) return out;
  std::thread request([&] {
    httplib::Client c("http://" + pod.address());
    c.set_read_timeout(std::chrono::seconds(2) + gone + 40s);
    (void)c.Post("/users/1/primary", {{"X-Request-Id", "1"}}, "", "text/plain");
  });
  // Inside its partner call, holding the lock, every statement's answer ACKed:
  // only then is the session idle, where keepalives apply (unACKed data would
  // be retransmitted instead, for tcp_retries2 or tcp_user_timeout).
  out.started = testing::wait_for([&] { return pod_locks(admin_url, run) > 0; }, 10s) && testing::wait_for([&] {
    httplib::Client c("http://" + pod.address());
    c.set_read_timeout(1s);
    auto r = c.Get("/lockbench/pool");
    return r && r->status == 200 && json::parse(r->body, nullptr, false).value("in_partner", 0) >= 1;
  }, 10s);
  std::this_thread::sleep_for(300ms);
  if (out.started) {
    ::kill(pod.pid(), SIGSTOP);  // `ip netns exec` execs the pod: this is its pid
    ns.cut(true);
    const auto cut = std::chrono::steady_clock::now();
    out.freed_while_gone = testing::wait_for([&] { return pod_locks(admin_url, run) == 0; }, gone);
    if (out.freed_while_gone)
      out.freed_after_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - cut).count();
    ns.cut(false);
  }
  ::kill(pod.pid(), SIGCONT);
  ::kill(pod.pid(), SIGKILL);  // the request's HTTP call ends with its socket
  request.join();
  auto c = real::open_session(admin_url);
  real::drop_rows(*c, run);
  return out;
}

TEST(RealHostLoss, KeepalivesFreeALostHostsRowLockWhileTheDefaultsKeepItUntilTheHostReturns) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root for a network namespace";
  Netns ns;
  if (!ns.ok()) GTEST_SKIP() << "ip netns / veth not available here";
  // A PostgreSQL of this test's own, listening on loopback and on this side of the veth pair.
  const std::string pg = std::string(LOCKBENCH_SOURCE_DIR) + "/scripts/pg";
  const fs::path dir = fs::temp_directory_path() / ("lockbench-hostloss-" + std::to_string(::getpid()));
  const auto started = run_command("timeout 60 " + pg + " start " + dir.string());
  struct StopServer {
    std::string cmd;
    ~StopServer() { (void)run_command(cmd); }
  } stop_server{"timeout 60 " + pg + " stop " + dir.string()};
  ASSERT_EQ(started.status, 0) << started.err;
  const std::string admin_url = trimmed_last_line(started.out);
  const int pg_port = std::stoi(admin_url.substr(admin_url.rfind(':') + 1, admin_url.rfind('/') - admin_url.rfind(':') - 1));
  const fs::path cluster = fs::exists(dir / "cluster") ? fs::path(trimmed_last_line(testing::slurp((dir / "cluster").string())))
                                                        : dir;
  {
    std::ofstream hba(cluster / "data" / "pg_hba.conf", std::ios::app);
    hba << "host all all " << ns.host_ip().substr(0, ns.host_ip().rfind('.')) << ".0/30 trust\n";
    // pg_ctl restart reuses postmaster.opts: listen on the veth address too.
    std::ifstream in(cluster / "data" / "postmaster.opts");
    std::stringstream opts;
    opts << in.rdbuf();
    std::string text = opts.str();
    const std::string from = "listen_addresses=127.0.0.1";
    const auto at = text.find(from);
    ASSERT_NE(at, std::string::npos) << text;
    text.replace(at, from.size(), from + "," + ns.host_ip());
    std::ofstream(cluster / "data" / "postmaster.opts") << text;
  }
  ASSERT_EQ(run_command("timeout 60 " + pg + " restart " + dir.string()).status, 0);

  const Outcome defaults = lose_host(ns, admin_url, pg_port, "", 515151, 8s);
  const Outcome keepalive = lose_host(
      ns, admin_url, pg_port, "-c%20tcp_keepalives_idle%3D1%20-c%20tcp_keepalives_interval%3D1%20-c%20tcp_keepalives_count%3D2",
      525252, 8s);
  ASSERT_TRUE(defaults.started && keepalive.started) << "the pod never held the row lock";
  // Keepalives (1 s idle, 1 s apart, 2 unanswered) end the lost host's session
  // while it is still gone; the defaults (2 h) do not.
  EXPECT_TRUE(keepalive.freed_while_gone);
  EXPECT_FALSE(defaults.freed_while_gone);
  std::printf("host lost with its socket open: lock freed %.2f s after the host went with keepalives 1s/1s/2; "
              "still held after 8 s with the defaults\n",
              keepalive.freed_after_s);
}

}  // namespace real_hostloss_test
}  // namespace lockbench
