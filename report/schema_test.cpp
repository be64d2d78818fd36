// docs/result.schema.json describes what lockbench writes: results of the
// lockbench binary (simulator runs, the captured race and a pool exhaustion
// among them) validate against it. No JSON Schema library for C++ is in
// Debian, so a small validator for the subset the schema uses (type,
// required, properties, items, enum) lives here; it is tested to refuse.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli/run_command.hpp"

namespace {

using nlohmann::json;

const std::string kBin = LOCKBENCH_BIN;
const std::string kSchema = std::string(LOCKBENCH_SOURCE_DIR) + "/docs/result.schema.json";

bool has_type(const json& v, const std::string& type) {
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "string") return v.is_string();
  if (type == "integer") return v.is_number_integer();
  if (type == "number") return v.is_number();
  if (type == "boolean") return v.is_boolean();
  if (type == "null") return v.is_null();
  return false;
}

// Every place `value` breaks `schema`, as "path: what".
void validate(const json& schema, const json& value, const std::string& path, std::vector<std::string>& errors) {
  if (auto t = schema.find("type"); t != schema.end()) {
    const std::vector<std::string> types = t->is_array() ? t->get<std::vector<std::string>>()
                                                         : std::vector<std::string>{t->get<std::string>()};
    if (std::none_of(types.begin(), types.end(), [&](const std::string& x) { return has_type(value, x); })) {
      errors.push_back(path + ": expected " + t->dump() + ", got " + value.type_name());
      return;
    }
  }
  if (auto e = schema.find("enum"); e != schema.end() &&
                                    std::find(e->begin(), e->end(), value) == e->end())
    errors.push_back(path + ": " + value.dump() + " is not one of " + e->dump());
  if (value.is_object()) {
    if (auto req = schema.find("required"); req != schema.end())
      for (const auto& k : *req)
        if (!value.contains(k.get<std::string>())) errors.push_back(path + ": missing '" + k.get<std::string>() + "'");
    if (auto props = schema.find("properties"); props != schema.end())
      for (const auto& [k, sub] : props->items())
        if (value.contains(k)) validate(sub, value[k], path + "." + k, errors);
  }
  if (value.is_array())
    if (auto items = schema.find("items"); items != schema.end())
      for (std::size_t i = 0; i < value.size(); ++i)
        validate(*items, value[i], path + "[" + std::to_string(i) + "]", errors);
}

std::vector<std::string> errors_of(const json& schema, const json& value) {
  std::vector<std::string> errors;
  validate(schema, value, "result", errors);
  return errors;
}

json load_schema() {
  std::ifstream in(kSchema);
  EXPECT_TRUE(in) << kSchema;
  std::stringstream s;
  s << in.rdbuf();
  return json::parse(s.str());
}

json run_json(const std::string& args) {
  const auto r = lockbench::testing::run_command(kBin + " run --world sim --quiet --json " + args);
  EXPECT_EQ(r.status, 0) << r.err;
  return json::parse(r.out);
}

std::string joined(const std::vector<std::string>& errors) {
  std::string out;
  for (std::size_t i = 0; i < errors.size() && i < 20; ++i) out += errors[i] + "\n";
  return out;
}

TEST(ResultSchema, ResultsOfTheLockbenchBinaryValidateAgainstDocsResultSchemaJson) {
  const json schema = load_schema();
  // A race (none on one hot key) and a pool exhaustion (held-tx far above its ceiling).
  const json results = run_json("--strategy none,held-tx,row-lease --rate 20 --duration 20s --keys 2 "
                                "--maximum-pool-size 2 --connection-timeout 2s --partner-latency fixed:500ms");
  ASSERT_EQ(results.size(), 3u);
  bool race = false, timeout = false;
  for (const auto& r : results) {
    EXPECT_TRUE(errors_of(schema, r).empty()) << r["strategy"] << ":\n" << joined(errors_of(schema, r));
    // A full result (no `detail`) has both; only a compact one may lack them (schema: `detail`).
    EXPECT_FALSE(r.contains("detail")) << r["strategy"];
    EXPECT_TRUE(r["trace"].is_object() && r["timeline"].is_array() && r["latency_histogram_ms"].is_object())
        << r["strategy"];
    EXPECT_TRUE(r["provenance"]["created_at"].is_string() && r["provenance"]["git_commit"].is_string() &&
                r["provenance"]["host"].is_string())
        << r["strategy"];
    race = race || r["trace"]["race"].is_object();
    timeout = timeout || r["requests"]["pool_timeout"].get<int>() > 0;
  }
  EXPECT_TRUE(race) << "no run captured a race: the schema's race branch went unchecked";
  EXPECT_TRUE(timeout) << "no run timed out on the pool";
}

