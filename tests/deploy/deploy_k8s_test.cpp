// deploy/k8s as a cluster would take it: every object passes a schema check
// of the fields it uses (kind, apiVersion, names, containers, volumes), and
// the sweep's Indexed Job, its merge Job and the kustomize variables agree:
// N reaches completions and the shards' --shards, each shard writes its own
// directory, and the merge reads exactly shard-0 .. shard-(N-1).
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace {

const std::string kDeploy = std::string(LOCKBENCH_SOURCE_DIR) + "/deploy/k8s";

// The fields each kind must have, as dotted paths, and what their values must be.
struct KindSchema {
  std::string api_version;
  std::vector<std::string> required;
};
const std::map<std::string, KindSchema>& schemas() {
  static const std::map<std::string, KindSchema> s = {
      {"Job", {"batch/v1", {"spec.template.spec.containers", "spec.template.spec.restartPolicy"}}},
      {"Deployment", {"apps/v1", {"spec.selector.matchLabels", "spec.template.spec.containers"}}},
      {"Service", {"v1", {"spec.ports"}}},
      {"PersistentVolumeClaim", {"v1", {"spec.accessModes", "spec.resources.requests.storage"}}},
      {"ConfigMap", {"v1", {"data"}}},
  };
  return s;
}

// The node at a dotted path; an undefined node (false) when a step is missing.
// (yaml-cpp: `node = other` writes into node; reset() rebinds it.)
YAML::Node at(const YAML::Node& n, const std::string& path) {
  YAML::Node cur;
  cur.reset(n);
  std::size_t start = 0;
  for (;;) {
    const auto dot = path.find('.', start);
    const std::string key = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    const YAML::Node& here = cur;
    if (!here.IsMap() || !here[key]) return YAML::Node(YAML::NodeType::Undefined);
    cur.reset(here[key]);
    if (dot == std::string::npos) return cur;
    start = dot + 1;
  }
}

// Every problem of one object, "Kind/name: what"; none when it is well-formed.
std::vector<std::string> schema_errors(const YAML::Node& doc) {
  std::vector<std::string> errors;
  const std::string kind = doc["kind"] ? doc["kind"].as<std::string>() : "";
  const std::string name = at(doc, "metadata.name") ? at(doc, "metadata.name").as<std::string>() : "";
  const std::string who = kind + "/" + name;
  const auto it = schemas().find(kind);
  if (it == schemas().end()) return {who + ": kind not known to this check"};
  if (name.empty()) errors.push_back(who + ": no metadata.name");
  if (!doc["apiVersion"] || doc["apiVersion"].as<std::string>() != it->second.api_version)
    errors.push_back(who + ": apiVersion is not " + it->second.api_version);
  for (const auto& f : it->second.required)
    if (!at(doc, f)) errors.push_back(who + ": missing " + f);
  const YAML::Node pod = kind == "Job" || kind == "Deployment" ? at(doc, "spec.template.spec") : YAML::Node(YAML::NodeType::Undefined);
  if (pod) {
    std::set<std::string> volumes;
    if (pod["volumes"])
      for (const auto& v : pod["volumes"]) volumes.insert(v["name"].as<std::string>());
    for (const auto& c : pod["containers"]) {
      if (!c["name"] || !c["image"]) errors.push_back(who + ": a container without name or image");
      if (c["command"] && !c["command"].IsSequence()) errors.push_back(who + ": command is not a list");
      if (c["volumeMounts"])
        for (const auto& m : c["volumeMounts"])
          if (!volumes.count(m["name"].as<std::string>()) || !m["mountPath"])
            errors.push_back(who + ": volumeMount " + m["name"].as<std::string>() + " has no volume or mountPath");
      if (c["env"])
        for (const auto& e : c["env"])
          if (!e["name"] || (!e["value"] && !e["valueFrom"])) errors.push_back(who + ": an env entry without value");
    }
    if (kind == "Job") {
      const std::string restart = pod["restartPolicy"].as<std::string>();
      if (restart != "Never" && restart != "OnFailure") errors.push_back(who + ": restartPolicy must be Never or OnFailure");
      const YAML::Node mode = at(doc, "spec.completionMode");
      if (mode && mode.as<std::string>() != "Indexed" && mode.as<std::string>() != "NonIndexed")
        errors.push_back(who + ": completionMode must be Indexed or NonIndexed");
      if (mode && mode.as<std::string>() == "Indexed" && !at(doc, "spec.completions"))
        errors.push_back(who + ": an Indexed Job needs completions");
      for (const char* n : {"spec.completions", "spec.parallelism", "spec.backoffLimit"})
        if (at(doc, n) && at(doc, n).as<int>() < 0) errors.push_back(who + ": " + n + " below 0");
    }
  }
  return errors;
}

std::vector<YAML::Node> documents(const std::string& text) {
  std::vector<YAML::Node> docs;
  for (const auto& d : YAML::LoadAll(text))
    if (d.IsMap()) docs.push_back(d);
  return docs;
}

YAML::Node find(const std::vector<YAML::Node>& docs, const std::string& kind, const std::string& name) {
  for (const auto& d : docs)
    if (d["kind"].as<std::string>() == kind) {
      const std::string n = at(d, "metadata.name").as<std::string>();
      // kustomize suffixes a generated ConfigMap's name with its hash
      if (n == name || (kind == "ConfigMap" && n.rfind(name + "-", 0) == 0)) return d;
    }
  return YAML::Node(YAML::NodeType::Undefined);
}

std::string script_of(const YAML::Node& job) {
  std::string s;
  for (const auto& part : at(job, "spec.template.spec.containers")[0]["command"]) s += part.as<std::string>() + " ";
  return s;
}

std::string slurp(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "r");
  std::string s;
  if (!f) return s;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  std::fclose(f);
  return s;
}

