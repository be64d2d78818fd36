// lint --from's readers: a Kubernetes Deployment's probes and replicas (with
// Kubernetes' defaults, in a file of several kinds), what the API server would
// refuse refused in one line, and a Deployment read with a Spring file.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <sstream>

#include "cli/k8s_deployment.hpp"
#include "cli/lint_sources.hpp"
#include "cli/spring_config.hpp"

namespace lockbench::cli {
namespace {

using namespace std::chrono_literals;

std::string write(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const SettingError& e) {
    return e.what();
  }
  return "";
}

// A Service, a ConfigMap and the Deployment, as a chart renders them.
const std::string kManifest = R"(apiVersion: v1
kind: Service
metadata: {name: orders}
spec: {ports: [{port: 80}]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: orders-config}
data: {a: b}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: orders}
spec:
  replicas: 3
  template:
    spec:
      containers:
        - name: app
          livenessProbe:
            httpGet: {path: /actuator/health, port: 8080}
            periodSeconds: 5
            failureThreshold: 0
          readinessProbe:
            httpGet: {path: /actuator/health/readiness, port: 8080}
            timeoutSeconds: 2
          startupProbe:
            tcpSocket: {port: 8080}
            failureThreshold: 30
)";

std::string manifest_with(const std::string& from, const std::string& to) {
  std::string m = kManifest;
  m.replace(m.find(from), from.size(), to);
  return m;
}

TEST(K8sDeployment, ReadsTheDeploymentAmongOtherKindsWithKubernetesDefaults) {
  const std::string path = write("orders.yaml", kManifest);
  EXPECT_TRUE(is_kubernetes_yaml(path));
  const auto ds = read_deployments(path);
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].name, "orders");
  EXPECT_EQ(ds[0].replicas, 3);
  const K8sContainer& c = ds[0].containers.at(0);
  ASSERT_TRUE(c.liveness && c.readiness && c.startup);
  EXPECT_EQ(c.liveness->path, "/actuator/health");
  EXPECT_EQ(c.liveness->spec.period, 5s);
  EXPECT_EQ(c.liveness->spec.timeout, 1s);            // absent: 1
  EXPECT_EQ(c.liveness->spec.failure_threshold, 3);  // 0: the API server's default
  EXPECT_EQ(c.readiness->spec.timeout, 2s);
  EXPECT_EQ(c.readiness->spec.period, 10s);
  EXPECT_EQ(c.startup->path, "");  // tcpSocket
  EXPECT_EQ(c.startup->spec.failure_threshold, 30);
}

TEST(K8sDeployment, RefusesWhatKubernetesRefusesInOneLineNamingTheField) {
  const auto refusal = [](const std::string& from, const std::string& to) {
    const std::string path = write("bad.yaml", manifest_with(from, to));
    return message_of([&] { read_deployments(path); });
  };
  const std::string negative = refusal("failureThreshold: 0", "failureThreshold: -1");
  EXPECT_NE(negative.find("Deployment orders, container app, livenessProbe.failureThreshold: -1 is not accepted"),
            std::string::npos)
      << negative;
  EXPECT_NE(negative.find("negative"), std::string::npos) << negative;
  const std::string success = refusal("periodSeconds: 5", "successThreshold: 2");
  EXPECT_NE(success.find("livenessProbe"), std::string::npos) << success;
  EXPECT_NE(success.find("must be 1 for liveness and startup probes"), std::string::npos) << success;
  const std::string unit = refusal("timeoutSeconds: 2", "timeoutSeconds: 2s");
  EXPECT_NE(unit.find("readinessProbe.timeoutSeconds: '2s' is not accepted (a whole number"), std::string::npos)
      << unit;
  const std::string replicas = refusal("replicas: 3", "replicas: three");
  EXPECT_NE(replicas.find("spec.replicas"), std::string::npos) << replicas;
  const std::string none = message_of([&] { read_deployments(write("svc.yaml", "apiVersion: v1\nkind: Service\n")); });
  EXPECT_NE(none.find("has no Deployment (kinds found: Service)"), std::string::npos) << none;
}

