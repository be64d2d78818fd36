// run_pods: the real world with pods as HTTP services (contract in run_pods.hpp).
//
// Children: each `lockbench serve` child is forked from the thread that calls
// run_pods, joins one process group (the first child's), dies with its parent
// (PR_SET_PDEATHSIG) and is killed and reaped by PodProcesses' destructor, so
// that no exit path (an exception included) leaves a child behind.
#include "real/run_pods.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <cmath>
#include <latch>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <httplib.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/context.hpp"
#include "core/random.hpp"
#include "core/result.hpp"
#include "core/workload.hpp"
#include "fake_partner/model/call.hpp"
#include "real/partner_http.hpp"
#include "core/redact.hpp"
#include "real/leftovers.hpp"
#include "real/pg_conn.hpp"
#include "real/run_common.hpp"
#include "real/kv_lease_store.hpp"
#include "real/serve.hpp"
#include "real/shard_marks.hpp"
#include "strategies/registry.hpp"

namespace lockbench::real {

namespace {

// Every session the runner opens carries lockbench's application_name (real/leftovers.hpp).
const std::string& runner_run_id() {
  static const std::string id = new_run_id();
  return id;
}
const std::string& runner_session_name() {
  static const std::string name = application_name(runner_run_id(), "runner");
  return name;
}

using Clock = std::chrono::steady_clock;
using nlohmann::json;

std::string one_line(std::string text) {
  for (char& ch : text)
    if (ch == '\n' || ch == '\r') ch = ' ';
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

std::int64_t new_run_key() {
  static std::atomic<std::uint64_t> counter{0};
  const auto t = static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  Rng rng(t ^ (static_cast<std::uint64_t>(::getpid()) << 32) ^ counter.fetch_add(1), "run-pods");
  return static_cast<std::int64_t>(rng.next() >> 1);
}

template <class Rep, class Period>
void set_timeouts(httplib::Client& c, std::chrono::duration<Rep, Period> connect, std::chrono::duration<Rep, Period> read) {
  c.set_connection_timeout(connect);
  c.set_read_timeout(read);
  c.set_write_timeout(read);
}

// GET url+path as JSON; nullopt when unreachable, not 200 or not JSON.
std::optional<json> get_json(const std::string& url, const std::string& path, Duration timeout) {
  httplib::Client c(url);
  set_timeouts(c, timeout, timeout);
  auto r = c.Get(path);
  if (!r || r->status != 200) return std::nullopt;
  try {
    return json::parse(r->body);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

bool ready(const std::string& url, Duration timeout) {
  httplib::Client c(url);
  set_timeouts(c, timeout, timeout);
  auto r = c.Get("/health/readiness");
  return r && r->status == 200;
}

// --- children ---------------------------------------------------------------

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

  // Starts `lockbench serve ARGS --port 0` with `env` added to our environment
  // (NAME=VALUE; a NAME of ours is replaced) and waits for its "listening on"
  // line. Throws SettingError when it exits or stays silent for `wait`.
  Child start(const std::vector<std::string>& args, const std::vector<std::string>& env, Duration wait) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw SettingError(std::string("--pods: cannot create a pipe: ") + std::strerror(errno));
    std::vector<std::string> argv_s = {"lockbench", "serve"};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> env_s = env;
    for (char** e = environ; *e != nullptr; ++e) {
      const std::string_view entry(*e);
      const bool replaced = std::any_of(env.begin(), env.end(), [&](const std::string& mine) {
        return entry.substr(0, entry.find('=') + 1) == std::string_view(mine).substr(0, mine.find('=') + 1);
      });
      if (!replaced) env_s.emplace_back(entry);
    }
    std::vector<char*> envp;
    for (auto& e : env_s) envp.push_back(e.data());
    envp.push_back(nullptr);
    const pid_t parent = ::getpid();
    const pid_t group = pgid_;
    const pid_t pid = ::fork();
    if (pid < 0) {
      ::close(fds[0]);
      ::close(fds[1]);
      throw SettingError(std::string("--pods: cannot fork: ") + std::strerror(errno));
    }
    if (pid == 0) {  // the child: async-signal-safe calls only until exec
      ::setpgid(0, group > 0 ? group : 0);
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(127);  // the parent died before prctl
      ::dup2(fds[1], STDOUT_FILENO);
      ::execve("/proc/self/exe", argv.data(), envp.data());
      ::_exit(127);
    }
    ::setpgid(pid, group > 0 ? group : pid);  // both sides: no race with the exec
    if (pgid_ <= 0) pgid_ = pid;
    ::close(fds[1]);
    fds_to_close_.push_back(fds[0]);
    Child c{pid, fds[0], ""};
    {
      std::lock_guard lock(mu_);
      children_.push_back(c);
    }
    // Read the first line within `wait`.
    std::string line;
    const auto deadline = Clock::now() + wait;
    while (line.find('\n') == std::string::npos) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) throw SettingError("--pods: a `lockbench serve` child did not start listening in time");
      pollfd p{fds[0], POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
      char buf[256];
      const ssize_t n = ::read(fds[0], buf, sizeof buf);
      if (n <= 0) throw SettingError("--pods: a `lockbench serve` child exited before listening (its error is above)");
      line.append(buf, static_cast<std::size_t>(n));
    }
    const std::string prefix = "listening on ";
    const auto at = line.find(prefix);
    if (at == std::string::npos) throw SettingError("--pods: unexpected first line from a serve child: " + one_line(line));
    c.url = "http://" + line.substr(at + prefix.size(), line.find('\n') - at - prefix.size());
    // Keep draining its stdout so that a chatty child never blocks on a full pipe.
    const int fd = fds[0];
    drainers_.emplace_back([fd] {
      char buf[512];
      while (::read(fd, buf, sizeof buf) > 0) {
      }
    });
    return c;
  }

  // Sends `sig` to one child (SIGKILL, SIGSTOP, SIGCONT).
  void signal(pid_t pid, int sig) { ::kill(pid, sig); }

  // Reaps a child killed with SIGKILL.
  void reap(pid_t pid) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    std::lock_guard lock(mu_);
    for (auto& c : children_)
      if (c.pid == pid) c.pid = -1;
  }

