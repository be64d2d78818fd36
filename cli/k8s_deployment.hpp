// A Kubernetes Deployment's probes, for `lockbench lint --from deployment.yaml`:
// the file the service ships with, read as the API server would take it.
//
//   spec.replicas                                   --pods (absent: 1)
//   spec.template.spec.containers[].livenessProbe   --liveness
//   spec.template.spec.containers[].readinessProbe  --readiness
//   spec.template.spec.containers[].startupProbe    checked only
//     httpGet.path (absent: "/"), periodSeconds, timeoutSeconds, failureThreshold,
//     successThreshold, initialDelaySeconds
//
// A field that is absent or 0 takes Kubernetes' default (period 10 s, timeout
// 1 s, failure 3, success 1, delay 0): the API server fills a 0 in
// (SetDefaults_Probe). What it refuses (a negative value, a liveness or startup
// successThreshold other than 1, a value that is not a whole number) is
// refused here with one line naming the Deployment, the container and the
// field; the spec is checked by parse_probe, the flags' own validator. A file
// of several documents (a Service, a ConfigMap, ...) is read for its
// Deployments only.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "core/settings.hpp"

namespace lockbench::cli {

// A configuration file's YAML holds at most this many nodes (scalars,
// collections and aliases, as the parser meets them).
inline constexpr std::size_t kYamlNodesMax = 50'000;

// The documents of the YAML file `path` (at most kConfigFileBytesMax bytes,
// core/files.hpp), its nodes counted by yaml-cpp's event parser before any
// node tree is built: a 4 MiB flow sequence is refused at the node cap with
// little memory. Throws SettingError "ORIGIN: 'PATH' ..." for a file too large,
// too many nodes or YAML that does not parse.
std::vector<YAML::Node> load_yaml_bounded(const std::string& path, const std::string& origin);

struct K8sProbe {
  ProbeSpec spec;    // Kubernetes' defaults where the file says nothing; `db` is not known here
  std::string path;  // httpGet.path; empty for a tcpSocket, exec or grpc probe
};

struct K8sContainer {
  std::string name;
  std::optional<K8sProbe> liveness, readiness, startup;
};

struct K8sDeployment {
  std::string name;
  int replicas = 1;
  std::vector<K8sContainer> containers;
};

// True when one of the YAML file's documents is a Kubernetes object (apiVersion
// and kind at its top): lint reads it as Kubernetes, not as a Spring file.
bool is_kubernetes_yaml(const std::string& path);

// The file's Deployments. Throws SettingError naming --from, the file and, for
// a bad value, the Deployment, container and field.
std::vector<K8sDeployment> read_deployments(const std::string& path);

// The container lint checks: the one container that has a liveness or
// readiness probe, or the one `choice` names ("DEPLOYMENT" or
// "DEPLOYMENT/CONTAINER"). Throws SettingError listing the candidates when
// there are none or several.
struct ChosenContainer {
  const K8sDeployment* deployment = nullptr;
  const K8sContainer* container = nullptr;
  std::string where() const;  // "Deployment api, container app"
};
ChosenContainer choose_container(const std::vector<K8sDeployment>& deployments, const std::string& choice,
                                 const std::string& files);

}  // namespace lockbench::cli