TEST(K8sDeployment, ThisRepositorysManifestGivesItsProbedPodsAndSeveralContainersAskForAChoice) {
  const std::string path = std::string(LOCKBENCH_SOURCE_DIR) + "/deploy/k8s/lockbench.yaml";
  const auto ds = read_deployments(path);
  const ChosenContainer c = choose_container(ds, "", path);
  EXPECT_EQ(c.where(), "Deployment lockbench-pods, container pod");
  EXPECT_EQ(c.deployment->replicas, 3);
  std::string billing = kManifest.substr(kManifest.find("apiVersion: apps/v1"));
  billing.replace(billing.find("{name: orders}"), 14, "{name: billing}");
  auto two = read_deployments(write("two.yaml", kManifest + "---\n" + billing));
  const std::string several = message_of([&] { choose_container(two, "", "two.yaml"); });
  EXPECT_NE(several.find("2 containers have probes (orders/app, billing/app); pick one with --deployment"),
            std::string::npos)
      << several;
  EXPECT_EQ(choose_container(two, "billing", "two.yaml").where(), "Deployment billing, container app");
  EXPECT_NE(message_of([&] { choose_container(two, "nope", "two.yaml"); }).find("--deployment: 'nope'"),
            std::string::npos);
}

TEST(LintSources, ADeploymentAndASpringFileTogether) {
  const std::string deploy = write("orders-deploy.yaml", kManifest);
  const std::string props = write("orders.properties",
                                  "management.endpoint.health.probes.enabled=true\n"
                                  "management.health.db.enabled=true\n"
                                  "management.endpoint.health.group.readiness.include=readinessState,db\n"
                                  "spring.threads.virtual.enabled=true\n"
                                  "spring.datasource.hikari.connection-timeout=20000\n");
  Settings s;
  std::ostringstream err;
  const LintSources src = read_lint_sources(s, {props, deploy}, "", err, true);
  EXPECT_EQ(s.pods, 3);
  EXPECT_TRUE(s.liveness.on);
  EXPECT_EQ(s.liveness.period, 5s);
  EXPECT_EQ(s.connection_timeout, 20s);
  EXPECT_TRUE(s.virtual_threads);
  EXPECT_EQ(src.liveness.where, "Deployment orders, container app");
  EXPECT_EQ(src.liveness.path, "/actuator/health");
  EXPECT_EQ(src.readiness.path, "/actuator/health/readiness");
  EXPECT_EQ(src.health.probes_enabled, true);
  EXPECT_EQ(src.health.groups.at("readiness"), (std::vector<std::string>{"readinessState", "db"}));
  EXPECT_NE(err.str().find("replicas 3 (--pods); readinessProbe httpGet /actuator/health/readiness"), std::string::npos)
      << err.str();
  // A YAML list for the group, as application.yml writes it.
  const std::string yml = write("orders.yml", "management:\n  endpoint:\n    health:\n      group:\n        liveness:\n"
                                              "          include: [livenessState, db]\n");
  Settings s2;
  EXPECT_EQ(read_lint_sources(s2, {yml}, "", err, false).health.groups.at("liveness"),
            (std::vector<std::string>{"livenessState", "db"}));
}

// Issue 42: java.util.Properties' escapes, \u0035 = '5'.
TEST(SpringProperties, UnicodeAndBackslashEscapesAreDecodedAsJavaReadsThem) {
  Settings s;
  apply_spring_config(s, write("escapes.properties",
                               "spring.datasource.hikari.maximum-pool-size=\\u0031\\u0035\n"
                               "server.tomcat.threads.max=\\3\\0\n"));
  EXPECT_EQ(s.maximum_pool_size, 15);
  EXPECT_EQ(s.max_threads, 30);
  const std::string bad = message_of([] {
    Settings t;
    apply_spring_config(t, write("bad-escape.properties", "spring.datasource.hikari.maximum-pool-size=\\u00G5\n"));
  });
  EXPECT_NE(bad.find("line 1: malformed \\uXXXX escape"), std::string::npos) << bad;
}

}  // namespace
}  // namespace lockbench::cli
