// lint check 6: Kubernetes probes. A probe's `db` comes from the flags
// (--liveness db=on|off), or, for a Deployment's probe, from its httpGet path
// as Spring Boot's actuator answers it (health_path): /actuator/health is every
// health indicator, the db one included; /actuator/health/liveness is the
// liveness group, livenessState alone unless the file adds db to it.
#include <algorithm>

#include <fmt/format.h>

#include "report/lint.hpp"
#include "report/lint_internal.hpp"

namespace lockbench::report {

namespace probes_detail {

using namespace lint_detail;

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ",") + i;
  return out;
}

bool has(const std::vector<std::string>& items, const std::string& item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

std::string without_trailing_slash(std::string p) {
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

// A group the Spring file defines: db is in it when its include names db or
// "*" and its exclude does not name db.
HealthPath defined_group(const std::string& group, const SpringHealth& h, bool db_on) {
  const auto& include = h.groups.at(group);
  const auto ex = h.groups_exclude.find(group);
  const bool excluded = ex != h.groups_exclude.end() && has(ex->second, "db");
  const bool db = db_on && !excluded && (has(include, "db") || has(include, "*"));
  std::string why = fmt::format("management.endpoint.health.group.{}.include={}", group, joined(include));
  if (excluded) why += fmt::format(", exclude={}", joined(ex->second));
  if (!db_on && (has(include, "db") || has(include, "*"))) why += ", but management.health.db.enabled=false";
  return {true, true, db, why};
}

// liveness and readiness without a group of the file's: Spring's own, or 404.
HealthPath probe_group(const std::string& group, const SpringHealth& h) {
  if (h.probes_enabled == false)
    return {true, false, false,
            fmt::format("management.endpoint.health.probes.enabled=false and no {} group in the file: Spring answers "
                        "404",
                        group)};
  return {true, true, false,
          fmt::format("Spring's {} group holds {}State alone (management.endpoint.health.probes.enabled={})", group,
                      group, h.probes_enabled ? "true" : "not set, on in Kubernetes")};
}

}  // namespace probes_detail

HealthPath health_path(const std::string& raw, const SpringHealth& h) {
  using namespace probes_detail;
  const std::string path = without_trailing_slash(raw.substr(0, raw.find('?')));
  std::string base = without_trailing_slash(h.base_path);
  if (base == "/") base.clear();
  const bool db_on = h.db_enabled.value_or(true);
  if (path == base + "/health")
    return {true, true, db_on,
            db_on ? fmt::format("{} is every health indicator, db included: management.health.db.enabled {}", path,
                                h.db_enabled ? "is true" : "is not set, and Spring's default is true with a DataSource")
                  : fmt::format("{} is every health indicator; management.health.db.enabled=false leaves db out", path)};
  std::string group;
  if (path == "/livez" || path == "/readyz")
    group = path == "/livez" ? "liveness" : "readiness";
  else if (path.rfind(base + "/health/", 0) == 0)
    group = path.substr(base.size() + 8);
  if (group.empty() || group.find('/') != std::string::npos)
    return {false, true, false, fmt::format("{} is not a Spring Boot health path (base path {})", raw, base)};
  if (h.groups.count(group)) return defined_group(group, h, db_on);
  if (group == "liveness" || group == "readiness") return probe_group(group, h);
  if (group == "db")
    return {true, true, db_on, db_on ? "the db indicator alone" : "management.health.db.enabled=false: Spring answers 404"};
  return {true, true, false, fmt::format("the {} indicator alone", group)};
}

namespace probes_detail {

// One probe as check 6 judges it: its spec, where it came from, and what its path checks.
struct JudgedProbe {
  const char* kind;  // "liveness" | "readiness"
  const ProbeSpec& spec;
  const ProbeSource& source;
  HealthPath path;
  std::string evidence;  // the finding's parenthesis
};

JudgedProbe judge(const char* kind, const ProbeSpec& spec, const ProbeSource& source, const SpringHealth& h) {
  JudgedProbe p{kind, spec, source, {true, true, spec.db, ""}, probe_text(spec)};
  if (source.where.empty()) return p;  // the flags say what it checks
  p.path = source.path.empty() ? HealthPath{true, true, false, "not an httpGet probe: taken as not checking the database"}
                               : health_path(source.path, h);
  p.evidence = fmt::format("{}: {}Probe {}every {}, timeout {}, failureThreshold {}; {}", source.where, kind,
                           source.path.empty() ? "" : "httpGet " + source.path + " ", d(spec.period), d(spec.timeout),
                           spec.failure_threshold, p.path.why);
  return p;
}

std::string who_holds(const LintInput& in, const LintReport& r) {
  if (in.strategy.empty()) return "a strategy that may hold";
  return in.strategy + (r.holds_connection ? ", which holds" : ", which does not hold");
}

// The PostHog #46457 shape: the health check waits for a connection longer
// than kubelet waits for the health check. Empty when it does not.
std::string acquire_outlasts_probe(const JudgedProbe& p, const LintInput& in) {
  if (!p.path.db || p.spec.timeout >= in.pool_connection_timeout) return "";
  return fmt::format("the health check waits up to the pool's connectionTimeout {} for a connection, kubelet gives "
                     "up after timeoutSeconds {}: a pod whose pool is only busy fails the probe, and each failed "
                     "check keeps a thread waiting on after it (PostHog #46457: 20 s on pool acquire against a 2 s "
                     "probe timeout, busy pods pulled)",
                     d(in.pool_connection_timeout), d(p.spec.timeout));
}

std::string fix_for(const JudgedProbe& p) {
  if (p.source.where.empty()) return fmt::format("--{} db=off", p.kind);
  if (p.path.why.rfind("management.endpoint.health.group.", 0) == 0)
    return fmt::format("take db out of management.endpoint.health.group.{}.include", p.kind);
  return fmt::format("{}Probe.httpGet.path: /actuator/health/{}", p.kind, p.kind);
}

LintFinding unserved(const JudgedProbe& p) {
  const bool live = std::string(p.kind) == "liveness";
  return {Level::flag, "probes",
          fmt::format("the {} probe's path is not served ({}): every probe fails, so {}. Set "
                      "management.endpoint.health.probes.enabled=true.",
                      p.kind, p.evidence,
                      live ? "kubelet kills every pod, again and again" : "no pod ever becomes ready (503 for all)")};
}

LintFinding unknown_path(const JudgedProbe& p) {
  return {Level::warn, "probes",
          fmt::format("the {} probe's path is not one lint knows ({}): whether it checks the database is not known. "
                      "Spring Boot's are <base>/health (every indicator), <base>/health/liveness and "
                      "<base>/health/readiness (management.endpoint.health.probes.enabled=true).",
                      p.kind, p.evidence)};
}

void check_readiness(const JudgedProbe& p, const LintInput& in, LintReport& r) {
  if (!p.spec.on) return;
  if (!p.path.served) return r.findings.push_back(unserved(p));
  if (!p.path.known) return r.findings.push_back(unknown_path(p));
  const std::string acquire = acquire_outlasts_probe(p, in);
  if (!p.path.db || (!r.holds_connection && acquire.empty())) return;
  std::string text = fmt::format("the readiness probe checks the database ({})", p.evidence);
  if (r.holds_connection)
    text += fmt::format(" with {} a connection through the partner call: a slow partner dries the pool and readiness "
                        "takes the pods out of the load balancer; with none ready, requests get 503",
                        who_holds(in, r));
  if (!acquire.empty()) text += (r.holds_connection ? "; and " : ": ") + acquire;
  text += fmt::format(". Leave db out of readiness (management.endpoint.health.group.readiness.include=readinessState"
                      "{}){}.",
                      p.source.where.empty() ? "; --readiness db=off" : "",
                      acquire.empty() ? "" : ", or let timeoutSeconds reach the connectionTimeout");
  r.findings.push_back({Level::warn, "probes", text});
}

void check_liveness(const JudgedProbe& p, const LintInput& in, LintReport& r) {
  if (!p.spec.on) return;
  if (!p.path.served) return r.findings.push_back(unserved(p));
  if (!p.path.known) return r.findings.push_back(unknown_path(p));
  if (!p.path.db)
    return r.findings.push_back({Level::ok, "probes",
                                 fmt::format("the liveness probe does not check the database ({}): a dry pool or a "
                                             "slow database does not get pods killed.",
                                             p.evidence)});
  const std::string flags_note = p.source.where.empty() ? "; Spring's /actuator/health with the db indicator" : "";
  const std::string acquire = acquire_outlasts_probe(p, in);
  r.findings.push_back(
      {Level::flag, "probes",
       fmt::format("the liveness probe checks the database ({}{}): when the pool has no connection for {} ({} a "
                   "connection through the partner call), {} failures {} apart get the pod killed, its requests lost, "
                   "and the restarted pod, cold, meets the same queue: the restart cascade "
                   "(docs/how-to/probes-and-recovery.md).{} Point liveness at /actuator/health/liveness "
                   "(management.endpoint.health.probes.enabled=true, no db in its group): {}.",
                   p.evidence, flags_note, d(p.spec.timeout), who_holds(in, r), p.spec.failure_threshold,
                   d(p.spec.period), acquire.empty() ? "" : " And " + acquire + ".", fix_for(p))});
}

// No liveness probe given, but the Spring file puts db into the liveness group:
// whatever probe points at /actuator/health/liveness checks the database.
void check_liveness_group(const LintInput& in, LintReport& r) {
  if (!in.health.groups.count("liveness")) return;
  const HealthPath g = defined_group("liveness", in.health, in.health.db_enabled.value_or(true));
  if (!g.db) return;
  r.findings.push_back({Level::flag, "probes",
                        fmt::format("{} puts the database into the liveness group ({}): a liveness probe on "
                                    "/actuator/health/liveness then kills pods for a dry pool, and the restarted "
                                    "pods meet the same queue: the restart cascade. Keep liveness to livenessState.",
                                    in.health.file.empty() ? "the Spring file" : in.health.file, g.why)});
}

}  // namespace probes_detail

void check_probes(const LintInput& in, LintReport& r) {
  using namespace probes_detail;
  check_readiness(judge("readiness", in.readiness, in.readiness_source, in.health), in, r);
  if (in.liveness.on)
    check_liveness(judge("liveness", in.liveness, in.liveness_source, in.health), in, r);
  else
    check_liveness_group(in, r);
}

}  // namespace lockbench::report
