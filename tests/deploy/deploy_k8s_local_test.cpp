// deploy/k8s run as a cluster would run it, on one machine without a cluster
// (issue 43): `kubectl kustomize` renders every kustomization, and each Job's
// and Deployment's container command runs here as a process, with the env
// its manifest gives it (values, ConfigMap keys, and the Secret lockbench-db
// filled from the test's PostgreSQL), every volume's mountPath a local folder,
// the Services' names (lockbench-partner, lockbench-pods) the test's partner
// and the serve pods started from the Deployment's own command, and every
// address loopback. The runs are shortened (--duration); nothing else of the
// commands changes. The merged report must appear where the collector keeps it.
// What this cannot show (an image pull, a bound claim, pods on several nodes,
// DNS, admission) is in docs/shards.md.
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "tests/cli/run_command.hpp"
#include "tests/real/test_env.hpp"

namespace {

namespace fs = std::filesystem;
using lockbench::testing::run_command;
using lockbench::testing::slurp;

const std::string kDeploy = std::string(LOCKBENCH_SOURCE_DIR) + "/deploy/k8s";

std::vector<YAML::Node> rendered(const std::string& dir) {
  const auto r = run_command(std::string(LOCKBENCH_KUBECTL) + " kustomize " + kDeploy + dir);
  EXPECT_EQ(r.status, 0) << dir << ": " << r.err;
  std::vector<YAML::Node> docs;
  if (r.status == 0)
    for (const auto& d : YAML::LoadAll(r.out))
      if (d.IsMap()) docs.push_back(d);
  return docs;
}

YAML::Node object(const std::vector<YAML::Node>& docs, const std::string& kind, const std::string& name) {
  for (const auto& d : docs)
    if (d["kind"].as<std::string>() == kind && d["metadata"]["name"].as<std::string>() == name) return d;
  ADD_FAILURE() << "no " << kind << "/" << name << " rendered";
  return YAML::Node();
}

// The machine's stand-ins for the cluster's names: Service URLs, mountPaths, addresses.
struct Local {
  std::string pods;     // the serve pods' URLs, comma-separated (the headless Service)
  std::string results;  // the claim's folder
  std::string bin_path; // PATH: lockbench and fake_partner, as the image has them
};

std::string localize(std::string s, const Local& l) {
  const auto replace_all = [&s](const std::string& from, const std::string& to) {
    for (auto p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) s.replace(p, from.size(), to);
  };
  replace_all("http://lockbench-partner:8080", lockbench::test::test_partner());
  if (!l.pods.empty()) replace_all("http://lockbench-pods:8081", l.pods);
  replace_all("/results", l.results);
  replace_all("0.0.0.0", "127.0.0.1");
  // Shortened: a minute's run in seconds, a sweep's ten minutes in twenty seconds (both simulated or real alike).
  s = std::regex_replace(s, std::regex("--duration([ =])(60s|30s)"), "--duration$013s");
  s = std::regex_replace(s, std::regex("--duration([ =])10m"), "--duration$0120s");
  return s;
}

// One container of a rendered pod template as a local process: `env -i` with
// PATH, the manifest's env (ConfigMaps from `docs`, the Secret from the test
// database) and `extra`; command + args, localized.
std::vector<std::string> argv_of(const YAML::Node& workload, const std::vector<YAML::Node>& docs, const Local& l,
                                 const std::map<std::string, std::string>& extra) {
  const YAML::Node c = workload["spec"]["template"]["spec"]["containers"][0];
  std::vector<std::string> argv = {"/usr/bin/env", "-i", "PATH=" + l.bin_path, "HOME=" + l.results};
  for (const auto& [k, v] : extra) argv.push_back(k + "=" + v);
  if (c["env"])
    for (const auto& e : c["env"]) {
      const std::string name = e["name"].as<std::string>();
      std::string value;
      if (e["value"]) {
        value = e["value"].as<std::string>();
      } else if (e["valueFrom"]["configMapKeyRef"]) {
        const YAML::Node ref = e["valueFrom"]["configMapKeyRef"];
        value = object(docs, "ConfigMap", ref["name"].as<std::string>())["data"][ref["key"].as<std::string>()].as<std::string>();
      } else if (e["valueFrom"]["secretKeyRef"]) {
        const YAML::Node ref = e["valueFrom"]["secretKeyRef"];
        EXPECT_EQ(ref["name"].as<std::string>() + "/" + ref["key"].as<std::string>(), "lockbench-db/url");
        value = lockbench::test::test_db();
      } else {
        ADD_FAILURE() << name << ": an env entry this test cannot fill";
      }
      argv.push_back(name + "=" + localize(value, l));
    }
  for (const char* part : {"command", "args"})
    if (c[part])
      for (const auto& a : c[part]) argv.push_back(localize(a.as<std::string>(), l));
  return argv;
}

std::string mount_of(const YAML::Node& workload) {
  const YAML::Node c = workload["spec"]["template"]["spec"]["containers"][0];
  return c["volumeMounts"] ? c["volumeMounts"][0]["mountPath"].as<std::string>() : "";
}

// The serve pods of deploy/k8s's Deployment lockbench-pods, `replicas` of them
// (at most 2 here), each on a free loopback port; killed with the object.
class ServePods {
 public:
  ServePods(const std::vector<YAML::Node>& base, Local& l, const std::string& dir) {
    const YAML::Node d = object(base, "Deployment", "lockbench-pods");
    const int replicas = std::min(2, d["spec"]["replicas"].as<int>());
    for (int i = 0; i < replicas; ++i) {
      auto argv = argv_of(d, base, l, {});
      for (auto& a : argv)
        if (a.rfind("--port=", 0) == 0 || a.rfind("--management-port=", 0) == 0) a = a.substr(0, a.find('=') + 1) + "0";
      const std::string out = dir + "/pod-" + std::to_string(i) + ".out";
      procs_.push_back(lockbench::testing::spawn(argv, out, dir + "/pod-" + std::to_string(i) + ".err"));
      std::string url;
      lockbench::testing::wait_for(
          [&] {
            const std::string text = slurp(out);
            const auto at = text.find("listening on ");
            if (at == std::string::npos) return false;
            url = "http://" + text.substr(at + 13, text.find('\n', at) - at - 13);
            return true;
          },
          std::chrono::seconds(20));
      EXPECT_FALSE(url.empty()) << slurp(dir + "/pod-" + std::to_string(i) + ".err");
      l.pods += (l.pods.empty() ? "" : ",") + url;
    }
  }
  ~ServePods() {
    for (const auto& p : procs_) {
      ::kill(p.pid, SIGTERM);
      lockbench::testing::wait_exit(p.pid, std::chrono::seconds(10));
    }
  }
  ServePods(const ServePods&) = delete;
  ServePods& operator=(const ServePods&) = delete;