// The sweep's objects agree with each other, whoever rendered them.
void expect_a_coherent_sweep(const std::vector<YAML::Node>& docs, int shards) {
  const YAML::Node job = find(docs, "Job", "lockbench-sweep");
  ASSERT_TRUE(job);
  EXPECT_EQ(at(job, "spec.completionMode").as<std::string>(), "Indexed");
  EXPECT_EQ(at(job, "spec.completions").as<int>(), shards);
  EXPECT_LE(at(job, "spec.parallelism").as<int>(), shards);
  const std::string shard = script_of(job);
  EXPECT_NE(shard.find("--shards \"$SHARDS\""), std::string::npos) << shard;
  EXPECT_NE(shard.find("--out \"/results/shard-$JOB_COMPLETION_INDEX\""), std::string::npos) << shard;
  EXPECT_NE(shard.find("--resume"), std::string::npos) << shard;  // a retried pod keeps what it finished
  const YAML::Node merge = find(docs, "Job", "lockbench-sweep-merge");
  ASSERT_TRUE(merge);
  EXPECT_FALSE(at(merge, "spec.completionMode"));
  const std::string merging = script_of(merge);
  EXPECT_NE(merging.find("lockbench merge"), std::string::npos) << merging;
  EXPECT_NE(merging.find("seq 0 $n"), std::string::npos) << merging;
  // Both Jobs read N from one place and mount the one volume.
  for (const YAML::Node& j : {job, merge}) {
    const YAML::Node c = at(j, "spec.template.spec.containers")[0];
    bool reads_n = false;
    for (const auto& e : c["env"])
      reads_n |= e["name"].as<std::string>() == "SHARDS" && at(e, "valueFrom.configMapKeyRef.key").as<std::string>() == "shards";
    EXPECT_TRUE(reads_n);
    EXPECT_EQ(at(j, "spec.template.spec.volumes")[0]["persistentVolumeClaim"]["claimName"].as<std::string>(),
              "lockbench-sweep-results");
  }
  const YAML::Node pvc = find(docs, "PersistentVolumeClaim", "lockbench-sweep-results");
  ASSERT_TRUE(pvc);
  EXPECT_EQ(at(pvc, "spec.accessModes")[0].as<std::string>(), "ReadWriteMany");  // pods on several nodes
}

// The kustomization's literals, by key.
std::map<std::string, std::string> literals(const std::string& dir = "/sweep") {
  std::map<std::string, std::string> out;
  const YAML::Node k = YAML::LoadFile(kDeploy + dir + "/kustomization.yaml");
  for (const auto& l : k["configMapGenerator"][0]["literals"]) {
    const std::string s = l.as<std::string>();
    out[s.substr(0, s.find('='))] = s.substr(s.find('=') + 1);
  }
  return out;
}

}  // namespace

TEST(DeployK8s, EveryObjectPassesTheSchemaCheck) {
  std::size_t objects = 0;
  for (const char* file : {"/lockbench.yaml", "/sweep/sweep-job.yaml", "/runners/runner-job.yaml"})
    for (const auto& doc : documents(slurp(kDeploy + file))) {
      for (const auto& e : schema_errors(doc)) ADD_FAILURE() << file << ": " << e;
      ++objects;
    }
  EXPECT_GE(objects, 11u);
}

TEST(DeployK8s, TheSchemaCheckFindsWhatAClusterWouldRefuse) {
  const auto errors_of = [](const std::string& yaml) { return schema_errors(YAML::Load(yaml)); };
  const std::string good =
      "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  completionMode: Indexed\n  completions: 2\n"
      "  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: c, image: i}]\n";
  EXPECT_TRUE(errors_of(good).empty());
  EXPECT_EQ(errors_of("apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  completionMode: Indexed\n"
                      "  template:\n    spec:\n      restartPolicy: Always\n      containers: [{name: c, image: i}]\n"),
            (std::vector<std::string>{"Job/j: restartPolicy must be Never or OnFailure",
                                      "Job/j: an Indexed Job needs completions"}));
  EXPECT_EQ(errors_of("apiVersion: v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n    spec:\n"
                      "      restartPolicy: Never\n      containers: [{name: c, image: i, volumeMounts: [{name: v, mountPath: /r}]}]\n"),
            (std::vector<std::string>{"Job/j: apiVersion is not batch/v1", "Job/j: volumeMount v has no volume or mountPath"}));
}