  // SIGTERM, a short grace, then SIGKILL to the whole group; every child reaped.
  void kill_all() {
    std::vector<pid_t> pids;
    {
      std::lock_guard lock(mu_);
      for (auto& c : children_)
        if (c.pid > 0) pids.push_back(c.pid);
    }
    for (pid_t p : pids) {
      ::kill(p, SIGCONT);  // a paused child cannot handle SIGTERM
      ::kill(p, SIGTERM);
    }
    const auto deadline = Clock::now() + std::chrono::seconds(3);
    for (pid_t p : pids) {
      for (;;) {
        int status = 0;
        const pid_t r = ::waitpid(p, &status, WNOHANG);
        if (r == p || (r < 0 && errno == ECHILD)) break;
        if (Clock::now() >= deadline) {
          ::kill(p, SIGKILL);
          ::waitpid(p, &status, 0);
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
    if (pgid_ > 0) ::kill(-pgid_, SIGKILL);  // anything left in the group
    {
      std::lock_guard lock(mu_);
      children_.clear();
    }
    for (auto& t : drainers_) t.join();  // their pipes hit EOF once the children are gone
    drainers_.clear();
    for (int fd : fds_to_close_) ::close(fd);
    fds_to_close_.clear();
  }

 private:
  std::mutex mu_;
  std::vector<Child> children_;  // GUARDED_BY(mu_)
  pid_t pgid_ = -1;              // the first child's pid: the group of them all
  std::vector<std::thread> drainers_;
  std::vector<int> fds_to_close_;
};

// What a pod gets in its environment rather than in argv, where `ps` shows it to
// every local user: the URLs that may hold a password (serve.hpp's kServe*Env).
// Redis's or etcd's store is shared by every pod of the run.
std::vector<std::string> serve_env(const Settings& s) {
  std::vector<std::string> env = {std::string(kServeDbEnv) + "=" + s.db_url};
  if (!s.redis_url.empty()) env.push_back(std::string(kServeRedisEnv) + "=" + s.redis_url);
  if (!s.etcd_url.empty()) env.push_back(std::string(kServeEtcdEnv) + "=" + s.etcd_url);
  return env;
}

// The serve arguments of pod `index` (0-based): the scaled settings that a pod uses.
std::vector<std::string> serve_args(const Settings& s, std::int64_t run, int index) {
  const auto d = [](Duration x) { return format_duration(x); };
  std::vector<std::string> a = {
      "--scenario", s.scenario, "--strategy", s.strategy, "--partner", s.partner_url,
      "--port", "0", "--run-id", std::to_string(run), "--pod", std::to_string(index + 1),
      "--seed", std::to_string(s.seed), "--keys", std::to_string(s.keys),
      "--maximum-pool-size", std::to_string(s.maximum_pool_size), "--connection-timeout", d(s.connection_timeout),
      "--leak-detection-threshold", d(s.leak_detection_threshold), "--max-lifetime", d(s.max_lifetime),
      "--probe-timeout", d(s.probe_timeout), "--max-threads", std::to_string(s.max_threads),
      "--accept-count", std::to_string(s.accept_count), "--partner-connect-timeout", d(s.partner_connect_timeout),
      "--partner-read-timeout", d(s.partner_read_timeout), "--partner-max-attempts", std::to_string(s.partner_max_attempts),
      "--retry-backoff-base", d(s.retry_backoff_base), "--retry-backoff-cap", d(s.retry_backoff_cap),
      "--lease-ttl", d(s.lease_ttl), "--lock-timeout", d(s.lock_timeout), "--fencing", s.fencing,
      "--identities-per-person", std::to_string(s.identities_per_person),
      // The strategy's background work (outbox pollers, reconcilers) and its bounds.
      "--duration", d(s.duration), "--pods", std::to_string(s.pods), "--outbox-pollers",
      std::to_string(s.outbox_pollers), "--outbox-poll-interval", d(s.outbox_poll_interval), "--outbox-drain-limit",
      d(s.outbox_drain_limit), "--db-faults", db_faults_text(s.db_faults)};
  // As in the simulator, pods after the first run with the skewed application
  // clock, unless --clock-skew D:POD names one.
  if (s.clock_skew != Duration::zero() && (s.skew_pod == 0 ? index >= 1 : index + 1 == s.skew_pod)) {
    a.push_back("--clock-skew");
    a.push_back(d(s.clock_skew));
  }
  return a;
}

// --- the partner and the database, as run_real prepares them ----------------

// Seeds this run's rows. Unlike the in-process runner it terminates no session:
// the pods' connections are the only ones using the run, and its advisory keys
// are salted with the run number.
// Runs of runners proven gone are reclaimed first; `record` (when given) is
// made before the rows exist, so a killed runner's rows are always reclaimable.
Reclaimed prepare_rows(const Settings& s, const Scenario& scenario, std::int64_t run, std::optional<RunRecord>* record) {
  try {
    auto c = open_session(s.db_url, runner_session_name());
    try {
      create_schema(*c);
    } catch (const SchemaNotOurs& e) {
      throw SettingError("--db: " + std::string(e.what()));
    }
    Reclaimed reclaimed = reclaim_dead_runs(*c);
    report_reclaimed(reclaimed, redact_secrets(s.db_url));
    if (record) record->emplace(s.db_url, run, runner_run_id());
    seed_rows(*c, run, scenario.tables(), s.keys);
    return reclaimed;
  } catch (const SettingError&) {
    throw;
  } catch (const std::exception& e) {
    throw SettingError("--db: cannot prepare lockbench's rows at " + redact_secrets(s.db_url) + ": " + one_line(e.what()));
  }
}

// --- the load ---------------------------------------------------------------

Outcome outcome_of_status(int status) {
  switch (status) {
    case 200: return Outcome::ok;
    case 409: return Outcome::conflict;
    case 503: return Outcome::pool_timeout;
    case 429: return Outcome::rejected;
    default: return Outcome::error;
  }
}

// "queue pool_wait lock_wait partner db held service" in microseconds.
TimeSplit parse_split(const std::string& text, Duration total) {
  std::istringstream in(text);
  std::int64_t v[7] = {};
  for (auto& x : v)
    if (!(in >> x)) return TimeSplit{total};
  const auto u = [](std::int64_t x) { return Duration(std::chrono::microseconds(x)); };
  TimeSplit out;
  // The time outside the pod (the network, a late sender) counts as queueing.
  out.queue = u(v[0]) + (total > u(v[6]) ? total - u(v[6]) : Duration::zero());
  out.pool_wait = u(v[1]);
  out.lock_wait = u(v[2]);
  out.partner = u(v[3]);
  out.db = u(v[4]);
  out.held = u(v[5]);
  return out;
}

// A fixed set of sender threads with an unbounded queue: a late sender delays a
// request's send, never its intended start, so latency stays honest.
class Senders {
 public:
  Senders(int n, std::function<void(const Request&)> send) : send_(std::move(send)) {
    for (int i = 0; i < n; ++i) threads_.emplace_back([this] { loop(); });
  }
  ~Senders() { finish(); }
  void push(const Request& r) {
    {
      std::lock_guard lock(mu_);
      queue_.push_back(r);
    }
    cv_.notify_one();
  }
  // Sends what is queued, then joins.
  void finish() {
    {
      std::lock_guard lock(mu_);
      closing_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_)
      if (t.joinable()) t.join();
  }

 private:
  void loop() {
    for (;;) {
      Request r;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return closing_ || !queue_.empty(); });
        if (queue_.empty()) return;
        r = queue_.front();
        queue_.pop_front();
      }
      send_(r);
    }
  }
  std::function<void(const Request&)> send_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Request> queue_;  // GUARDED_BY(mu_)
  bool closing_ = false;       // GUARDED_BY(mu_)
  std::vector<std::thread> threads_;
};

// Runs f every `every` until stop() (wakes at once on stop).
class Ticker {
 public:
  Ticker(Duration every, std::function<void()> f) : f_(std::move(f)), every_(every) {
    thread_ = std::thread([this] {
      std::unique_lock lock(mu_);
      while (!stop_) {
        lock.unlock();
        f_();
        lock.lock();
        cv_.wait_for(lock, every_, [&] { return stop_; });
      }
    });
  }
  ~Ticker() { stop(); }
  void stop() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::function<void()> f_;
  Duration every_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // GUARDED_BY(mu_)
  std::thread thread_;
};

std::vector<std::string> split_targets(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream in(list);
  std::string one;
  while (std::getline(in, one, ','))
    if (!one.empty()) out.push_back(one.back() == '/' ? one.substr(0, one.size() - 1) : one);
  return out;
}

// Sums the pods' side effects (core/side_effects.hpp's json(), one per pod):
// counts add; a queue's lag keeps a single pod's exact quantiles, and over
// several pods takes them from the merged histogram (a bucket's upper bound,
// within 1/8 of a power of two) with the largest max.
json merge_effects(const std::vector<json>& pods) {
  json out = json::object();
  std::map<std::string, std::map<std::pair<double, double>, std::int64_t>> buckets;  // queue -> bucket -> count
  std::map<std::string, int> reporting;                                                // queue -> pods with it
  const auto add = [](json& into, const json& from) {
    for (auto f = from.begin(); f != from.end(); ++f)
      if (f.value().is_number_integer()) into[f.key()] = into.value(f.key(), std::int64_t{0}) + f.value().get<std::int64_t>();
  };
  for (const auto& e : pods) {
    if (!e.is_object()) continue;
    for (auto it = e.begin(); it != e.end(); ++it) {
      const json& v = it.value();
      if (!v.is_object()) continue;
      json& into = out[it.key()];
      if (!into.is_object()) into = json::object();
      add(into, v);
      if (!v.contains("lag_ms")) continue;  // db_faults, emails: counts only
      if (++reporting[it.key()] == 1) {
        into["lag_ms"] = v["lag_ms"];
        into["lag_histogram_ms"] = v.value("lag_histogram_ms", json::object());
      } else {
        into["lag_ms"]["max"] = std::max(into["lag_ms"].value("max", 0.0), v["lag_ms"].value("max", 0.0));
      }
      for (const auto& b : v.value("lag_histogram_ms", json::object()).value("buckets", json::array()))
        if (b.is_array() && b.size() == 3) buckets[it.key()][{b[0].get<double>(), b[1].get<double>()}] += b[2].get<std::int64_t>();
    }
  }
  for (const auto& [queue, n] : reporting) {
    if (n < 2) continue;
    json& q = out[queue];
    std::int64_t count = 0;
    json list = json::array();
    for (const auto& [bounds, c] : buckets[queue]) {
      count += c;
      list.push_back({bounds.first, bounds.second, c});
    }
    q["lag_histogram_ms"]["buckets"] = list;
    q["lag_histogram_ms"]["count"] = count;
    const auto quantile = [&](double f) {
      const auto want = static_cast<std::int64_t>(std::ceil(f * static_cast<double>(count)));
      std::int64_t seen = 0;
      for (const auto& [bounds, c] : buckets[queue])
        if ((seen += c) >= want) return std::min(bounds.second, q["lag_ms"].value("max", 0.0));
      return q["lag_ms"].value("max", 0.0);
    };
    if (count > 0) q["lag_ms"]["p50"] = quantile(0.5), q["lag_ms"]["p99"] = quantile(0.99);
  }
  return out;
}

// The requests of this runner's slice of the one schedule: position p with
// p % N == I, every request when unsharded. A stride over the time-ordered
// schedule gives each slice ⌊n/N⌋ or ⌈n/N⌉ requests spread over the whole run
// (as k6's striped execution segments do), and the union is the schedule.
std::vector<Request> slice_of(std::vector<Request> all, const Settings& s) {
  if (s.shard_count <= 1) return all;
  std::vector<Request> mine;
  for (auto p = static_cast<std::size_t>(s.shard_index); p < all.size(); p += static_cast<std::size_t>(s.shard_count))
    mine.push_back(all[p]);
  return mine;
}

// A database failure while the runners meet is a --db line like any other.
template <class F>
auto with_db_line(const Settings& s, F f) {
  try {
    return f();
  } catch (const SettingError&) {
    throw;
  } catch (const std::exception& e) {
    throw SettingError("--db: the runners cannot meet at " + redact_secrets(s.db_url) + ": " + one_line(e.what()));
  }
}

// Every runner at the agreed start (Unix ms): shard 0 announces it once the
// others have joined, the others wait for it; then all sleep until it.
std::int64_t meet_the_other_runners(const ShardMarks& marks, const Settings& s, const RunHooks& hooks) {
  const std::int64_t start = with_db_line(s, [&] {
    return s.shard_index == 0 ? marks.announce(s.shard_wait, hooks.should_stop)
                              : marks.await_start(s.shard_wait, hooks.should_stop);
  });
  sleep_until_unix_ms(start, hooks.should_stop);
  return start;
}

// A runner's load is over: shard k says so; shard 0 waits for them all (the
// shards still running after --shard-wait are named, on stderr and in the result).
std::vector<int> end_of_slice(const ShardMarks& marks, const Settings& s, std::int64_t start, const RunHooks& hooks) {
  return with_db_line(s, [&] {
    if (s.shard_index != 0) {
      marks.ended(start);
      return std::vector<int>{};
    }
    const std::vector<int> missing = marks.await_ended(start, s.shard_wait, hooks.should_stop);
    if (!missing.empty())
      std::fprintf(stderr, "lockbench: --shard 0/%d: %zu shard(s) had not ended after %s; the partner's checks are "
                   "read without them (merge refuses this run)\n", s.shard_count, missing.size(),
                   format_duration(s.shard_wait).c_str());
    return missing;
  });
}

// The result block that says which slice a runner held and how it met the others.
json shard_block(const Settings& s, std::int64_t run, std::int64_t start, const std::vector<int>& not_ended) {
  return {{"index", s.shard_index},  {"count", s.shard_count}, {"slice", std::to_string(s.shard_index) + "/" + std::to_string(s.shard_count)},
          {"run", run},              {"start_unix_ms", start},  {"partner_read", s.shard_index == 0},
          {"not_ended", not_ended}};
}

}  // namespace

