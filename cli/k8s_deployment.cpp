#include "cli/k8s_deployment.hpp"

#include <filesystem>
#include <sstream>

#include "core/files.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

namespace lockbench::cli {

namespace {

// Counts the parser's events; throws at the cap, so the parse stops there.
class NodeCounter final : public YAML::EventHandler {
 public:
  explicit NodeCounter(std::string where) : where_(std::move(where)) {}
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override { count(); }
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override { count(); }
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override { count(); }
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    count();
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    count();
  }
  void OnMapEnd() override {}

 private:
  void count() {
    if (++nodes_ > kYamlNodesMax)
      throw SettingError(where_ + " has more than " + std::to_string(kYamlNodesMax) +
                         " YAML nodes, the cap for a configuration file");
  }
  std::string where_;
  std::size_t nodes_ = 0;
};

}  // namespace

std::vector<YAML::Node> load_yaml_bounded(const std::string& path, const std::string& origin) {
  const std::string text = read_file_capped(path, kConfigFileBytesMax, origin, "a configuration file");
  const std::string where = origin + ": '" + path + "'";
  try {
    std::istringstream in(text);
    YAML::Parser parser(in);
    NodeCounter counter(where);
    while (parser.HandleNextDocument(counter)) {
    }
    return YAML::LoadAll(text);
  } catch (const YAML::Exception& e) {
    throw SettingError(where + " is not valid YAML: " + e.what());
  }
}

namespace {

struct ManifestReader {
  const std::string& file;

  [[noreturn]] void refuse(const std::string& what) const { throw SettingError("--from: '" + file + "': " + what); }

  std::vector<YAML::Node> documents() const { return load_yaml_bounded(file, "--from"); }

  static std::string scalar(const YAML::Node& n) { return n && n.IsScalar() ? n.as<std::string>() : ""; }

  // A whole number of the manifest (replicas, *Seconds, *Threshold): Kubernetes
  // takes integers only, and refuses a negative one.
  int whole(const YAML::Node& n, const std::string& where, const std::string& accepted) const {
    const std::string v = scalar(n);
    const bool digits = !v.empty() && v.size() <= 9 &&
                        v.find_first_not_of("0123456789", v[0] == '-' ? 1 : 0) == std::string::npos && v != "-";
    if (!digits) refuse(where + ": '" + (n.IsScalar() ? v : "(not a value)") + "' is not accepted (" + accepted + ")");
    const int out = std::stoi(v);
    if (out < 0) refuse(where + ": " + v + " is not accepted (Kubernetes refuses a negative value; " + accepted + ")");
    return out;
  }

  // One probe: its fields as parse_probe reads them, a 0 left to Kubernetes' default.
  K8sProbe probe(const YAML::Node& node, const std::string& where, bool liveness_rules) const {
    K8sProbe out;
    if (const auto http = node["httpGet"]) {
      out.path = scalar(http["path"]);
      if (out.path.empty()) out.path = "/";  // the API server's default
    }
    static constexpr std::pair<const char*, const char*> kFields[] = {
        {"periodSeconds", "default 10"},
        {"timeoutSeconds", "default 1"},
        {"failureThreshold", "default 3"},
        {"successThreshold", "default 1"},
        {"initialDelaySeconds", "default 0"}};
    std::string text;
    for (const auto& [field, default_value] : kFields) {
      if (!node[field]) continue;
      const int v = whole(node[field], where + "." + field,
                          std::string("a whole number, 0 or more; 0 or absent = Kubernetes' ") + default_value);
      if (v == 0) continue;  // SetDefaults_Probe fills a 0 in
      text += (text.empty() ? "" : ",") + std::string(field) + "=" + std::to_string(v);
    }
    out.spec = parse_probe(text.empty() ? "on" : text, "--from: '" + file + "': " + where, liveness_rules);
    return out;
  }

  K8sContainer container(const YAML::Node& node, const std::string& deployment, std::size_t index) const {
    K8sContainer out;
    out.name = scalar(node["name"]);
    if (out.name.empty()) out.name = "#" + std::to_string(index);
    const std::string where = "Deployment " + deployment + ", container " + out.name + ", ";
    if (node["livenessProbe"]) out.liveness = probe(node["livenessProbe"], where + "livenessProbe", true);
    if (node["readinessProbe"]) out.readiness = probe(node["readinessProbe"], where + "readinessProbe", false);
    if (node["startupProbe"]) out.startup = probe(node["startupProbe"], where + "startupProbe", true);
    return out;
  }

