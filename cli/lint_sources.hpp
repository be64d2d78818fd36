// What `lockbench lint --from FILE` reads, one file or several (--from is
// repeated): Spring Boot application.properties/.yml files (cli/spring_config)
// and Kubernetes manifests (cli/k8s_deployment, a file with a Deployment among
// its documents). Settings go into `s` (a later file wins, flags win over all);
// what decides a probe's database check is kept for lint's check 6.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "core/settings.hpp"
#include "report/lint.hpp"

namespace lockbench::cli {

struct LintSources {
  report::SpringHealth health;        // every Spring file's management.* keys, a later file's winning
  report::ProbeSource readiness, liveness;  // the Deployment's probes (empty: none, or the flags')
};

// Reads `files` into `s`. `deployment` picks a container when a manifest has
// several with probes ("DEPLOYMENT" or "DEPLOYMENT/CONTAINER"). What was read
// and not read goes to `err`, one line per file, when `verbose`. Throws
// SettingError (one line, exit 2) for an unreadable file or a bad value.
LintSources read_lint_sources(Settings& s, const std::vector<std::string>& files, const std::string& deployment,
                              std::ostream& err, bool verbose);

}  // namespace lockbench::cli
