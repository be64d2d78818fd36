// `lockbench plan`: the settings a design review should choose, per strategy,
// on paper (plan/paper) and confirmed in the simulator (plan/confirm), with
// the `lockbench run` line of every run. Inputs, later ones winning: --preset,
// --config, --from (Spring config, as lint reads it), --prometheus (one
// scrape, plan/prometheus_input), the flags. The candidates: --strategy when
// given as a flag, else every strategy of --strategy all that applies to the
// scenario; a strategy named by the files is the service's current one (the
// diff's "before"). Targets: --fail-on (a point fails when a threshold holds,
// as for run) and --recovery-max. The simulator's runs last 2 minutes unless
// --duration (or a file) says otherwise. --margin plans for a higher rate than
// given. --world real (with --db, --partner, usually --time-scale) measures the
// real stack's costs first, plans for them, and runs each strategy the
// simulator confirmed once in the real world at the given rate: a strategy is
// recommended only when that run meets the targets too. --max-connections
// (the settings' flag, as lint reads it) bounds pods x pool; with --world real
// the server's own limits are read when it is not given.
// Fewest changes: the service's current pool (HikariCP's 10 when nothing sets
// it), Tomcat threads, connectionTimeout, read timeout and lease TTL are floors
// the plan never goes below (--minimize: no floors; --max-connections lowers
// the pool's, saying so). Every recommended point runs --horizon (24 h) over
// every seed, on seeds the search never used; exclusion is always a target for
// a strategy that needs one, whatever --fail-on says, and the ambiguous
// outcomes of read timeouts are counted apart from it (--ambiguous-max).
// Exit 0: a strategy meets the targets; 1: none does (the closest point is
// named); 2: bad input, one line.
#pragma once

#include <functional>
#include <string>

#include <CLI/CLI.hpp>

#include "core/settings.hpp"

namespace lockbench::cli {

struct PlanOptions {
  std::string from;        // Spring application.properties / .yml
  std::string prometheus;  // one scrape (text exposition)
  std::string fail_on = "violations>0,pool_timeouts>0,probe_failures>0,lease_steals>0,rejected>0,p99>10s";
  std::string recovery_max;  // a duration; empty = no recovery target
  std::string seeds = "3";
  std::string format = "text";  // text | json
  std::string svg;              // the safe-envelope chart
  std::string html;             // plan.html: everything on one page, the envelope inline
  std::string jobs;             // parallel simulator runs (default: the cores)
  std::string margin;           // plan for the rate plus this share ("25%"); empty = none
  std::string horizon = "24h";  // every recommended point (and its headroom) runs this long, over every seed
  std::string ambiguous_max;    // calls given up on while the partner may apply them, per day; empty = reported only
  bool minimize = false;        // the smallest settings, not the fewest changes from the current ones
};

// plan's own flags (the settings' flags are added by the caller, as for run).
void add_plan_flags(CLI::App& plan, PlanOptions& options);

// `settings_before_flags`: the preset and --config applied (nothing else);
// `apply_flags`: applies the setting flags given on the command line;
// `flag_given(name)`: whether --name was given.
int cmd_plan(Settings settings_before_flags, const std::function<void(Settings&)>& apply_flags,
             const std::function<bool(const std::string&)>& flag_given, const PlanOptions& options);

}  // namespace lockbench::cli
