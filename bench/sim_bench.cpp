// sim_bench: how fast the simulator replays the seeds' incident.
//
//   incident  pool 10, 200 workers (accept 100), switch-primary, partner
//             lognormal p50 1.5 s / p99 4 s, 20 requests/s offered (Poisson),
//             1 hour of virtual time, seed 1; once per default strategy.
//
// Prints, per strategy: wall time, events run, events per second, and the run's
// own outcome counts (so a regression in speed is seen beside what was simulated).
// Usage: sim_bench [--duration 1h] [--seed N] [--json]
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "core/run.hpp"
#include "strategies/registry.hpp"
#include "core/units.hpp"

using namespace lockbench;

int main(int argc, char** argv) {
  Settings s;
  s.scenario = "switch-primary";
  s.maximum_pool_size = 10;
  s.max_threads = 200;
  s.accept_count = 100;
  s.partner_latency = Distribution::lognormal(1500, 4000);
  s.rate_per_s = 20;
  s.duration = std::chrono::hours(1);
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--duration") && i + 1 < argc) s.duration = parse_duration(argv[++i], "--duration");
    else if (!std::strcmp(argv[i], "--seed") && i + 1 < argc) s.seed = std::stoull(argv[++i]);
    else if (!std::strcmp(argv[i], "--json")) json = true;
    else {
      std::fprintf(stderr, "usage: sim_bench [--duration 1h] [--seed N] [--json]\n");
      return 2;
    }
  }
  std::printf("incident: pool 10, 200 workers, partner lognormal p50 1.5s p99 4s, 20/s, %s virtual, seed %llu\n",
              format_duration(s.duration).c_str(), static_cast<unsigned long long>(s.seed));
  std::printf("%-26s %9s %11s %12s %8s %7s %9s %9s %10s\n", "strategy", "wall_ms", "events", "events/s", "requests",
              "ok", "timeouts", "rejected", "violations");
  double wall_total_ms = 0;
  std::uint64_t events_total = 0;
  for (const auto& spec : all_strategies()) {
    s.strategy = spec;
    const auto t0 = std::chrono::steady_clock::now();
    const nlohmann::json r = run_sim(s);
    const double wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const auto events = r["sim"]["events"].get<std::uint64_t>();
    std::int64_t violations = 0;
    for (const char* k : {"overlap_person", "flow_interleaving", "person_split", "lost_promotion"})
      violations += r["partner"]["violations"].value(k, 0);
    wall_total_ms += wall_ms;
    events_total += events;
    std::printf("%-26s %9.1f %11llu %12.0f %8lld %7lld %9lld %9lld %10lld\n", r["strategy"].get<std::string>().c_str(),
                wall_ms, static_cast<unsigned long long>(events), events / (wall_ms / 1000),
                static_cast<long long>(r["requests"]["total"].get<std::int64_t>()),
                static_cast<long long>(r["requests"]["ok"].get<std::int64_t>()),
                static_cast<long long>(r["requests"]["pool_timeout"].get<std::int64_t>()),
                static_cast<long long>(r["requests"]["rejected"].get<std::int64_t>()), static_cast<long long>(violations));
    if (json) std::printf("%s\n", r.dump().c_str());
  }
  std::printf("%-26s %9.1f %11llu %12.0f\n", "total", wall_total_ms, static_cast<unsigned long long>(events_total),
              events_total / (wall_total_ms / 1000));
  return 0;
}