bool pods_over_http(const Settings& s) { return s.pod_mode == "process" || !s.targets.empty(); }

void refuse_faults_in_threads(const Settings& s) {
  const char* hint = " is not done by the in-process pods; use --pod-mode process (or --world sim)";
  if (s.crash_at) throw SettingError(std::string("--crash-at:") + hint);
  if (s.pause_at) throw SettingError(std::string("--pause-at:") + hint);
  if (s.clock_skew != Duration::zero()) throw SettingError(std::string("--clock-skew:") + hint);
}

json run_pods(const Settings& configured, const RunHooks& hooks) {
  configured.validate();
  if (configured.db_url.empty())
    throw SettingError("--db: the real world needs a PostgreSQL URL (e.g. postgresql://postgres@127.0.0.1:5432/postgres)");
  if (configured.partner_url.empty())
    throw SettingError("--partner: the real world needs the fake partner's URL (e.g. http://127.0.0.1:8080)");
  if (configured.arrival == Arrival::closed && configured.users > 1024)
    throw SettingError("--users: at most 1024 virtual users with pods over HTTP (one sending thread each)");
  const bool external = !configured.targets.empty();
  if (external && (configured.crash_at || configured.pause_at || configured.clock_skew != Duration::zero()))
    throw SettingError("--targets: lockbench does not own these services; --crash-at, --pause-at and --clock-skew need --pod-mode process");
  if (!external) {
    if (configured.crash_at && configured.crash_pod > configured.pods)
      throw SettingError("--crash-at: pod " + std::to_string(configured.crash_pod) + " does not exist (--pods " +
                         std::to_string(configured.pods) + ")");
    if (configured.pause_at && configured.pause_pod > configured.pods)
      throw SettingError("--pause-at: pod " + std::to_string(configured.pause_pod) + " does not exist (--pods " +
                         std::to_string(configured.pods) + ")");
    if (configured.skew_pod > configured.pods)
      throw SettingError("--clock-skew: pod " + std::to_string(configured.skew_pod) + " does not exist (--pods " +
                         std::to_string(configured.pods) + ")");
  }
  Settings s = configured.scaled();
  s.world = "real";
  const StrategyInfo& info = strategy_info(s.strategy);
  check_applies(info, s.scenario);
  const auto scenario = make_scenario(s.scenario);
  const Duration short_wait = std::chrono::seconds(2);

  // --- who serves, on which run's rows ---
  std::vector<std::string> urls;
  std::int64_t run_key = 0;
  bool have_rows = true;
  if (external) {
    urls = split_targets(s.targets);
    std::optional<std::int64_t> agreed;
    for (const auto& u : urls) {
      const auto info_json = get_json(u, "/lockbench/info", short_wait);
      if (!info_json) {
        if (!ready(u, short_wait)) throw SettingError("--targets: " + u + " does not answer GET /health/readiness with 200");
        continue;  // a service of the user's own: no lockbench.rows run
      }
      if (info_json->value("scenario", s.scenario) != s.scenario)
        throw SettingError("--targets: " + u + " serves scenario " + info_json->value("scenario", std::string()) +
                           ", not --scenario " + s.scenario);
      if (info_json->value("strategy", std::string(info.spec)) != info.spec)
        throw SettingError("--targets: " + u + " runs strategy " + info_json->value("strategy", std::string()) +
                           ", not --strategy " + std::string(info.spec));
      const auto r = info_json->value("run", std::int64_t{0});
      if (agreed && *agreed != r)
        throw SettingError("--targets: the services use different runs (--run-id); start them with the same one");
      agreed = r;
    }
    have_rows = agreed.has_value();
    run_key = agreed.value_or(0);
  } else {
    run_key = new_run_key();
  }
  // Declared before anything that ends the run: destroyed after its rows are dropped.
  std::optional<RunRecord> record;
  Reclaimed reclaimed;
  // Sharded (--shard I/N, only with --targets): shard 0 alone prepares the run
  // (old marks, rows, partner) and reads its checks at the end; the others only send.
  const bool sharded = s.shard_count > 1, leader = s.shard_index == 0;
  std::optional<ShardMarks> marks;
  if (sharded) marks.emplace(s.db_url, runner_session_name(), run_key, s.shard_index, s.shard_count);
  if (sharded && leader) with_db_line(s, [&] { marks->clear(); });
  if (have_rows && leader) reclaimed = prepare_rows(s, *scenario, run_key, external ? nullptr : &record);
  // redis-lease, etcd-lease: the pods share the run's keys in the store ("lockbench:<run>:…",
  // "lockbench/<run>/…"); the
  // runner counts those still held at the end and deletes them, whatever the way
  // out, unless the services are --targets (their run stays theirs).
  std::unique_ptr<KvLeaseStore> redis;
  if (info.props.needs_lease_store && !external)
    redis = open_kv_lease_store(s, info.props, std::to_string(run_key), std::chrono::seconds(2));
  const DropRunKeysAtExit redis_keys(redis.get());
  PartnerHttp partner(s.partner_url, s.partner_connect_timeout, s.partner_read_timeout);
  try {
    if (leader) partner.reset(scenario->partner_reset(s));
    if (leader) partner.configure(partner_config(s));
  } catch (const std::exception& e) {
    throw SettingError("--partner: cannot use " + redact_secrets(s.partner_url) + ": " + one_line(e.what()));
  }

  PodProcesses children;  // destroyed (every child killed and reaped) on every way out
  std::vector<pid_t> pod_pids;
  if (!external) {
    for (int p = 0; p < s.pods; ++p) {
      const Child c = children.start(serve_args(s, run_key, p), serve_env(s), std::chrono::seconds(15));
      urls.push_back(c.url);
      pod_pids.push_back(c.pid);
    }
  }
  // Readiness: every pod answers 200 before the load starts.
  {
    const auto deadline = Clock::now() + std::chrono::seconds(15);
    for (const auto& u : urls)
      while (!ready(u, short_wait)) {
        if (Clock::now() >= deadline) throw SettingError("--pods: " + u + " never became ready (/health/readiness)");
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
  }
  std::mutex urls_mu;  // guards urls: a restarted pod gets a new address
  const auto url_of = [&](std::size_t i) {
    std::lock_guard lock(urls_mu);
    return urls[i];
  };
  const std::size_t n_pods = urls.size();
  const std::int64_t start_ms = sharded ? meet_the_other_runners(*marks, s, hooks) : 0;

  const Duration step = std::clamp<Duration>(s.duration / 40, std::chrono::milliseconds(50), std::chrono::seconds(1));
  Recorder recorder(step);
  const auto epoch = Clock::now();
  const auto now = [&] { return Duration(Clock::now() - epoch); };
  std::atomic<std::int64_t> done_count{0}, ok_count{0};
  // Stop (SIGINT/SIGTERM through hooks.should_stop): latched, so every thread sees the same answer.
  std::atomic<bool> stopping{false};
  const auto stop_requested = [&] {
    if (!stopping.load() && hooks.should_stop && hooks.should_stop()) stopping = true;
    return stopping.load();
  };
  // Sleeps until `t` (since the epoch), waking every 50 ms to notice a stop: false when stopping.
  const auto sleep_until_or_stop = [&](Duration t) {
    for (;;) {
      if (stop_requested()) return false;
      const auto deadline = epoch + t;
      const auto now_tp = Clock::now();
      if (now_tp >= deadline) return true;
      std::this_thread::sleep_until(std::min(deadline, now_tp + std::chrono::milliseconds(50)));
    }
  };
  // A pause's window (ns since the epoch; -1 = none yet) and its pod, for the
  // requests answered ok by the other pods meanwhile.
  std::atomic<std::int64_t> pause_from_ns{-1}, pause_to_ns{-1}, ok_elsewhere_during_pause{0};
  std::atomic<int> paused_index{-1};

  // --- background: pool samples from every pod, progress, the readiness probe ---
  Duration last_progress{};
  Ticker sampler(std::chrono::milliseconds(100), [&] {
    PoolSample total{now(), 0, 0, 0};
    for (std::size_t i = 0; i < n_pods; ++i)
      if (const auto j = get_json(url_of(i), "/lockbench/pool", std::chrono::milliseconds(300))) {
        total.active += j->value("active", 0);
        total.pending += j->value("pending", 0);
        total.idle += j->value("idle", 0);
      }
    recorder.pool_sample(total);
    if (hooks.progress && total.t - last_progress >= std::chrono::milliseconds(250)) {
      last_progress = total.t;
      hooks.progress(done_count.load(), ok_count.load(), total.t);
    }
  });
  ProbeStats probe;
  std::mutex probe_mu;  // guards probe
  std::optional<Ticker> prober;
  if (s.probe_interval > Duration::zero()) {
    prober.emplace(s.probe_interval, [&] {
      for (std::size_t i = 0; i < n_pods; ++i) {
        const bool ok = ready(url_of(i), s.probe_timeout + std::chrono::milliseconds(500));
        std::lock_guard lock(probe_mu);
        ++probe.total;
        if (!ok) ++probe.failed;
      }
    });
  }

  // --- requests in flight per pod (the crash fault names what the killed pod held) ---
  std::mutex flight_mu;
  std::vector<std::set<std::uint64_t>> in_flight(n_pods);  // GUARDED_BY(flight_mu)

  // --- faults, for real (process mode): SIGSTOP/SIGCONT, kill -9 and a restart ---
  std::mutex fault_mu;
  std::condition_variable fault_cv;
  bool run_over = false;                 // GUARDED_BY(fault_mu)
  json faults = json::object();          // written by the fault thread, read after it is joined
  const auto wait_until = [&](Duration t) {  // false when the run ended first
    std::unique_lock lock(fault_mu);
    return !fault_cv.wait_until(lock, epoch + t, [&] { return run_over; });
  };
  // A fault waits for its moment until the arrivals end (then strikes anyway: in_partner 0 says so).
  const auto last_chance = [&] {
    std::lock_guard lock(fault_mu);
    return run_over ? Duration::zero() : s.duration;
  };
  // Locks of a pod's sessions (advisory, row and transaction locks), as PostgreSQL sees them.
  const char* locks_sql =
      "SELECT count(*) FROM pg_locks WHERE granted AND locktype IN ('advisory', 'transactionid', 'tuple') "
      "AND pid = ANY($1::int[])";
  const auto pid_array = [](const std::vector<int>& backends) {
    std::string pids = "{";
    for (std::size_t k = 0; k < backends.size(); ++k) pids += (k ? "," : "") + std::to_string(backends[k]);
    return pids + "}";
  };
  const auto pause_fault = [&] {
    const std::size_t i = static_cast<std::size_t>(s.pause_pod - 1);
    if (!wait_until(*s.pause_at)) return;
    pid_t pid;
    {
      std::lock_guard lock(urls_mu);
      pid = pod_pids[i];
    }
    // As a crash does, the pause waits for a moment when the pod is inside a partner call.
    int in_partner = 0;
    while (now() < last_chance()) {
      if (const auto j = get_json(url_of(i), "/lockbench/pool", std::chrono::milliseconds(200)))
        if ((in_partner = j->value("in_partner", 0)) > 0) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    // What the frozen pod keeps from everyone else: its sessions' locks, until
    // it resumes or the server ends the sessions (idle_in_transaction_session_timeout).
    // TCP keepalives cannot end them: the stopped process's kernel still answers.
    std::vector<int> backends;
    if (const auto st = get_json(url_of(i), "/lockbench/stats", std::chrono::seconds(1)))
      backends = st->value("backend_pids", std::vector<int>{});
    const std::string pids = pid_array(backends);
    json pause = {{"pod", s.pause_pod}, {"in_partner_at_pause", in_partner}};
    // While it is frozen, every lock its sessions hold blocks (its own waiters
    // granted the lock in turn included); at the resume, the locks held then,
    // by identity: those the pod takes afterwards are not the pause's.
    const char* identity =
        "(locktype || ':' || pid || ':' || coalesce(transactionid::text, '') || ':' || coalesce(classid::text, '') || "
        "':' || coalesce(objid::text, '') || ':' || coalesce(relation::text, '') || ':' || coalesce(page::text, '') || "
        "':' || coalesce(tuple::text, ''))";
    const std::string snapshot_sql = std::string("SELECT coalesce(array_agg(") + identity +
                                     ")::text, '{}') FROM pg_locks WHERE granted AND locktype IN ('advisory', "
                                     "'transactionid', 'tuple') AND pid = ANY($1::int[])";
    const std::string still_sql = std::string("SELECT count(*) FROM pg_locks WHERE granted AND ") + identity +
                                  " = ANY($1::text[])";
    std::string held_at_pause = "{}";
    std::unique_ptr<pqxx::connection> db;
    std::int64_t held_locks = -1;
    try {
      db = open_session(s.db_url, runner_session_name());
      pqxx::nontransaction tx(*db);
      // The sessions' settings, as the --db URL's options give them (the runner's session has the same).
      for (const char* g : {"idle_in_transaction_session_timeout", "tcp_keepalives_idle", "tcp_keepalives_interval",
                            "tcp_keepalives_count"})
        pause["session_settings"][g] = tx.exec1(std::string("SHOW ") + g)[0].as<std::string>();
    } catch (const std::exception& e) {
      pause["measure_error"] = one_line(e.what());
      db.reset();
    }
    paused_index = static_cast<int>(i);
    children.signal(pid, SIGSTOP);
    const Duration stopped = now();
    pause_from_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(stopped).count();
    if (db) try {  // frozen: its own side holds still
      pqxx::nontransaction tx(*db);
      held_locks = tx.exec_params1(locks_sql, pids)[0].as<std::int64_t>();
    } catch (const std::exception& e) {
      pause["measure_error"] = one_line(e.what());
      db.reset();
    }
    // Resume --pause-for after the pod stopped (not after --pause-at: the pause
    // waited for a partner call, and one that struck late would be cut short);
    // meanwhile, and after, watch the pod's locks until they are gone.
    const Duration resume_at = stopped + s.pause_for;
    bool resumed = false;
    Duration continued{};
    std::optional<Duration> freed;
    const auto ended = [&] {
      std::lock_guard lock(fault_mu);
      return run_over;
    };
    for (const auto give_up = Clock::now() + s.pause_for + std::chrono::seconds(30);;) {
      if (!resumed && (now() >= resume_at || ended() || Clock::now() >= give_up)) {
        // From here on the pod takes new locks: only those its sessions hold now still count.
        if (!freed && db) try {
          pqxx::nontransaction tx(*db);
          held_at_pause = tx.exec_params1(snapshot_sql, pids)[0].as<std::string>();
        } catch (const std::exception& e) {
          pause["measure_error"] = one_line(e.what());
          db.reset();
        }
        children.signal(pid, SIGCONT);
        resumed = true;
        continued = now();
        pause_to_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(continued).count();
      }
      if (!freed && db && held_locks > 0) try {
        pqxx::nontransaction tx(*db);
        const auto left = resumed ? tx.exec_params1(still_sql, held_at_pause)[0].as<std::int64_t>()
                                  : tx.exec_params1(locks_sql, pids)[0].as<std::int64_t>();
        if (left == 0) freed = now() - stopped;
      } catch (const std::exception& e) {
        pause["measure_error"] = one_line(e.what());
        db.reset();
      }
      if (resumed && (freed || !db || held_locks <= 0 || Clock::now() >= give_up)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    pause["at_s"] = to_s(stopped);
    pause["for_s"] = to_s(continued - stopped);
    pause["locks_held_at_pause"] = held_locks;
    // From SIGSTOP until the frozen pod's sessions hold no lock: during the
    // pause only when the server ended them, otherwise after the pod resumed.
    pause["key_blocked_ms"] = freed ? json(to_ms(*freed)) : json(nullptr);
    pause["freed_during_pause"] = freed.has_value() && *freed < continued - stopped;
    faults["pause"] = pause;
  };
  const auto crash_fault = [&] {
    const std::size_t i = static_cast<std::size_t>(s.crash_pod - 1);
    if (!wait_until(*s.crash_at)) return;
    // Wait for a moment when the pod is inside a partner call: it holds its lock or lease.
    int in_partner = 0;
    while (now() < last_chance()) {
      if (const auto j = get_json(url_of(i), "/lockbench/pool", std::chrono::milliseconds(200)))
        if ((in_partner = j->value("in_partner", 0)) > 0) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    std::vector<int> backends;
    if (const auto st = get_json(url_of(i), "/lockbench/stats", std::chrono::seconds(1)))
      backends = st->value("backend_pids", std::vector<int>{});
    std::vector<std::string> owners;
    {
      std::lock_guard lock(flight_mu);
      for (auto id : in_flight[i]) owners.push_back("req-" + std::to_string(id));
    }
    pid_t pid;
    {
      std::lock_guard lock(urls_mu);
      pid = pod_pids[i];
    }
    const std::string pids = pid_array(backends);
    std::string owner_array = "{";
    for (std::size_t k = 0; k < owners.size(); ++k) owner_array += (k ? ",\"" : "\"") + owners[k] + "\"";
    owner_array += "}";
    std::unique_ptr<pqxx::connection> db;
    std::int64_t held_locks = -1;
    json crash = {{"pod", s.crash_pod}, {"in_partner_at_crash", in_partner}, {"crashed_requests", owners.size()}};
    try {
      db = open_session(s.db_url, runner_session_name());
      pqxx::nontransaction tx(*db);
      held_locks = tx.exec_params1(locks_sql, pids)[0].as<std::int64_t>();
    } catch (const std::exception& e) {
      crash["measure_error"] = one_line(e.what());
    }
    children.signal(pid, SIGKILL);
    const Duration killed = now();
    children.reap(pid);
    crash["at_s"] = to_s(killed);
    // What the dead pod keeps from everyone else: its sessions' locks until
    // PostgreSQL notices the closed sockets, its in-flight requests' leases until their TTL.
    if (db) try {
      pqxx::nontransaction tx(*db);
      const auto leases = tx.exec_params1(
          "SELECT count(*), COALESCE(max(EXTRACT(EPOCH FROM (locked_at + $3::interval - now())) * 1000), 0) "
          "FROM lockbench.rows WHERE run = $1 AND locked_at IS NOT NULL AND lock_owner = ANY($2::text[])",
          run_key, owner_array, std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(s.lease_ttl).count()) + " milliseconds");
      Duration freed = Duration::zero(), gone = Duration::zero();
      bool locks_freed = false;
      for (const auto give_up = Clock::now() + std::chrono::seconds(30); Clock::now() < give_up;) {
        if (!locks_freed) {
          locks_freed = tx.exec_params1(locks_sql, pids)[0].as<std::int64_t>() == 0;
          freed = now() - killed;
        }
        const auto alive = tx.exec_params1("SELECT count(*) FROM pg_stat_activity WHERE pid = ANY($1::int[])", pids)[0]
                               .as<std::int64_t>();
        gone = now() - killed;
        if (alive == 0 && locks_freed) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
      auto lease_count = leases[0].as<std::int64_t>();
      double lease_left_ms = std::max(0.0, leases[1].as<double>());
      if (redis) {  // redis-lease, etcd-lease: the dead pod's leases in the store, until their TTL passes
        const KvLeaseStore::Held h = redis->held_by(owners);
        lease_count += h.count;
        lease_left_ms = std::max(lease_left_ms, h.left_ms_max);
      }
      crash["locks_held_at_crash"] = held_locks;
      crash["locks_freed_ms"] = to_ms(freed);
      crash["sessions_closed_ms"] = to_ms(gone);
      crash["leases_held_at_crash"] = lease_count;
      crash["lease_left_ms"] = lease_left_ms;
      crash["key_blocked_ms"] = std::max(held_locks > 0 ? to_ms(freed) : 0.0, lease_count > 0 ? lease_left_ms : 0.0);
    } catch (const std::exception& e) {
      crash["measure_error"] = one_line(e.what());
    }
    if (wait_until(Duration(killed + s.restart_after))) {
      try {
        const Child c = children.start(serve_args(s, run_key, static_cast<int>(i)), serve_env(s), std::chrono::seconds(15));
        {
          std::lock_guard lock(urls_mu);
          urls[i] = c.url;
          pod_pids[i] = c.pid;
        }
        crash["restarted_at_s"] = to_s(now());
      } catch (const std::exception& e) {
        crash["restart_error"] = one_line(e.what());
      }
    }
    faults["crash"] = crash;
    // The same figure the simulator reports: how long the crashed requests' keys stay blocked.
    if (crash.contains("key_blocked_ms")) faults["recovery_ms"] = crash["key_blocked_ms"];
  };
  // The thread that forked a restarted pod must live until the run ends
  // (PR_SET_PDEATHSIG follows the forking thread).
  struct FaultThread {
    std::thread t;
    std::mutex& mu;
    std::condition_variable& cv;
    bool& over;
    void end() {
      {
        std::lock_guard lock(mu);
        over = true;
      }
      cv.notify_all();
      if (t.joinable()) t.join();
    }
    ~FaultThread() { end(); }
  } fault_thread{{}, fault_mu, fault_cv, run_over};
  if (s.pause_at || s.crash_at)
    fault_thread.t = std::thread([&] {
      const bool pause_first = s.pause_at && (!s.crash_at || *s.pause_at <= *s.crash_at);
      if (pause_first) pause_fault();
      if (s.crash_at) crash_fault();
      if (s.pause_at && !pause_first) pause_fault();
      std::unique_lock lock(fault_mu);
      fault_cv.wait(lock, [&] { return run_over; });
    });

  // --- one request over HTTP ---
  const Duration request_timeout = std::chrono::seconds(60) + s.connection_timeout + s.lock_timeout + s.lease_ttl +
                                   s.partner_max_attempts * (s.partner_read_timeout + s.partner_connect_timeout +
                                                             s.retry_backoff_cap);
  // Clients with a request on the wire: a stop past its grace period shuts their sockets.
  std::mutex clients_mu;
  std::set<httplib::Client*> clients;  // GUARDED_BY(clients_mu)
  bool clients_aborted = false;        // GUARDED_BY(clients_mu)
  std::atomic<std::int64_t> sending{0}, sent{0};
  const auto reject = [&](const Request& r, const char* why) {
    const Duration t = now();
    recorder.trace({r.id, "outcome", t, t, -1, why});
    recorder.finish(r.id, Outcome::rejected, r.intended, t, TimeSplit{});
    done_count++;
  };
  const auto send = [&](const Request& r) {
    if (stopping.load()) {  // a stop: what is still queued is not sent (a draining load balancer answers 503)
      reject(r, "rejected: interrupted before it started");
      return;
    }
    const std::size_t pod = r.id % n_pods;
    const std::string url = url_of(pod);
    {
      std::lock_guard lock(flight_mu);
      in_flight[pod].insert(r.id);
    }
    httplib::Client c(url);
    set_timeouts(c, Duration(std::chrono::seconds(2)), request_timeout);
    const httplib::Headers headers = {{"X-Request-Id", std::to_string(r.id)}, {"X-Choice", std::to_string(r.choice)}};
    httplib::Result res{nullptr, httplib::Error::Canceled};
    bool on_wire = false;
    {
      std::lock_guard lock(clients_mu);
      if (!clients_aborted) on_wire = clients.insert(&c).second;
    }
    if (on_wire) {
      ++sending;
      ++sent;
      res = c.Post(op_path(s.scenario, r.key), headers, "", "text/plain");
      std::lock_guard lock(clients_mu);
      clients.erase(&c);
      --sending;
    }
    {
      std::lock_guard lock(flight_mu);
      in_flight[pod].erase(r.id);
    }
    const Duration end = now();
    const Duration total = end - r.intended;
    Outcome o = Outcome::error;
    TimeSplit split{total};
    if (res) {
      o = outcome_of_status(res->status);
      if (res->has_header("X-Lockbench-Split")) split = parse_split(res->get_header_value("X-Lockbench-Split"), total);
    }
    recorder.trace({r.id, "http", r.intended, end, -1,
                    res ? "pod " + std::to_string(r.id % n_pods + 1) + " " + std::to_string(res->status)
                        : "pod " + std::to_string(r.id % n_pods + 1) + " " + httplib::to_string(res.error())});
    recorder.finish(r.id, o, r.intended, end, split);
    done_count++;
    if (o == Outcome::ok) ok_count++;
    const auto end_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(end).count();
    if (o == Outcome::ok && static_cast<int>(pod) != paused_index.load() && pause_from_ns.load() >= 0 &&
        end_ns >= pause_from_ns.load() && (pause_to_ns.load() < 0 || end_ns < pause_to_ns.load()))
      ++ok_elsewhere_during_pause;
  };

  // --- a stop: no new request; those in flight get a grace period, then (process
  // mode) the pods are stopped and the run's sessions ended, and what is still on
  // the wire is cut. The pods' figures are read before they go. ---
  std::atomic<bool> load_over{false};
  std::optional<std::vector<std::optional<json>>> stats_at_stop;  // written by the watch, read after its join
  std::int64_t terminated = 0;                                     // likewise
  const auto read_stats = [&] {
    std::vector<std::optional<json>> out;
    for (std::size_t i = 0; i < n_pods; ++i) out.push_back(get_json(url_of(i), "/lockbench/stats", std::chrono::seconds(10)));
    return out;
  };
  std::thread stop_watch([&] {
    while (!load_over.load() && !stop_requested()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (!stopping.load()) return;
    std::fprintf(stderr, "lockbench: interrupted: no new requests; letting %lld in flight finish\n",
                 static_cast<long long>(sending.load()));
    const Duration grace = std::clamp<Duration>(s.connection_timeout, std::chrono::seconds(2), std::chrono::seconds(10));
    for (const auto until = Clock::now() + grace; sending.load() > 0 && Clock::now() < until;)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (sending.load() == 0) return;
    fault_thread.end();  // no pod restarted from here on
    stats_at_stop = read_stats();
    if (!external) {
      children.kill_all();  // SIGCONT + SIGTERM, then SIGKILL after 3 s: their sockets close
      try {
        auto c = open_session(s.db_url, runner_session_name());
        terminated = terminate_run_backends(*c, "serve-" + std::to_string(run_key));
      } catch (const std::exception& e) {
        std::fprintf(stderr, "lockbench: could not end this run's sessions: %s\n", one_line(e.what()).c_str());
      }
    }
    std::lock_guard lock(clients_mu);
    clients_aborted = true;
    for (auto* c : clients) c->stop();
  });
  struct JoinWatch {
    std::thread& t;
    std::atomic<bool>& over;
    ~JoinWatch() {
      over = true;
      if (t.joinable()) t.join();
    }
  } join_watch{stop_watch, load_over};

  // --- dispatch: open loop at each intended start, a burst at t = 0, or
  // closed-loop virtual users (one thread each: send, wait for the answer, think) ---
  Workload workload(s, scenario->fresh_key_per_request());
  std::int64_t planned = 0, planned_sent = 0;  // the open loop's and the burst's schedule, and how much of it was dispatched
  if (s.arrival == Arrival::closed) {
    std::mutex workload_mu;  // guards workload: the users share it
    std::vector<std::thread> users;
    for (int u = s.shard_index; u < s.users; u += s.shard_count)  // this runner's virtual users
      users.emplace_back([&, u] {
        Duration at = Duration::zero();
        while (at < s.duration) {
          if (!sleep_until_or_stop(at)) break;
          Request r;
          {
            std::lock_guard lock(workload_mu);
            r = workload.next_for_user(u, at);
          }
          send(r);
          std::lock_guard lock(workload_mu);
          at = now() + workload.think(u);
        }
      });
    for (auto& t : users) t.join();
  } else {
    const std::vector<Request> schedule = slice_of(workload.schedule(), s);
    planned = static_cast<std::int64_t>(schedule.size());
    const std::int64_t per_pod_capacity = static_cast<std::int64_t>(s.max_threads) + s.accept_count + 8;
    const int n_senders = static_cast<int>(std::clamp<std::int64_t>(
        std::min<std::int64_t>(per_pod_capacity * static_cast<std::int64_t>(n_pods), static_cast<std::int64_t>(schedule.size())),
        1, 1024));
    Senders senders(n_senders, send);
    for (const Request& r : schedule) {
      if (s.arrival == Arrival::open ? !sleep_until_or_stop(r.intended) : stop_requested()) break;
      senders.push(r);
      ++planned_sent;
    }
    senders.finish();
  }
  load_over = true;
  if (stop_watch.joinable()) stop_watch.join();
  const bool interrupted = stopping.load();
  if (prober) prober->stop();
  sampler.stop();

  // --- the strategy's background work: told that the requests are over, then
  // waited for (each ends by itself once nothing is due, or at its drain limit) ---
  const std::vector<int> not_ended = sharded ? end_of_slice(*marks, s, start_ms, hooks) : std::vector<int>{};
  if (!interrupted && leader && info.make()->background_workers(s) > 0) {
    for (std::size_t i = 0; i < n_pods; ++i) {
      httplib::Client c(url_of(i));
      set_timeouts(c, Duration(std::chrono::seconds(2)), Duration(std::chrono::seconds(10)));
      httplib::Headers control;  // the pods' --control-token, when they were given one (serve.hpp)
      if (const char* token = std::getenv("LOCKBENCH_CONTROL_TOKEN"); token != nullptr && *token != '\0')
        control.emplace("Authorization", std::string("Bearer ") + token);
      c.Post("/lockbench/requests-over", control, "", "text/plain");
    }
    const auto until = Clock::now() + s.outbox_drain_limit + std::chrono::seconds(10);
    for (std::size_t i = 0; i < n_pods; ++i)
      while (Clock::now() < until && !stop_requested()) {
        const auto st = get_json(url_of(i), "/lockbench/stats", std::chrono::seconds(2));
        if (!st || st->value("background_running", 0) == 0) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
  }

  // --- finish: each pod's figures, leaked locks, the service's rows, the oracle ---
  PoolStats pool_stats;
  std::vector<int> backend_pids;
  std::int64_t replaced = 0;
  json per_pod = json::array();
  std::vector<json> effects;
  const std::vector<std::optional<json>> pod_stats = stats_at_stop ? *stats_at_stop : read_stats();
  for (std::size_t i = 0; i < n_pods; ++i) {
    const auto& st = pod_stats[i];
    if (!st) {
      per_pod.push_back({{"url", url_of(i)}, {"stats", nullptr}});
      continue;
    }
    if (st->contains("pool")) {
      const json& p = (*st)["pool"];
      pool_stats.size += p.value("size", 0);
      pool_stats.active_max += p.value("active_max", 0);
      pool_stats.pending_max += p.value("pending_max", 0);
      pool_stats.busy_conn_s += p.value("busy_conn_s", 0.0);
      for (double v : p.value("wait_ms", std::vector<double>{})) pool_stats.wait_ms.add(v);
      for (double v : p.value("hold_ms", std::vector<double>{})) pool_stats.hold_ms.add(v);
      pool_stats.timeouts += p.value("timeouts", std::int64_t{0});
      pool_stats.leaks += p.value("leaks", std::int64_t{0});
      for (const auto& step_name : p.value("leak_steps", std::vector<std::string>{}))
        if (pool_stats.leak_steps.size() < 20) pool_stats.leak_steps.push_back(step_name);
    }
    if (st->contains("locks")) {
      const json& l = (*st)["locks"];
      recorder.locks.acquired += l.value("acquired", std::int64_t{0});
      recorder.locks.denied += l.value("denied", std::int64_t{0});
      recorder.locks.lease_steals += l.value("lease_steals", std::int64_t{0});
      recorder.locks.version_conflicts += l.value("version_conflicts", std::int64_t{0});
      recorder.locks.unlock_failures += l.value("unlock_failures", std::int64_t{0});
      recorder.locks.nothing_locked += l.value("nothing_locked", std::int64_t{0});
      recorder.locks.lease_lost += l.value("lease_lost", std::int64_t{0});
      recorder.locks.renewals += l.value("renewals", std::int64_t{0});
      recorder.locks.renewal_failures += l.value("renewal_failures", std::int64_t{0});
    }
    for (int pid : st->value("backend_pids", std::vector<int>{})) backend_pids.push_back(pid);
    replaced += st->value("connections_replaced", std::int64_t{0});
    if (st->contains("effects")) effects.push_back((*st)["effects"]);
    per_pod.push_back({{"url", url_of(i)}, {"outcomes", st->value("outcomes", json::object())}});
  }
  try {
    auto c = open_session(s.db_url, runner_session_name());
    recorder.locks.leaked = advisory_locks_held_by(*c, backend_pids);
    if (redis) recorder.locks.leaked += redis->held();  // Redis leases never released (their TTL not passed yet)
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lockbench: could not count leaked advisory locks: %s\n", one_line(e.what()).c_str());
  }
  std::vector<StoredRow> stored;
  if (have_rows && leader) {
    try {
      auto c = open_session(s.db_url, runner_session_name());
      stored = stored_rows(*c, run_key, scenario->tables());
      if (!external) drop_rows(*c, run_key);  // the targets' run stays theirs
    } catch (const std::exception& e) {
      std::fprintf(stderr, "lockbench: could not read the service's rows: %s\n", one_line(e.what()).c_str());
    }
  }
  fault_thread.end();
  children.kill_all();
  json partner_json;
  try {
    if (!leader)
      throw std::runtime_error("read once, by shard 0 of " + std::to_string(s.shard_count) +
                               ", after every runner ended (lockbench merge takes them from its result)");
    partner_json = partner_block(partner, have_rows ? std::optional<json>(scenario->service_view(stored)) : std::nullopt);
  } catch (const std::exception& e) {
    // A partner lost mid-run: the result still comes, with no verdict and no count pretending to be 0.
    const std::string reason = leader ? "cannot read the checks from " + redact_secrets(s.partner_url) + ": " + one_line(e.what())
                                      : std::string(e.what());
    if (leader) std::fprintf(stderr, "lockbench: --partner: %s; the oracle's verdict is unavailable\n", reason.c_str());
    partner_json = partner_unavailable(reason);
  }
  if (sharded && leader) with_db_line(s, [&] { marks->clear(); });

  RunSummary summary;
  summary.settings = &configured;
  summary.world = "real";
  summary.strategy = std::string(info.spec);
  summary.interrupted = stopping.load();  // a stop during the background drain counts too
  summary.holds_connection = info.props.holds_connection_during_call;
  summary.partner_calls = scenario->partner_calls();
  summary.recorder = &recorder;
  summary.pool = &pool_stats;
  {
    std::lock_guard lock(probe_mu);
    summary.probe = &probe;
  }
  summary.partner = partner_json;
  summary.postgresql_version = postgresql_version(s.db_url, runner_session_name());
  json pids = json::array();
  for (pid_t p : pod_pids) pids.push_back(static_cast<long>(p));
  summary.extra["real"] = {{"pods", n_pods},
                           {"pod_mode", external ? "targets" : "process"},
                           {"connections_replaced", replaced},
                           {"pod_pids", pids},
                           {"per_pod", per_pod},
                           {"database_check", have_rows},
                           {"requests_not_sent", planned - planned_sent},
                           {"backends_terminated", terminated}};
  if (!effects.empty()) {
    // The pods' side effects (outbox, reconcile, emails, db_faults), summed: make_result's come from the runner's recorder, which has none.
    const json merged = merge_effects(effects);
    for (auto it = merged.begin(); it != merged.end(); ++it) summary.extra[it.key()] = it.value();
  }
  if (s.pause_at && faults.contains("pause"))
    faults["pause"]["ok_on_other_pods_during_pause"] = ok_elsewhere_during_pause.load();
  if (s.pause_at || s.crash_at || s.clock_skew != Duration::zero()) {
    faults["clock_skew_ms"] = to_ms(s.clock_skew);
    faults["skew_pod"] = s.skew_pod;
    summary.extra["faults"] = faults;
  }
  summary.extra["strategy_info"] = strategy_info_json(info);
  if (!external) summary.extra["reclaimed_at_start"] = reclaimed_json(reclaimed);
  if (!sharded) return make_result(summary);
  // The N runners share one run id; each result offers its slice's share of the load.
  summary.run_id = "targets-" + std::to_string(run_key) + "-" + std::to_string(start_ms);
  summary.extra["shard"] = shard_block(s, run_key, start_ms, not_ended);
  json result = make_result(summary);
  result["offered_per_s"] = result["offered_per_s"].get<double>() / s.shard_count;
  return result;
}

}  // namespace lockbench::real