TEST(DeployK8s, TheSweepJobItsMergeAndTheKustomizeVariablesAgree) {
  const auto vars = literals();
  ASSERT_TRUE(vars.count("shards") && vars.count("parallelism") && vars.count("flags"));
  const int shards = std::stoi(vars.at("shards"));
  EXPECT_EQ(vars.at("flags").find("--out"), std::string::npos);  // the Job gives --out and --shards
  EXPECT_EQ(vars.at("flags").find("--shard"), std::string::npos);
  EXPECT_NE(vars.at("flags").find("--vary"), std::string::npos);
  // The file as written: N in completions matches the kustomization's default.
  expect_a_coherent_sweep(documents(slurp(kDeploy + "/sweep/sweep-job.yaml")), shards);
  // kustomize's replacements carry N and parallelism into the Job.
  const YAML::Node k = YAML::LoadFile(kDeploy + "/sweep/kustomization.yaml");
  std::set<std::string> replaced;
  for (const auto& r : k["replacements"])
    for (const auto& t : r["targets"])
      for (const auto& f : t["fieldPaths"]) replaced.insert(r["source"]["fieldPath"].as<std::string>() + "->" + f.as<std::string>());
  EXPECT_EQ(replaced, (std::set<std::string>{"data.shards->spec.completions", "data.parallelism->spec.parallelism"}));
}

#ifdef LOCKBENCH_KUBECTL
TEST(DeployK8s, KubectlKustomizeRendersACoherentSweepOffline) {
  const std::string cmd = std::string(LOCKBENCH_KUBECTL) + " kustomize " + kDeploy + "/sweep 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int status = pclose(p);
  if (out.find("replacements") != std::string::npos && status != 0)
    GTEST_SKIP() << "this kubectl's kustomize predates replacements (kustomize 4.1, kubectl 1.22): " << out;
  ASSERT_EQ(status, 0) << out;
  const auto docs = documents(out);
  for (const auto& d : docs)
    for (const auto& e : schema_errors(d)) ADD_FAILURE() << e;
  expect_a_coherent_sweep(docs, std::stoi(literals().at("shards")));
}
#endif

// The runners' Indexed Job: every runner at once (parallelism = completions =
// N), each its slice by --shards and its own result file, no retry (the start
// has passed), and a merge that reads runner-0 .. runner-(N-1) from one claim.
TEST(DeployK8s, TheRunnersJobItsMergeAndTheKustomizeVariablesAgree) {
  const auto vars = literals("/runners");
  ASSERT_TRUE(vars.count("runners") && vars.count("flags"));
  const int n = std::stoi(vars.at("runners"));
  for (const char* given_by_the_job : {"--out", "--shard"}) EXPECT_EQ(vars.at("flags").find(given_by_the_job), std::string::npos);
  for (const char* needed : {"--world real", "--targets", "--db", "--partner"}) EXPECT_NE(vars.at("flags").find(needed), std::string::npos);
  const auto docs = documents(slurp(kDeploy + "/runners/runner-job.yaml"));
  const YAML::Node job = find(docs, "Job", "lockbench-runners");
  ASSERT_TRUE(job);
  EXPECT_EQ(at(job, "spec.completionMode").as<std::string>(), "Indexed");
  EXPECT_EQ(at(job, "spec.completions").as<int>(), n);
  EXPECT_EQ(at(job, "spec.parallelism").as<int>(), n);
  EXPECT_EQ(at(job, "spec.backoffLimit").as<int>(), 0);
  const std::string runner = script_of(job);
  EXPECT_NE(runner.find("lockbench run $RUN_FLAGS"), std::string::npos) << runner;
  EXPECT_NE(runner.find("--shards \"$RUNNERS\""), std::string::npos) << runner;
  EXPECT_NE(runner.find("/results/runners/runner-$JOB_COMPLETION_INDEX.json"), std::string::npos) << runner;
  const YAML::Node merge = find(docs, "Job", "lockbench-runners-merge");
  ASSERT_TRUE(merge);
  const std::string m = script_of(merge);
  EXPECT_NE(m.find("lockbench merge"), std::string::npos) << m;
  EXPECT_NE(m.find("/results/runners/runner-$i.json"), std::string::npos) << m;
  for (const YAML::Node& j : {job, merge})
    EXPECT_EQ(at(j, "spec.template.spec.volumes")[0]["persistentVolumeClaim"]["claimName"].as<std::string>(),
              "lockbench-runners-results");
  const YAML::Node k = YAML::LoadFile(kDeploy + "/runners/kustomization.yaml");
  std::set<std::string> replaced;
  for (const auto& r : k["replacements"])
    for (const auto& t : r["targets"])
      for (const auto& f : t["fieldPaths"]) replaced.insert(r["source"]["fieldPath"].as<std::string>() + "->" + f.as<std::string>());
  EXPECT_EQ(replaced, (std::set<std::string>{"data.runners->spec.completions", "data.runners->spec.parallelism"}));
}
