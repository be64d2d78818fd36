// What `lockbench plan` prints: the verdict table, each strategy's arithmetic
// and evidence (the `lockbench run` lines), the recommendation, and with
// --from the changes as a properties diff in the file's own keys; or all of it
// as one JSON document (--format json).
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/settings.hpp"
#include "plan/confirm.hpp"
#include "plan/paper.hpp"

namespace lockbench::plan {

struct PlanResult {
  Settings base;              // the service as given (its current settings)
  std::string current;        // the strategy the service uses ("" = not known)
  std::string fail_on;        // the targets, as --fail-on text
  double recovery_ms_max = 0; // 0 = no recovery target
  int seeds = 1;
  std::vector<PaperVerdict> paper;
  std::vector<Confirmed> confirmed;  // same order as paper
  std::vector<std::string> inputs;   // where the numbers came from, one line each
  double margin = 0;                 // --margin: planned for rate x (1 + margin)
  double given_rate_per_s = 0;       // the rate before the margin
  double elapsed_s = 0;
  Duration horizon{};                // --horizon (0 = none)
  double ambiguous_per_day_max = -1; // --ambiguous-max (-1 = reported only)
  bool minimize = false;             // --minimize: no floors
  std::vector<int> paper_pool;       // the paper's pool per strategy (floors applied), before the runs
};

// A strategy meets the targets: in the simulator, and in the real world when
// the plan confirmed it there (plan --world real).
bool meets(const Confirmed& c);
bool confirmed_in_real_world(const PlanResult& p);

// The recommended strategy's index: meets the targets (above), the highest
// headroom, then the service's current strategy, then registry order; -1 when none is.
int recommended(const PlanResult& p);
// When none is feasible: the point that broke the fewest targets (its index).
int closest(const PlanResult& p);

// The diff of the file's settings to the recommendation, one "-key=old" /
// "+key=new" pair per changed setting; `key_of` names the file's keys
// (cli/spring_config), Spring's usual keys otherwise.
std::string properties_diff(const PlanResult& p, int index, const std::map<std::string, std::string>& key_of,
                            const std::string& from);

// One changed setting: the Spring key (the file's own when it has it) and the values in the file's units.
struct ConfigChange {
  std::string key;     // dotted, e.g. spring.datasource.hikari.maximum-pool-size
  std::string before;  // "" = the file does not set it
  std::string after;
};
// The settings that change for strategy `index`: only real Spring, HikariCP,
// Tomcat, Feign and resilience4j keys. A strategy change, and a lease TTL
// (the strategy's code), are not configuration: `notes` gets one line each,
// naming `lockbench explain STRATEGY`.
std::vector<ConfigChange> config_changes(const PlanResult& p, int index, const std::map<std::string, std::string>& key_of,
                                         std::vector<std::string>& notes);
// The recommendation as a unified diff of the file itself, in its own format
// (`from` ending in .yml/.yaml: YAML, values replaced in place, keys the file
// lacks added under their deepest existing parent; else properties), the
// notes as comments; `patch -p0` applies it to `text`, the file's contents.
std::string config_diff(const PlanResult& p, int index, const std::map<std::string, std::string>& key_of,
                        const std::string& from, const std::string& text);
// The file's text with the changes made (what config_diff's patch gives).
std::string apply_changes(const std::string& text, bool yaml, const std::vector<ConfigChange>& changes,
                          const std::vector<std::string>& notes);

std::string render_text(const PlanResult& p);
nlohmann::json render_json(const PlanResult& p);
// plan.html: one page a review can attach, self-contained: the verdict table,
// the recommendation and its diff, the safe envelope (`svg`, inline; "" = none,
// `svg_missing` says why), and per strategy the arithmetic and the run lines.
std::string render_html(const PlanResult& p, const std::string& diff, const std::string& svg,
                        const std::string& svg_missing);

// 0: a strategy meets the targets; 1: none does (the answer names the closest point).
int exit_code(const PlanResult& p);

}  // namespace lockbench::plan
