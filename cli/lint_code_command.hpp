// `lockbench lint --code DIR`: the thin edge between the command line and
// lint_code/ (the Java reader and its findings). Here each finding gets its
// consequence from the simulator, the same run_sim `lockbench run --world sim`
// calls, at the service's settings (--from application.yml, --rate, ...), and
// the `lockbench run` line that reproduces it.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>

#include "core/settings.hpp"

namespace lockbench::cli {

struct LintCodeOptions {
  std::string dir;
  int depth = 4;                 // --code-depth
  std::string format = "text";   // text | json | sarif
  std::string fail_on = "flag";  // --fail-on: flag | warn | never
  bool simulate = false;         // --from or a load flag was given: each finding gets the simulator's figure
  bool keys_given = false;       // --keys (flag, --config or --from): orm-lease's shape keeps it
  bool duration_given = false;   // --duration: likewise
};

// lint --prometheus FILE: one scrape, read as `plan --prometheus` reads it
// (plan/prometheus_input.hpp, the same refusals): the partner latency, the
// pool, and the open-loop rate (this pod's mean since it started, x --pods).
// A setting whose flag was given (flag_given("rate"), ...) keeps the flag's
// value. What was read is said in one line on `note`, when given.
void apply_prometheus_scrape(Settings& s, const std::string& path, const std::function<bool(const std::string&)>& flag_given,
                             std::ostream* note);

// Prints the findings to stdout; returns the exit code (1 when a finding at
// or above --fail-on's level is there). Throws SettingError (exit 2) for a bad
// option, a DIR that is not a directory, or a build without the Java grammar.
int cmd_lint_code(const Settings& s, const LintCodeOptions& o);

}  // namespace lockbench::cli
