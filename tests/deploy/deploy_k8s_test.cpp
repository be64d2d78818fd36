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
  EXPECT_EQ(replaced, (std::set<std::string>{"data.shards->spec.completions", "data.parallelism->spec.parallelism",
                                             "data.storage-class->spec.storageClassName"}));
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
  for (const char* needed : {"--world real", "--targets", "--partner"}) EXPECT_NE(vars.at("flags").find(needed), std::string::npos);
  EXPECT_EQ(vars.at("flags").find("--db"), std::string::npos);  // the Secret, through LOCKBENCH_RUN_DB
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
  EXPECT_EQ(replaced, (std::set<std::string>{"data.runners->spec.completions", "data.runners->spec.parallelism",
                                             "data.storage-class->spec.storageClassName"}));
}

// ---- issue 43: the manifests run on a real cluster as written

namespace k8s_as_written {

const std::vector<std::string> kKustomizations = {"", "/sweep", "/runners"};

std::vector<YAML::Node> files_of(const std::string& dir) {
  std::vector<YAML::Node> docs;
  const YAML::Node k = YAML::LoadFile(kDeploy + dir + "/kustomization.yaml");
  for (const auto& r : k["resources"])
    for (const auto& d : documents(slurp(kDeploy + dir + "/" + r.as<std::string>()))) docs.push_back(d);
  return docs;
}

// Every way a container's argv carries a secret: an env var filled from a
// Secret ($(NAME) expands it into argv, where ps shows it), or a --db flag.
std::vector<std::string> secrets_in_argv(const YAML::Node& doc) {
  std::vector<std::string> found;
  const YAML::Node pod = at(doc, "spec.template.spec");
  if (!pod) return found;
  for (const auto& c : pod["containers"]) {
    std::string argv;
    for (const char* part : {"command", "args"})
      if (c[part])
        for (const auto& a : c[part]) argv += a.as<std::string>() + " ";
    if (c["env"])
      for (const auto& e : c["env"])
        if (at(e, "valueFrom.secretKeyRef") && argv.find("$(" + e["name"].as<std::string>() + ")") != std::string::npos)
          found.push_back(at(doc, "metadata.name").as<std::string>() + ": $(" + e["name"].as<std::string>() + ") in argv");
    if (argv.find("--db") != std::string::npos)
      found.push_back(at(doc, "metadata.name").as<std::string>() + ": --db in argv");
  }
  return found;
}

TEST(DeployK8sAsWritten, NoSecretReachesAContainersArgvAndTheCheckFindsOne) {
  for (const auto& dir : kKustomizations)
    for (const auto& d : files_of(dir))
      for (const auto& e : secrets_in_argv(d)) ADD_FAILURE() << "deploy/k8s" << dir << ": " << e;
  const auto bad = documents(
      "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n"
      "      containers:\n        - name: c\n          image: i\n          env: [{name: DB_URL, valueFrom: {secretKeyRef: {name: s, key: url}}}]\n"
      "          command: [\"lockbench\", \"run\", \"--db=$(DB_URL)\"]\n");
  EXPECT_EQ(secrets_in_argv(bad[0]), (std::vector<std::string>{"j: $(DB_URL) in argv", "j: --db in argv"}));
  // Where the URL goes instead: the variables serve and run read (cli/main.cpp).
  const auto base = files_of("");
  const auto env_names = [](const YAML::Node& doc) {
    std::set<std::string> names;
    for (const auto& e : at(doc, "spec.template.spec.containers")[0]["env"]) names.insert(e["name"].as<std::string>());
    return names;
  };
  EXPECT_TRUE(env_names(find(base, "Deployment", "lockbench-pods")).count("LOCKBENCH_SERVE_DB"));
  EXPECT_TRUE(env_names(find(base, "Job", "lockbench-runner")).count("LOCKBENCH_RUN_DB"));
  EXPECT_TRUE(env_names(find(files_of("/runners"), "Job", "lockbench-runners")).count("LOCKBENCH_RUN_DB"));
}

// An image a multi-node cluster can pull: a registry and a tag from each
// kustomization's images entry, and a claim that names its storage class.
TEST(DeployK8sAsWritten, EveryKustomizationNamesARegistryImageAndEveryClaimAStorageClass) {
  for (const auto& dir : kKustomizations) {
    const YAML::Node k = YAML::LoadFile(kDeploy + dir + "/kustomization.yaml");
    ASSERT_TRUE(k["images"]) << "deploy/k8s" << dir << ": no images entry";
    EXPECT_EQ(k["images"][0]["name"].as<std::string>(), "lockbench");
    EXPECT_NE(k["images"][0]["newName"].as<std::string>().find('/'), std::string::npos) << "no registry in newName";
    const std::string tag = k["images"][0]["newTag"].as<std::string>();
    EXPECT_FALSE(tag.empty() || tag == "latest") << "a fixed tag: IfNotPresent with :latest keeps a stale image";
    for (const auto& d : files_of(dir)) {
      if (d["kind"].as<std::string>() == "PersistentVolumeClaim") {
        EXPECT_TRUE(at(d, "spec.storageClassName")) << "deploy/k8s" << dir << ": claim without storageClassName";
      }
      if (const YAML::Node pod = at(d, "spec.template.spec")) {
        for (const auto& c : pod["containers"]) EXPECT_EQ(c["image"].as<std::string>(), "lockbench");  // kustomize's images rewrites it
      }
    }
  }
}

// Every claim is mounted by a Deployment too (the collector): the results stay
// reachable by kubectl cp once the Jobs are gone.
TEST(DeployK8sAsWritten, EveryResultsClaimIsKeptByACollectorThatOutlivesTheJobs) {
  for (const auto& dir : {std::string("/sweep"), std::string("/runners")}) {
    const auto docs = files_of(dir);
    for (const auto& claim : docs) {
      if (claim["kind"].as<std::string>() != "PersistentVolumeClaim") continue;
      const std::string name = at(claim, "metadata.name").as<std::string>();
      bool kept = false;
      for (const auto& d : docs)
        if (d["kind"].as<std::string>() == "Deployment")
          for (const auto& v : at(d, "spec.template.spec.volumes"))
            kept |= at(v, "persistentVolumeClaim.claimName") && at(v, "persistentVolumeClaim.claimName").as<std::string>() == name;
      EXPECT_TRUE(kept) << "deploy/k8s" << dir << ": no Deployment keeps claim " << name;
    }
  }
}

// The runners drive lockbench.yaml's own Services, scenario and strategy, with its Secret.
TEST(DeployK8sAsWritten, TheRunnersDriveLockbenchYamlsOwnServicesWithItsSecret) {
  const auto base = files_of("");
  const std::string flags = literals("/runners").at("flags");
  const auto value_of = [&](const std::string& flag) {
    const auto p = flags.find(flag + " ");
    if (p == std::string::npos) return std::string();
    const auto from = p + flag.size() + 1;
    return flags.substr(from, flags.find(' ', from) - from);
  };
  for (const char* flag : {"--targets", "--partner"}) {
    const std::string url = value_of(flag);  // http://NAME:PORT
    ASSERT_EQ(url.rfind("http://", 0), 0u) << flag << " " << url;
    const std::string host = url.substr(7, url.find(':', 7) - 7);
    const int port = std::stoi(url.substr(url.find(':', 7) + 1));
    const YAML::Node svc = find(base, "Service", host);
    ASSERT_TRUE(svc) << flag << ": no Service " << host << " in lockbench.yaml";
    EXPECT_EQ(at(svc, "spec.ports")[0]["port"].as<int>(), port) << flag;
  }
  std::string serve;
  for (const auto& a : at(find(base, "Deployment", "lockbench-pods"), "spec.template.spec.containers")[0]["command"])
    serve += a.as<std::string>() + " ";
  for (const char* flag : {"--scenario", "--strategy"})
    EXPECT_NE(serve.find(std::string(flag) + "=" + value_of(flag) + " "), std::string::npos) << flag << ": " << serve;
  const auto secret_of = [](const YAML::Node& doc) {
    for (const auto& e : at(doc, "spec.template.spec.containers")[0]["env"])
      if (at(e, "valueFrom.secretKeyRef")) return at(e, "valueFrom.secretKeyRef.name").as<std::string>();
    return std::string();
  };
  const std::string secret = secret_of(find(base, "Deployment", "lockbench-pods"));
  EXPECT_EQ(secret, "lockbench-db");
  EXPECT_EQ(secret_of(find(files_of("/runners"), "Job", "lockbench-runners")), secret);
}

// A merge gives up (backoffLimit, activeDeadlineSeconds past the runners'),
// says which runner or shard it waits for, and stops at a failed runner; the
// runners' own wait (--shard-wait) covers the pods' start-up.
TEST(DeployK8sAsWritten, MergesGiveUpSayWhatTheyWaitForAndTheShardWaitCoversStartUp) {
  for (const auto& [dir, merge_name] : {std::pair{std::string("/sweep"), "lockbench-sweep-merge"},
                                        std::pair{std::string("/runners"), "lockbench-runners-merge"}}) {
    const auto docs = files_of(dir);
    const YAML::Node merge = find(docs, "Job", merge_name);
    ASSERT_TRUE(merge);
    EXPECT_TRUE(at(merge, "spec.backoffLimit")) << merge_name;
    ASSERT_TRUE(at(merge, "spec.activeDeadlineSeconds")) << merge_name;
    EXPECT_LE(at(merge, "spec.activeDeadlineSeconds").as<int>(), 2 * 86400) << merge_name;
    EXPECT_NE(script_of(merge).find("merge: waiting for"), std::string::npos) << script_of(merge);
  }
  const auto docs = files_of("/runners");
  const YAML::Node runners = find(docs, "Job", "lockbench-runners");
  const YAML::Node merge = find(docs, "Job", "lockbench-runners-merge");
  EXPECT_GT(at(merge, "spec.activeDeadlineSeconds").as<int>(), at(runners, "spec.activeDeadlineSeconds").as<int>());
  const std::string run = script_of(runners), m = script_of(merge);
  EXPECT_NE(run.find(".failed"), std::string::npos) << run;
  EXPECT_NE(m.find("runner-$i.failed"), std::string::npos) << m;
  const auto w = run.find("--shard-wait ");
  ASSERT_NE(w, std::string::npos) << run;
  const std::string wait = run.substr(w + 13, run.find(' ', w + 13) - w - 13);
  ASSERT_FALSE(wait.empty());
  EXPECT_EQ(wait.back(), 'm') << wait;  // minutes: an image pull and a scheduling delay fit
  EXPECT_GE(std::stoi(wait), 5) << wait;
}

#ifdef LOCKBENCH_KUBECTL
// What a cluster would get: every kustomization renders, with the registry's image in every container.
TEST(DeployK8sAsWritten, KubectlKustomizeRendersEveryKustomizationWithTheRegistryImage) {
  for (const auto& dir : kKustomizations) {
    const std::string cmd = std::string(LOCKBENCH_KUBECTL) + " kustomize " + kDeploy + dir + " 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::string out;
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    const int status = pclose(p);
    if (out.find("replacements") != std::string::npos && status != 0)
      GTEST_SKIP() << "this kubectl's kustomize predates replacements (kustomize 4.1, kubectl 1.22): " << out;
    ASSERT_EQ(status, 0) << dir << ": " << out;
    const YAML::Node k = YAML::LoadFile(kDeploy + dir + "/kustomization.yaml");
    const std::string image = k["images"][0]["newName"].as<std::string>() + ":" + k["images"][0]["newTag"].as<std::string>();
    int containers = 0;
    for (const auto& d : documents(out)) {
      for (const auto& e : schema_errors(d)) ADD_FAILURE() << dir << ": " << e;
      for (const auto& e : secrets_in_argv(d)) ADD_FAILURE() << dir << ": " << e;
      if (d["kind"].as<std::string>() == "PersistentVolumeClaim") {
        EXPECT_EQ(at(d, "spec.storageClassName").as<std::string>(),
                  literals(dir).at("storage-class"));
      }
      if (const YAML::Node pod = at(d, "spec.template.spec"))
        for (const auto& c : pod["containers"]) {
          EXPECT_EQ(c["image"].as<std::string>(), image) << dir;
          ++containers;
        }
    }
    EXPECT_GE(containers, 2) << dir;
  }
}
#endif

}  // namespace k8s_as_written
