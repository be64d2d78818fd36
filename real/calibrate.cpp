#include "real/calibrate.hpp"

#include <algorithm>
#include <chrono>
#include <future>
#include <sstream>
#include <thread>

#include "base/redact.hpp"
#include "core/result.hpp"
#include "core/scenario.hpp"
#include "fake_partner/model/call.hpp"
#include "real/leftovers.hpp"
#include "real/partner_http.hpp"
#include "real/pg_conn.hpp"
#include "real/pool.hpp"
#include "real/workers.hpp"

namespace lockbench::real {

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kKeys = 64;
constexpr Table kUsers = 0, kOrders = 1;

double ms_between(Clock::time_point t0, Clock::time_point t1) {
  return std::chrono::duration<double, std::milli>(t1 - t0).count();
}

CostFigure figure(std::string name, std::vector<double> samples) {
  CostFigure f;
  f.name = std::move(name);
  f.samples = static_cast<int>(samples.size());
  if (samples.empty()) return f;
  std::sort(samples.begin(), samples.end());
  const auto at = [&](double q) {
    return samples[std::min(samples.size() - 1, static_cast<std::size_t>(q * static_cast<double>(samples.size())))];
  };
  f.p50_ms = at(0.5);
  f.p99_ms = at(0.99);
  double sum = 0;
  for (const double v : samples) sum += v;
  f.mean_ms = sum / static_cast<double>(samples.size());
  return f;
}

// Runs one statement; its milliseconds go to `into`.
template <class F>
void timed(std::vector<double>& into, F&& f) {
  const auto t0 = Clock::now();
  f();
  into.push_back(ms_between(t0, Clock::now()));
}

void measure_statements(Pool& pool, int n, StackCosts& out) {
  std::map<std::string, std::vector<double>> by_kind;
  std::vector<double> all;
  PgConn* c = pool.borrow();
  if (!c) throw DbError("no connection from the calibration pool");
  const std::string owner = "calibrate";
  for (int i = 0; i < n; ++i) {
    const Key k = 1 + i % kKeys;
    timed(by_kind["read"], [&] { return run_sync(c->read(kUsers, k)); });
    timed(by_kind["update"], [&] { return run_sync(c->update(kUsers, k, Row{true, "auth0|u1", {}, 0, 0}, Guard::any())); });
    timed(by_kind["insert"], [&] { return run_sync(c->insert(kOrders, i + 1, Row{true, "PAYMENT_PENDING", {}, 2500, 0})); });
    timed(by_kind["begin"], [&] { run_sync(c->begin()); return 0; });
    timed(by_kind["select for update"], [&] { return run_sync(c->lock_row(kUsers, k, {LockWait::nowait, {}})); });
    timed(by_kind["commit"], [&] { run_sync(c->commit()); return 0; });
    timed(by_kind["lease acquire"], [&] {
      return run_sync(c->lease_acquire(kUsers, k, owner, std::chrono::seconds(30), LeaseClock::database, LeaseSql::owned));
    });
    timed(by_kind["lease release"], [&] { return run_sync(c->lease_release(kUsers, k, owner, LeaseSql::owned)); });
  }
  c->release();
  for (auto& [kind, samples] : by_kind) {
    all.insert(all.end(), samples.begin(), samples.end());
    out.statements.push_back(figure(kind, samples));
  }
  out.statement = figure("statement", all);
}

void measure_partner(const Settings& s, int n, StackCosts& out) {
  PartnerHttp partner(s.partner_url, s.partner_connect_timeout, s.partner_read_timeout);
  nlohmann::json faults = {{"*", nullptr}};
  for (const auto e : partner::kEndpoints) faults[std::string(partner::endpoint_name(e))] = nullptr;
  partner.reset({{"seed", 1}, {"person_range", {{"count", 1}, {"identities", 2}}}, {"orders", nlohmann::json::array()}});
  partner.configure({{"latency", {{"*", {{"dist", "fixed"}, {"ms", 0}}}}}, {"faults", faults}, {"fencing", "ignore"}});
  const PartnerCall get = PartnerCall::to(PartnerCall::Kind::get_user, "auth0|u1");
  std::vector<double> samples;
  partner.attempt(get);  // the keep-alive connection is opened outside the measurement
  for (int i = 0; i < n; ++i) {
    const auto t0 = Clock::now();
    const PartnerReply r = partner.attempt(get);
    samples.push_back(ms_between(t0, Clock::now()));
    if (r.status != 200) throw SettingError("--partner: a calibration call answered " + std::to_string(r.status));
  }
  out.partner_call = figure("partner call at 0 ms", samples);
}

void measure_pool_handoff(Pool& pool, int n, StackCosts& out) {
  std::vector<double> samples;
  for (int i = 0; i < n; ++i) {
    PgConn* held = pool.borrow();  // the pool has one connection: the waiter must wait for this one
    if (!held) throw DbError("no connection from the calibration pool");
    std::promise<Clock::time_point> got;
    std::thread waiter([&] {
      PgConn* c = pool.borrow();
      got.set_value(Clock::now());
      if (c) c->release();
    });
    while (pool.sample().pending < 1) std::this_thread::sleep_for(std::chrono::microseconds(50));
    const auto given = Clock::now();
    held->release();
    samples.push_back(ms_between(given, got.get_future().get()));
    waiter.join();
  }
  out.pool_handoff = figure("pool hand-off", samples);
}

void measure_worker_handoff(int n, StackCosts& out) {
  WorkerPool workers(4, 16);
  std::vector<double> samples;
  for (int i = 0; i < n; ++i) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));  // the workers are asleep, as between requests
    std::promise<Clock::time_point> started;
    const auto submitted = Clock::now();
    if (!workers.submit([&] { started.set_value(Clock::now()); })) throw DbError("the calibration worker refused a job");
    samples.push_back(ms_between(submitted, started.get_future().get()));
  }
  workers.wait_idle();
  out.worker_handoff = figure("worker hand-off", samples);
}