  K8sDeployment deployment(const YAML::Node& doc) const {
    K8sDeployment out;
    out.name = scalar(doc["metadata"]["name"]);
    if (out.name.empty()) out.name = "(no metadata.name)";
    const YAML::Node spec = doc["spec"];
    if (spec && spec["replicas"])
      out.replicas = whole(spec["replicas"], "Deployment " + out.name + ", spec.replicas", "a whole number, 0 or more");
    const YAML::Node containers = spec ? spec["template"]["spec"]["containers"] : YAML::Node();
    if (!containers || !containers.IsSequence())
      refuse("Deployment " + out.name + " has no spec.template.spec.containers list");
    for (std::size_t i = 0; i < containers.size(); ++i) out.containers.push_back(container(containers[i], out.name, i));
    return out;
  }
};

bool is_object(const YAML::Node& doc) { return doc.IsMap() && doc["apiVersion"] && doc["kind"]; }

}  // namespace

bool is_kubernetes_yaml(const std::string& path) {
  const auto dot = path.rfind('.');
  const std::string ext = dot == std::string::npos ? "" : path.substr(dot + 1);
  if (ext != "yml" && ext != "yaml") return false;
  try {
    for (const auto& doc : load_yaml_bounded(path, "--from"))
      if (is_object(doc)) return true;
  } catch (const SettingError&) {
    return false;  // the Spring reader says what is wrong with it
  }
  return false;
}

std::vector<K8sDeployment> read_deployments(const std::string& path) {
  const ManifestReader reader{path};
  std::vector<K8sDeployment> out;
  std::vector<std::string> kinds;
  try {
    for (const auto& doc : reader.documents()) {
      if (!is_object(doc)) continue;
      const std::string kind = ManifestReader::scalar(doc["kind"]);
      if (kind == "Deployment")
        out.push_back(reader.deployment(doc));
      else
        kinds.push_back(kind);
    }
  } catch (const YAML::Exception& e) {  // a field of the wrong shape (a list where a map belongs, ...)
    reader.refuse(std::string("a Deployment lint cannot read: ") + e.what());
  }
  if (out.empty()) {
    std::string seen;
    for (const auto& k : kinds) seen += (seen.empty() ? "" : ", ") + k;
    reader.refuse("has no Deployment (kinds found: " + seen + "); lint reads a Deployment's probes and replicas");
  }
  return out;
}

std::string ChosenContainer::where() const {
  return "Deployment " + deployment->name + ", container " + container->name;
}

ChosenContainer choose_container(const std::vector<K8sDeployment>& deployments, const std::string& choice,
                                 const std::string& files) {
  std::vector<ChosenContainer> probed, named;
  std::string listed;
  for (const auto& d : deployments)
    for (const auto& c : d.containers) {
      const ChosenContainer one{&d, &c};
      const std::string id = d.name + "/" + c.name;
      if (choice == d.name || choice == id) named.push_back(one);
      if (!c.liveness && !c.readiness) continue;
      probed.push_back(one);
      listed += (listed.empty() ? "" : ", ") + id;
    }
  if (!choice.empty()) {
    std::vector<ChosenContainer> both;
    for (const auto& n : named)
      if (n.container->liveness || n.container->readiness) both.push_back(n);
    if (both.size() == 1) return both.front();
    if (named.size() == 1) return named.front();
    throw SettingError("--deployment: '" + choice + "' names " + (named.empty() ? "no" : "more than one") +
                       " container of " + files + " (accepted: DEPLOYMENT or DEPLOYMENT/CONTAINER; with probes: " +
                       (listed.empty() ? "none" : listed) + ")");
  }
  if (probed.size() == 1) return probed.front();
  if (probed.empty() && deployments.size() == 1 && deployments.front().containers.size() == 1)
    return {&deployments.front(), &deployments.front().containers.front()};  // replicas only, no probe
  if (probed.empty())
    throw SettingError("--from: " + files + ": no container has a liveness or readiness probe; name one with "
                       "--deployment DEPLOYMENT/CONTAINER");
  throw SettingError("--from: " + files + ": " + std::to_string(probed.size()) +
                     " containers have probes (" + listed + "); pick one with --deployment DEPLOYMENT/CONTAINER");
}

}  // namespace lockbench::cli
