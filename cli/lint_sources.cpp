#include "cli/lint_sources.hpp"

#include <fmt/format.h>

#include "cli/k8s_deployment.hpp"
#include "core/printable.hpp"
#include "settings/table.hpp"
#include "cli/spring_config.hpp"

namespace lockbench::cli {

namespace {

void merge_health(report::SpringHealth& into, const report::SpringHealth& h) {
  if (h.probes_enabled) into.probes_enabled = h.probes_enabled;
  if (h.db_enabled) into.db_enabled = h.db_enabled;
  for (const auto& [g, items] : h.groups) into.groups[g] = items;
  for (const auto& [g, items] : h.groups_exclude) into.groups_exclude[g] = items;
  if (h.base_path != report::SpringHealth{}.base_path) into.base_path = h.base_path;
  into.file = into.file.empty() ? h.file : into.file + ", " + h.file;
}

void read_spring(Settings& s, const std::string& file, LintSources& out, std::ostream& err, bool verbose) {
  const SpringConfig spring = apply_spring_config(s, file);
  merge_health(out.health, spring.health);
  for (const auto& note : spring.notes) err << printable("lint: from " + file + ": " + note) << "\n";
  if (spring.ignored.empty() || !verbose) return;
  std::string line = "lint: from " + file + ": " + std::to_string(spring.applied.size()) + " settings read; not read: ";
  for (std::size_t i = 0; i < spring.ignored.size(); ++i) line += (i ? ", " : "") + spring.ignored[i];
  err << printable(line) << "\n";
}

std::string probe_line(const char* kind, const std::optional<K8sProbe>& p) {
  if (!p) return fmt::format("no {}Probe", kind);
  return fmt::format("{}Probe {} {}", kind, p->path.empty() ? "(not httpGet)" : "httpGet " + p->path,
                     probe_text(p->spec).substr(0, probe_text(p->spec).rfind(",db=")));
}

// The chosen container's probes become --readiness / --liveness, its
// Deployment's replicas --pods.
void apply_container(Settings& s, const ChosenContainer& c, const std::string& files, LintSources& out) {
  try {
    apply_setting(s, "pods", std::to_string(c.deployment->replicas));
  } catch (const SettingError& e) {
    throw SettingError(fmt::format("--from: {}: Deployment {}, spec.replicas {} (for {})", files, c.deployment->name,
                                   c.deployment->replicas, e.what()));
  }
  const auto take = [&](const std::optional<K8sProbe>& p, ProbeSpec& spec, report::ProbeSource& source) {
    if (!p) return;
    spec = p->spec;
    source = {c.where(), p->path};
  };
  take(c.container->readiness, s.readiness, out.readiness);
  take(c.container->liveness, s.liveness, out.liveness);
}

}  // namespace

LintSources read_lint_sources(Settings& s, const std::vector<std::string>& files, const std::string& deployment,
                              std::ostream& err, bool verbose) {
  LintSources out;
  std::vector<K8sDeployment> deployments;
  std::string manifests;
  for (const auto& file : files) {
    if (!is_kubernetes_yaml(file)) {
      read_spring(s, file, out, err, verbose);
      continue;
    }
    auto more = read_deployments(file);
    deployments.insert(deployments.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
    manifests += (manifests.empty() ? "'" : ", '") + file + "'";
  }
  if (deployments.empty()) {
    if (!deployment.empty()) throw SettingError("--deployment: needs a Kubernetes manifest given with --from");
    return out;
  }
  const ChosenContainer chosen = choose_container(deployments, deployment, manifests);
  apply_container(s, chosen, manifests, out);
  if (verbose)
    err << printable("lint: from " + manifests + ": " + chosen.where() + ": replicas " +
                     std::to_string(chosen.deployment->replicas) + " (--pods); " +
                     probe_line("readiness", chosen.container->readiness) + "; " +
                     probe_line("liveness", chosen.container->liveness) + "; " +
                     probe_line("startup", chosen.container->startup))
        << "\n";
  return out;
}

}  // namespace lockbench::cli