TEST(ResultSchema, CommittedCompactResultsValidateToo) {
  // results/ holds `lockbench compact` output: every result there must still validate.
  const json schema = load_schema();
  int checked = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(std::string(LOCKBENCH_SOURCE_DIR) + "/results")) {
    if (e.path().extension() != ".json" || e.path().string().find("/results/full/") != std::string::npos) continue;
    std::ifstream f(e.path());
    const json r = json::parse(f, nullptr, false);
    if (!r.is_object() || !r.contains("schema")) continue;
    EXPECT_EQ(r.value("detail", ""), "compact") << e.path();
    // No timestamp, commit or host: a refresh with unchanged figures changes no file.
    EXPECT_FALSE(r["provenance"].contains("created_at") || r["provenance"].contains("git_commit") ||
                 r["provenance"].contains("host"))
        << e.path();
    EXPECT_TRUE(errors_of(schema, r).empty()) << e.path() << ":\n" << joined(errors_of(schema, r));
    ++checked;
  }
  EXPECT_GT(checked, 100);
}

TEST(ResultSchema, AVirtualThreadsBlockValidatesAndOneWithoutPinningDoesNot) {
  const json schema = load_schema();
  json r = run_json("--strategy synchronized --virtual-threads on --jdk 21 --carriers 2 --rate 10 --keys 100 "
                    "--duration 10s").at(0);
  ASSERT_TRUE(r.contains("virtual_threads"));
  EXPECT_EQ(r["virtual_threads"]["pinning"], true);
  EXPECT_TRUE(errors_of(schema, r).empty()) << joined(errors_of(schema, r));
  r["virtual_threads"].erase("pinning");
  EXPECT_FALSE(errors_of(schema, r).empty());
  r["virtual_threads"]["pinning"] = "yes";
  EXPECT_FALSE(errors_of(schema, r).empty());
}

TEST(ResultSchema, AFaultBlockValidatesAndOneWithoutItsRequiredFieldsDoesNot) {
  const json schema = load_schema();
  json r = run_json("--strategy row-lease --pods 2 --rate 10 --duration 5s --crash-at 1s --pause-at 2s --pause-for 1s").at(0);
  ASSERT_TRUE(r.contains("faults"));
  EXPECT_TRUE(errors_of(schema, r).empty()) << joined(errors_of(schema, r));
  // The real world's process pods add what the runner measured (a block as one of them wrote it).
  r["faults"]["skew_pod"] = 0;
  r["faults"]["crash"] = {{"pod", 1}, {"at_s", 1.02}, {"in_partner_at_crash", 1}, {"crashed_requests", 1},
                          {"locks_held_at_crash", 0}, {"locks_freed_ms", 0.4}, {"sessions_closed_ms", 3.1},
                          {"leases_held_at_crash", 1}, {"lease_left_ms", 1890.0}, {"key_blocked_ms", 1890.0},
                          {"restarted_at_s", 1.6}};
  r["faults"]["pause"] = nullptr;
  EXPECT_TRUE(errors_of(schema, r).empty()) << joined(errors_of(schema, r));
  json missing = r;
  missing["faults"].erase("recovery_ms");
  EXPECT_EQ(errors_of(schema, missing), std::vector<std::string>{"result.faults: missing 'recovery_ms'"});
  json shaped = r;
  shaped["faults"]["crash"].erase("pod");
  EXPECT_EQ(errors_of(schema, shaped), std::vector<std::string>{"result.faults.crash: missing 'pod'"});
}

