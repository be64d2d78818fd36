// run_real: the real world's entry (real/run_real.hpp): the settings a real run
// refuses, then a RealRun of the right kind (real/real_run.hpp).
#include "real/real_run.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <thread>

#include "base/redact.hpp"
#include "real/faults.hpp"
#include "real/leftovers.hpp"
#include "real/partner_http.hpp"
#include "real/run_real.hpp"
#include "scenarios/registry.hpp"
#include "settings/table.hpp"

namespace lockbench {

namespace {

void refuse_before_any_run(const Settings& c) {
  validate_settings(c);
  real::refuse_without_own_pods(c);
  if (c.pgbouncer != "none" && real::pods_over_http(c))
    throw SettingError("--pgbouncer: starts a PgBouncer for --pod-mode thread runs only (for process pods or --targets, "
                       "run PgBouncer yourself and point the pods' --db at it)");
  if (c.shard_count > 1 && c.targets.empty())
    throw SettingError("--shard: a real run's shards need --targets (the runners share the services under test)");
  if (!real::pods_over_http(c)) real::refuse_faults_in_threads(c);  // faults are done by process pods only
  if (c.db_url.empty())
    throw SettingError("--db: the real world needs a PostgreSQL URL (e.g. postgresql://postgres@127.0.0.1:5432/postgres)");
  if (c.partner_url.empty())
    throw SettingError("--partner: the real world needs the fake partner's URL (e.g. http://127.0.0.1:8080)");
  if (!real::pods_over_http(c)) return;
  if (c.arrival == Arrival::closed && c.users > 1024)
    throw SettingError("--users: at most 1024 virtual users with pods over HTTP (one sending thread each)");
  real::check_fault_pods(c);
}

}  // namespace

nlohmann::json run_real(const Settings& configured, const RunHooks& hooks) {
  refuse_before_any_run(configured);
  const auto run = real::pods_over_http(configured) ? real::make_process_pods_run(configured, hooks)
                                                    : real::make_thread_pods_run(configured, hooks);
  return run->run();
}

}  // namespace lockbench

namespace lockbench::real {

namespace {
Settings real_settings(const Settings& configured) {
  Settings s = configured.scaled();
  s.world = "real";
  return s;
}
}  // namespace

bool pods_over_http(const Settings& s) { return s.pod_mode == "process" || !s.targets.empty(); }

RealRun::RealRun(const Settings& configured, const RunHooks& hooks)
    : configured_(configured),
      hooks_(hooks),
      s_(real_settings(configured)),
      info_(applying_strategy(s_.strategy, s_.scenario)),
      strategy_(make_strategy(info_.spec)),  // with the traffic beside its lock
      scenario_(make_scenario(s_.scenario)),
      recorder_(std::clamp<Duration>(s_.duration / 40, kSampleEvery, std::chrono::seconds(1))) {}

RealRun::~RealRun() { stop_tickers(); }

nlohmann::json RealRun::run() {
  prepare();
  start_background();
  dispatch();
  drain();
  nlohmann::json result = finish();
  const RunRecord* record = record_watch_.load();
  if (record_lost_.load() || (record != nullptr && record->lost()))
    throw std::runtime_error(
        "this run's record in lockbench.runs (run " + std::to_string(record ? record->run() : 0) +
        ") was deleted while it ran: another runner took it for gone and reclaimed its rows, or it was deleted by "
        "hand. Its rows and its partner checks cannot be trusted: the run stopped at " +
        std::to_string(std::chrono::duration_cast<std::chrono::seconds>(now()).count()) +
        " s and its result is not written");
  return result;
}

bool RealRun::stop_requested() {
  if (!stopping_.load() && hooks_.should_stop && hooks_.should_stop()) stopping_ = true;
  if (const RunRecord* record = record_watch_.load(); !stopping_.load() && record != nullptr && record->lost()) {
    record_lost_ = true;
    stopping_ = true;
  }
  return stopping_.load();
}

bool RealRun::sleep_until_or_stop(Duration t) {
  for (;;) {
    if (stop_requested()) return false;
    const auto deadline = epoch_ + t;
    const auto now_tp = Clock::now();
    if (now_tp >= deadline) return true;
    std::this_thread::sleep_until(std::min(deadline, now_tp + kSampleEvery));
  }
}

Duration RealRun::grace() const {
  return std::clamp<Duration>(s_.connection_timeout, std::chrono::seconds(2), std::chrono::seconds(10));
}

void RealRun::start_sampler(Duration every, std::function<PoolSample()> sample) {
  sampler_.emplace(every, [this, sample = std::move(sample)] {
    const PoolSample total = sample();
    recorder_.pool_sample(total);
    if (hooks_.progress && total.t - last_progress_ >= std::chrono::milliseconds(250)) {
      last_progress_ = total.t;
      hooks_.progress(done_.load(), ok_.load(), total.t);
    }
  });
}

// One prober per pod, on a fixed period from one period in (the simulator's
// counting probe, sim/pod.cpp): a probe that takes its timeout does not
// stretch the period, and a slow pod does not delay the others' probes.
void RealRun::start_prober(std::size_t pods, std::function<bool(std::size_t)> probe) {
  if (s_.probe_interval <= Duration::zero()) return;
  auto shared = std::make_shared<std::function<bool(std::size_t)>>(std::move(probe));
  for (std::size_t i = 0; i < pods; ++i)
    probers_.push_back(std::make_unique<Ticker>(s_.probe_interval, [this, i, shared] {
      const bool ok = (*shared)(i);
      std::lock_guard lock(probe_mu_);
      ++probe_.total;
      if (!ok) ++probe_.failed;
    }, s_.probe_interval));
}

void RealRun::stop_tickers() {
  for (auto& p : probers_) p->stop();
  if (sampler_) sampler_->stop();
}

void RealRun::set_probe_counts(const ProbeStats& counts) {
  std::lock_guard lock(probe_mu_);
  probe_ = counts;
}

void RealRun::reject(const Request& r, const char* why) {
  const Duration t = now();
  recorder_.trace({r.id, "outcome", t, t, -1, why});
  recorder_.finish(r.id, Outcome::rejected, r.intended, t, TimeSplit{});
  finished(Outcome::rejected);
}

void RealRun::finished(Outcome o) {
  ++done_;
  if (o == Outcome::ok) ++ok_;
}

nlohmann::json RealRun::partner_result(PartnerHttp& partner, const std::optional<nlohmann::json>& service) {
  try {
    return partner_block(partner, service);
  } catch (const std::exception& e) {
    // A partner lost mid-run: the result still comes, with no verdict and no count pretending to be 0.
    const std::string reason = "cannot read the checks from " + redact_secrets(s_.partner_url) + ": " + one_line(e.what());
    std::fprintf(stderr, "lockbench: --partner: %s; the oracle's verdict is unavailable\n", reason.c_str());
    return partner_unavailable(reason);
  }
}

RunSummary RealRun::summary(const PoolStats& pool, const nlohmann::json& partner) {
  RunSummary run;
  run.settings = &configured_;
  run.settings_json = settings_json(configured_);
  run.world = "real";
  run.strategy = std::string(info_.spec);
  run.interrupted = stopping();
  run.holds_connection = info_.props.holds_connection_during_call;
  run.partner_calls = scenario_->partner_calls();
  run.recorder = &recorder_;
  run.pool = &pool;
  {
    std::lock_guard lock(probe_mu_);  // the prober is stopped: probe_ holds still
    run.probe = &probe_;
  }
  run.partner = partner;
  run.extra["strategy_info"] = strategy_info_json(info_);
  return run;
}

}  // namespace lockbench::real