 private:
  std::vector<lockbench::testing::Spawned> procs_;
};

class DeployK8sLocally : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("lockbench-k8s-local-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "results");
    local_.results = (dir_ / "results").string();
    const std::string bin = fs::path(LOCKBENCH_BIN).parent_path().string();
    const std::string partner = fs::path(LOCKBENCH_FAKE_PARTNER_BIN).parent_path().string();
    local_.bin_path = bin + ":" + partner + ":/usr/bin:/bin";
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
  Local local_;
};

// The runners' kustomization: the N runner pods of the Indexed Job at once
// (JOB_COMPLETION_INDEX 0..N-1), the merge Job beside them (it waits for
// their marks), the collector Deployment on the same folder; and the base's
// one-runner Job against the same pods.
TEST_F(DeployK8sLocally, TheRunnersJobsRunHereAndTheMergedReportAppearsWhereTheCollectorKeepsIt) {
  LOCKBENCH_NEED_PARTNER();
  const auto base = rendered("");
  const auto runners = rendered("/runners");
  ASSERT_FALSE(base.empty() || runners.empty());
  const ServePods pods(base, local_, dir_.string());
  ASSERT_NE(local_.pods.find("http://127.0.0.1:"), std::string::npos);

  const YAML::Node job = object(runners, "Job", "lockbench-runners");
  const YAML::Node merge = object(runners, "Job", "lockbench-runners-merge");
  const YAML::Node collector = object(runners, "Deployment", "lockbench-runners-results");
  for (const YAML::Node& w : {job, merge, collector}) EXPECT_EQ(mount_of(w), "/results");
  const int n = job["spec"]["completions"].as<int>();
  ASSERT_EQ(job["spec"]["parallelism"].as<int>(), n);
  const std::string d = dir_.string();
  const auto keeper = lockbench::testing::spawn(argv_of(collector, runners, local_, {}), d + "/collector.out", d + "/collector.err");
  std::vector<lockbench::testing::Spawned> pods_of_job;
  for (int i = 0; i < n; ++i)
    pods_of_job.push_back(lockbench::testing::spawn(
        argv_of(job, runners, local_, {{"JOB_COMPLETION_INDEX", std::to_string(i)}}),
        d + "/runner-" + std::to_string(i) + ".out", d + "/runner-" + std::to_string(i) + ".err"));
  const auto merging = lockbench::testing::spawn(argv_of(merge, runners, local_, {}), d + "/merge.out", d + "/merge.err");
  for (int i = 0; i < n; ++i)
    EXPECT_EQ(lockbench::testing::wait_exit(pods_of_job[i].pid, std::chrono::seconds(90)), 0)
        << slurp(pods_of_job[i].err_path);
  EXPECT_EQ(lockbench::testing::wait_exit(merging.pid, std::chrono::seconds(60)), 0) << slurp(merging.err_path);
  // What it said while it waited, then the report, in the claim's folder.
  EXPECT_NE(slurp(merging.out_path).find("merge: waiting for runner(s)"), std::string::npos) << slurp(merging.out_path);
  const std::string merged = local_.results + "/runners/merged";
  for (const char* f : {"merged.json", "report.md", "report.html", "summary.csv"})
    EXPECT_TRUE(fs::exists(merged + "/" + f)) << f;
  if (fs::exists(merged + "/merged.json")) {
    const auto m = nlohmann::json::parse(slurp(merged + "/merged.json"));
    EXPECT_EQ(m["runners"].size(), static_cast<std::size_t>(n));
    EXPECT_TRUE(m["complete"].get<bool>()) << m["partner"].dump();
    EXPECT_GT(m["requests"]["total"].get<std::int64_t>(), 0);
  }
  // The collector outlived every Job, and stops at kubelet's TERM with status 0.
  EXPECT_EQ(::waitpid(keeper.pid, nullptr, WNOHANG), 0);
  ::kill(keeper.pid, SIGTERM);
  EXPECT_EQ(lockbench::testing::wait_exit(keeper.pid, std::chrono::seconds(10)), 0) << slurp(keeper.err_path);

  // The base's one-runner Job, its argv as written, against the same pods.
  const auto one = lockbench::testing::spawn(argv_of(object(base, "Job", "lockbench-runner"), base, local_, {}),
                                             d + "/one.out", d + "/one.err");
  EXPECT_EQ(lockbench::testing::wait_exit(one.pid, std::chrono::seconds(60)), 0) << slurp(d + "/one.err");
}

// The sweep's kustomization: the Indexed Job's shards (parallelism at a time),
// then its merge Job, on one folder; the merged sweep where its collector keeps it.
TEST_F(DeployK8sLocally, TheSweepJobsRunHereAndTheMergedSweepAppearsWhereTheCollectorKeepsIt) {
  const auto sweep = rendered("/sweep");
  ASSERT_FALSE(sweep.empty());
  const YAML::Node job = object(sweep, "Job", "lockbench-sweep");
  const YAML::Node merge = object(sweep, "Job", "lockbench-sweep-merge");
  for (const YAML::Node& w : {job, merge, object(sweep, "Deployment", "lockbench-sweep-results")})
    EXPECT_EQ(mount_of(w), "/results");
  const int n = job["spec"]["completions"].as<int>();
  const std::string d = dir_.string();
  const auto merging = lockbench::testing::spawn(argv_of(merge, sweep, local_, {}), d + "/merge.out", d + "/merge.err");
  std::vector<lockbench::testing::Spawned> shards;
  for (int i = 0; i < n; ++i)
    shards.push_back(lockbench::testing::spawn(argv_of(job, sweep, local_, {{"JOB_COMPLETION_INDEX", std::to_string(i)}}),
                                               d + "/shard-" + std::to_string(i) + ".out",
                                               d + "/shard-" + std::to_string(i) + ".err"));
  for (int i = 0; i < n; ++i)
    EXPECT_EQ(lockbench::testing::wait_exit(shards[i].pid, std::chrono::seconds(120)), 0) << slurp(shards[i].err_path);
  EXPECT_EQ(lockbench::testing::wait_exit(merging.pid, std::chrono::seconds(60)), 0) << slurp(merging.err_path);
  for (const char* f : {"report.md", "report.html", "summary.csv"})
    EXPECT_TRUE(fs::exists(local_.results + "/merged/" + f)) << f;
}

}  // namespace