TEST(ResultSchema, ThePodsAndRecoveryBlocksValidateAndOneWithoutItsRequiredFieldsDoesNot) {
  const json schema = load_schema();
  const json r = run_json("--strategy held-tx --pods 2 --rate 20 --duration 60s --partner-latency lognormal:p50=1.5s,p99=4s "
                          "--readiness on --liveness period=5s,db=on --pod-startup 5s "
                          "--partner-faults '{\"*\":[{\"kind\":\"slow\",\"p\":1,\"ms\":5000,\"from_ms\":20000,\"until_ms\":30000}]}'")
                     .at(0);
  ASSERT_TRUE(r.contains("pods") && r.contains("recovery")) << r.dump().substr(0, 400);
  EXPECT_GT(r["pods"]["restarts"].get<int>(), 0);  // the kill branch's fields, not only zeros
  EXPECT_TRUE(errors_of(schema, r).empty()) << joined(errors_of(schema, r));
  json missing = r;
  missing["pods"].erase("requests_lost");
  EXPECT_EQ(errors_of(schema, missing), std::vector<std::string>{"result.pods: missing 'requests_lost'"});
  json untyped = r;
  untyped["recovery"]["recovery_s"] = "soon";
  EXPECT_EQ(errors_of(schema, untyped).size(), 1u);
  // Each change in a pod's life, [t_s, pod, what], as the real runner's (core/kubelet.hpp).
  ASSERT_FALSE(r["pods"]["events"].empty());
  EXPECT_EQ(r["pods"]["events"][0].size(), 3u);
  json no_events = r;
  no_events["pods"].erase("events");
  EXPECT_EQ(errors_of(schema, no_events), std::vector<std::string>{"result.pods: missing 'events'"});
  json bad_event = r;
  bad_event["pods"]["events"][0] = {{"t_s", 1.0}};
  EXPECT_EQ(errors_of(schema, bad_event).size(), 1u);
}

TEST(ResultSchema, JsonOutputIsAnArrayForOneResultAsForMany) {
  const json one = run_json("--strategy row-lease --rate 5 --duration 5s");
  ASSERT_TRUE(one.is_array());
  EXPECT_EQ(one.size(), 1u);
}

TEST(ResultSchema, TheValidatorRefusesAMissingFieldAWrongTypeAndAValueOutsideAnEnum) {
  const json schema = load_schema();
  json r = run_json("--strategy row-lease --rate 5 --duration 5s").at(0);
  ASSERT_TRUE(errors_of(schema, r).empty()) << joined(errors_of(schema, r));
  json missing = r;
  missing["provenance"].erase("cores");  // git_commit, created_at and host may be absent: a compact result drops them
  EXPECT_EQ(errors_of(schema, missing), std::vector<std::string>{"result.provenance: missing 'cores'"});
  json wrong = r;
  wrong["requests"]["ok"] = "many";
  EXPECT_EQ(errors_of(schema, wrong).size(), 1u);
  json other = r;
  other["schema"] = "lockbench.result/2";
  EXPECT_EQ(errors_of(schema, other).size(), 1u);
  json row = r;
  row["timeline"][0]["active"] = 1.5;  // an integer field
  EXPECT_EQ(errors_of(schema, row).size(), 1u);
}

TEST(ResultSize, A24HourSimulatedRunWritesABoundedTimelineAndASmallResult) {
  const json r = run_json("--strategy held-tx --rate 1 --duration 24h").at(0);
  EXPECT_LE(r["timeline"].size(), 600u);
  EXPECT_GE(r["timeline"].size(), 300u);
  EXPECT_LT(r.dump().size(), 1000000u) << "a day's result should stay well under a megabyte";
  EXPECT_TRUE(errors_of(load_schema(), r).empty()) << joined(errors_of(load_schema(), r));
}

TEST(CompareCommand, Exits0ForTwoRunsOfOneSeedAnd1WhenTheCandidateLostThroughput) {
  const auto dir = std::filesystem::temp_directory_path() / ("lockbench-compare-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string run = kBin + " run --world sim --quiet --strategy held-tx,row-lease --rate 10 --duration 20s --out ";
  ASSERT_EQ(lockbench::testing::run_command(run + (dir / "a.json").string()).status, 0);
  ASSERT_EQ(lockbench::testing::run_command(run + (dir / "b.json").string()).status, 0);
  const std::string compare = kBin + " compare " + (dir / "a.json").string() + " ";
  const auto same = lockbench::testing::run_command(compare + (dir / "b.json").string());
  EXPECT_EQ(same.status, 0) << same.out << same.err;
  EXPECT_NE(same.out.find("**No regression.**"), std::string::npos) << same.out;
  // The candidate's row-lease served 40 % fewer requests per second.
  json worse = json::parse(lockbench::testing::slurp((dir / "b.json").string()));
  for (auto& r : worse)
    if (r["strategy"] == "row-lease") r["throughput_ok_per_s"] = r["throughput_ok_per_s"].get<double>() * 0.6;
  std::ofstream(dir / "c.json") << worse.dump();
  const auto flagged = lockbench::testing::run_command(compare + (dir / "c.json").string() + " --format json");
  EXPECT_EQ(flagged.status, 1) << flagged.out << flagged.err;
  EXPECT_TRUE(json::parse(flagged.out)["regressed"].get<bool>());
  EXPECT_EQ(lockbench::testing::run_command(compare + (dir / "absent.json").string()).status, 2);
  std::filesystem::remove_all(dir);
}

}  // namespace