// As the settings parser reads it back: std::ostream's 4 digits wrote 15.89 ms
// as "1.589e+04us", which --db-latency refuses.
std::string duration_text(double ms) { return format_duration(from_ms(std::max(ms, 0.001))); }

}  // namespace

StackCosts measure_stack(const Settings& s, int repetitions) {
  if (s.db_url.empty() || s.partner_url.empty())
    throw SettingError("--db and --partner: calibration measures the real stack; give both");
  const std::string run_id = new_run_id();
  const std::int64_t run = -static_cast<std::int64_t>(std::hash<std::string>{}(run_id) >> 2) - 1;  // apart from runs
  const std::string shown = redact_secrets(s.db_url);
  StackCosts out;
  try {
    auto admin = open_session(s.db_url, application_name(run_id, "calibrate"));
    create_schema(*admin);
    seed_rows(*admin, run, {{"users", true, TableSpec::Seed{"auth0|u", 0}}, {"orders", true, std::nullopt}}, kKeys);
  } catch (const SchemaNotOurs& e) {
    throw SettingError("--db: " + std::string(e.what()));
  } catch (const std::exception& e) {
    throw SettingError("--db: cannot prepare calibration rows at " + shown + ": " + e.what());
  }
  struct Cleanup {
    std::string url, name;
    std::int64_t run;
    ~Cleanup() {
      try {
        auto c = open_session(url, name);
        drop_rows(*c, run);
      } catch (const std::exception&) {
      }
    }
  } cleanup{s.db_url, application_name(run_id, "calibrate"), run};
  try {
    PoolConfig cfg;
    cfg.url = s.db_url;
    cfg.maximum_pool_size = 1;
    cfg.connection_timeout = std::chrono::seconds(10);
    cfg.run = run;
    cfg.application_name = application_name(run_id, "pod1");
    Pool pool(cfg, Clock::now());
    measure_statements(pool, repetitions, out);
    measure_pool_handoff(pool, repetitions / 2, out);
  } catch (const SettingError&) {
    throw;
  } catch (const std::exception& e) {
    throw SettingError("--db: calibration failed at " + shown + ": " + e.what());
  }
  try {
    measure_partner(s, repetitions, out);
  } catch (const SettingError&) {
    throw;
  } catch (const std::exception& e) {
    throw SettingError("--partner: calibration failed at " + redact_secrets(s.partner_url) + ": " + e.what());
  }
  measure_worker_handoff(repetitions, out);
  return out;
}

std::string calibration_toml(const StackCosts& c, const std::string& where) {
  std::ostringstream t;
  t << "# Measured by `lockbench calibrate` (" << where << ").\n"
    << "# The simulator reads these as --config: the real stack's own costs, so that both worlds\n"
    << "# model the same machine. Medians (p99 beside), " << c.statement.samples << " statements.\n#\n"
    << "# statement kind        p50 ms   p99 ms\n";
  for (const auto& f : c.statements) {
    char line[96];
    std::snprintf(line, sizeof line, "#   %-20s %7.3f  %7.3f\n", f.name.c_str(), f.p50_ms, f.p99_ms);
    t << line;
  }
  char line[160];
  std::snprintf(line, sizeof line, "# partner call at 0 ms  %7.3f  %7.3f (HTTP over loopback)\n", c.partner_call.p50_ms,
                c.partner_call.p99_ms);
  t << line;
  std::snprintf(line, sizeof line, "# pool hand-off         %7.3f  %7.3f\n", c.pool_handoff.p50_ms, c.pool_handoff.p99_ms);
  t << line;
  std::snprintf(line, sizeof line, "# worker hand-off       %7.3f  %7.3f\n", c.worker_handoff.p50_ms,
                c.worker_handoff.p99_ms);
  t << line;
  // A lognormal through the measured p50 and p99 keeps the statements' tail.
  const double p50 = std::max(c.statement.p50_ms, 0.001);
  const double p99 = std::max(c.statement.p99_ms, p50 * 1.01);
  t << "db-latency = \"lognormal:p50=" << duration_text(p50) << ",p99=" << duration_text(p99) << "\"\n"
    << "partner-overhead = \"" << duration_text(c.partner_call.p50_ms) << "\"\n"
    << "pool-handoff = \"" << duration_text(c.pool_handoff.p50_ms) << "\"\n"
    << "worker-handoff = \"" << duration_text(c.worker_handoff.p50_ms) << "\"\n";
  return t.str();
}

void apply_stack_costs(Settings& s, const StackCosts& c, double factor) {
  const double p50 = c.statement.p50_ms * factor;
  s.db_latency = Distribution::lognormal(p50, std::max(c.statement.p99_ms * factor, p50 * 1.01));
  s.partner_overhead = from_ms(c.partner_call.p50_ms * factor);
  s.pool_handoff = from_ms(c.pool_handoff.p50_ms * factor);
  s.worker_handoff = from_ms(c.worker_handoff.p50_ms * factor);
}

}  // namespace lockbench::real
