// The real stack's own costs, measured so that the simulator can model the
// machine it is compared with (`lockbench calibrate`, `lockbench validate`).
//
//   statements      each kind of SQL statement the world sends, through a real
//                   pooled connection on this run's own rows (lockbench.rows)
//   partner call    one HTTP call to the partner at 0 ms of partner latency:
//                   what the client and the loopback add to the partner's delay
//   pool hand-off   a connection given back to a thread already waiting for it:
//                   give_back() to the waiter's wake-up
//   worker hand-off a request submitted to an idle worker thread: submit() to
//                   the job's start
// Each figure is the median of many repetitions (the 99th percentile beside
// it), measured one at a time on an otherwise idle client.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/settings.hpp"

namespace lockbench::real {

struct CostFigure {
  std::string name;
  double p50_ms = 0;
  double p99_ms = 0;
  double mean_ms = 0;
  int samples = 0;
};

struct StackCosts {
  std::vector<CostFigure> statements;  // one per statement kind
  CostFigure statement;                // every statement sample together: the simulator's db-latency
  CostFigure partner_call;             // at 0 ms of partner latency
  CostFigure pool_handoff;
  CostFigure worker_handoff;
};

// Needs s.db_url and s.partner_url. Resets and reconfigures the partner (0 ms,
// no faults) and leaves it so; keeps to its own run's rows, deleted at the end.
// Throws SettingError naming --db or --partner when a server cannot be used.
StackCosts measure_stack(const Settings& s, int repetitions = 400);

// The simulator's settings for the stack `c` describes (what calibrate
// writes): db-latency as a lognormal with the measured p50 and p99,
// partner-overhead, pool-handoff, worker-handoff, each times `factor` (1/F to
// express them in the time of a run at time scale F).
void apply_stack_costs(Settings& s, const StackCosts& c, double factor = 1);

// The settings file the simulator reads (--config): db-latency as a lognormal
// with the measured p50 and p99, partner-overhead, pool-handoff,
// worker-handoff, each with a comment saying what was measured and where.
std::string calibration_toml(const StackCosts& c, const std::string& where);

}  // namespace lockbench::real
