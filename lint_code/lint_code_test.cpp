// lint --code on its labelled corpus (testdata/corpus: small Spring services
// written for these tests; a line that must be found ends in
// `// expect: KIND`), on bad input, and its SARIF against the 2.1.0 schema's
// required structure.
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include <gtest/gtest.h>

#include "lint_code/findings.hpp"
#include "lint_code/render.hpp"
#include "lint_code/scan.hpp"

namespace fs = std::filesystem;
using namespace lockbench::lint_code;

namespace {

const std::string kCorpus = std::string(LOCKBENCH_LINT_CODE_TESTDATA) + "/corpus";

#define REQUIRE_GRAMMAR()                                                                          \
  if (!java_grammar_available())                                                                   \
  GTEST_SKIP() << "no Java grammar in this build (libtree-sitter-dev and npm tree-sitter-java)"

using Label = std::tuple<std::string, int, std::string>;  // file, line, kind

std::set<Label> labels_of(const std::string& root) {
  std::set<Label> out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (e.path().extension() != ".java") continue;
    std::ifstream in(e.path());
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      const auto at = line.find("// expect: ");
      if (at != std::string::npos)
        out.insert({fs::relative(e.path(), root).generic_string(), n, line.substr(at + 11)});
    }
  }
  return out;
}

std::set<Label> found_of(const std::vector<Finding>& fs) {
  std::set<Label> out;
  for (const auto& f : fs) out.insert({f.file, f.line, f.kind});
  return out;
}

const Finding* at(const std::vector<Finding>& fs, const std::string& file, const std::string& kind) {
  for (const auto& f : fs)
    if (f.file == file && f.kind == kind) return &f;
  return nullptr;
}

struct Corpus {
  Scan scan;
  std::vector<Finding> findings;
};
const Corpus& corpus() {
  static const Corpus c = [] {
    Corpus k{scan_tree(kCorpus), {}};
    k.findings = analyze(k.scan.files, {});
    return k;
  }();
  return c;
}

}  // namespace

TEST(LintCodeCorpus, has_at_least_forty_java_files_and_every_kind) {
  REQUIRE_GRAMMAR();
  EXPECT_GE(corpus().scan.counts.java_files, 40);
  std::set<std::string> kinds;
  for (const auto& [file, line, kind] : labels_of(kCorpus)) kinds.insert(kind);
  for (const auto& k : finding_kinds()) EXPECT_TRUE(kinds.count(k)) << "no labelled " << k << " in the corpus";
}

TEST(LintCodeCorpus, precision_and_recall_are_at_least_90_percent_per_kind) {
  REQUIRE_GRAMMAR();
  const auto expected = labels_of(kCorpus);
  const auto found = found_of(corpus().findings);
  for (const auto& kind : finding_kinds()) {
    int tp = 0, fp = 0, fn = 0;
    for (const auto& l : found)
      if (std::get<2>(l) == kind) (expected.count(l) ? tp : fp)++;
    for (const auto& l : expected)
      if (std::get<2>(l) == kind && !found.count(l)) {
        ++fn;
        ADD_FAILURE() << "missed: " << std::get<0>(l) << ":" << std::get<1>(l) << " " << kind;
      }
    for (const auto& l : found)
      if (std::get<2>(l) == kind && !expected.count(l))
        ADD_FAILURE() << "not expected: " << std::get<0>(l) << ":" << std::get<1>(l) << " " << kind;
    const double precision = tp + fp ? static_cast<double>(tp) / (tp + fp) : 1;
    const double recall = tp + fn ? static_cast<double>(tp) / (tp + fn) : 1;
    std::printf("lint --code corpus: %-22s labelled %2d, found %2d, precision %5.1f %%, recall %5.1f %%\n", kind.c_str(),
                tp + fn, tp + fp, 100 * precision, 100 * recall);
    EXPECT_GE(precision, 0.9) << kind;
    EXPECT_GE(recall, 0.9) << kind;
    EXPECT_GT(tp, 0) << kind;
  }
}

TEST(LintCodeCorpus, a_bean_call_gives_the_path_and_the_calls_in_the_transaction) {
  REQUIRE_GRAMMAR();
  const Finding* f = at(corpus().findings, "tx/MethodTxViaBean.java", "remote-in-tx");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->remote_calls, 2);  // register twice: switch-primary's shape
  ASSERT_EQ(f->path.size(), 4u);
  EXPECT_NE(f->path[0].text.find("MethodTxViaBean.switchPrimary (@Transactional)"), std::string::npos);
  EXPECT_EQ(f->path[3].file, "common/PartnerClient.java");
  EXPECT_NE(f->path[3].text.find("RestTemplate.postForObject"), std::string::npos);
  EXPECT_EQ(f->family, "held-tx");
  EXPECT_EQ(f->strategy, "held-tx:wait");
}

TEST(LintCodeCorpus, self_invocation_is_said_and_not_supported_alone_starts_no_transaction) {
  REQUIRE_GRAMMAR();
  const Finding* f = at(corpus().findings, "tx/SelfInvocation.java", "remote-in-tx");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->message.find("self-invocation"), std::string::npos);
  EXPECT_NE(f->path[2].text.find("bypassed by the proxy"), std::string::npos);
  EXPECT_EQ(at(corpus().findings, "tx/NotSupportedEntry.java", "remote-in-tx"), nullptr);
  // A plain helper of its own class (no attributes for the proxy to bypass): the path says
  // self-invocation, the message does not claim a bypass (found on a real service, #45).
  const Finding* h = at(corpus().findings, "tx/TxWithHelper.java", "remote-in-tx");
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->message.find("bypasses the proxy"), std::string::npos) << h->message;
  EXPECT_NE(h->path[2].text.find("(self-invocation)"), std::string::npos) << h->path[2].text;
}

TEST(LintCodeCorpus, a_jdbc_transaction_by_hand_holds_the_connection_until_its_commit) {
  REQUIRE_GRAMMAR();
  const Finding* f = at(corpus().findings, "tx/JdbcTxByHand.java", "remote-in-tx");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->path[0].text.find("c.setAutoCommit(false) (a JDBC transaction until c.commit())"), std::string::npos)
      << f->path[0].text;
  EXPECT_EQ(f->path.back().file, "common/PartnerClient.java");
  EXPECT_EQ(at(corpus().findings, "tx/JdbcCommitFirst.java", "remote-in-tx"), nullptr);  // committed before the call
}

TEST(LintCodeCorpus, read_only_with_a_remote_call_still_holds_the_connection) {
  REQUIRE_GRAMMAR();
  const Finding* f = at(corpus().findings, "tx/ReadOnlyRemote.java", "remote-in-tx");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->message.find("readOnly does not release the connection"), std::string::npos);
}

TEST(LintCodeCorpus, a_syntax_error_is_a_note_and_the_rest_of_the_file_is_read) {
  REQUIRE_GRAMMAR();
  const JavaFile* broken = nullptr;
  for (const auto& f : corpus().scan.files)
    if (f.path == "bad/BrokenService.java") broken = &f;
  ASSERT_NE(broken, nullptr);
  EXPECT_FALSE(broken->error_lines.empty());
  EXPECT_NE(at(corpus().findings, "bad/BrokenService.java", "remote-in-tx"), nullptr);
  EXPECT_NE(scan_summary(corpus().scan).find("note: bad/BrokenService.java: syntax errors at line 14"),
            std::string::npos)
      << scan_summary(corpus().scan);
  EXPECT_EQ(corpus().scan.counts.not_java, 1);  // README.md
}

TEST(LintCodeCorpus, the_depth_limits_how_far_calls_are_followed) {
  REQUIRE_GRAMMAR();
  // DeepChain.run -> Orchestrator.step -> PartnerClient.register -> RestTemplate: two methods deep.
  EXPECT_NE(at(analyze(corpus().scan.files, {.depth = 2}), "tx/DeepChain.java", "remote-in-tx"), nullptr);
  EXPECT_EQ(at(analyze(corpus().scan.files, {.depth = 1}), "tx/DeepChain.java", "remote-in-tx"), nullptr);
}

TEST(LintCodeCorpus, a_monitor_pins_on_virtual_threads_below_jdk_24_a_reentrant_lock_does_not) {
  REQUIRE_GRAMMAR();
  const auto on21 = analyze(corpus().scan.files, {.virtual_threads = true, .jdk = 21});
  const auto on24 = analyze(corpus().scan.files, {.virtual_threads = true, .jdk = 24});
  ASSERT_NE(at(on21, "sync/SyncMethodService.java", "synchronized"), nullptr);
  EXPECT_TRUE(at(on21, "sync/SyncMethodService.java", "synchronized")->pins);
  EXPECT_FALSE(at(on21, "sync/ReentrantLockService.java", "synchronized")->pins);
  EXPECT_FALSE(at(on24, "sync/SyncMethodService.java", "synchronized")->pins);
  EXPECT_FALSE(at(corpus().findings, "sync/SyncMethodService.java", "synchronized")->pins);  // platform threads
}

// --- SARIF 2.1.0: the schema's required properties and types --------------

namespace {

// The required structure of sarif-schema-2.1.0.json for what lint writes:
// sarifLog {version "2.1.0", runs}, run {tool}, tool {driver}, toolComponent
// {name}, reportingDescriptor {id}, result {message}, message {text|id},
// location.physicalLocation {artifactLocation|address}, region.startLine >= 1,
// codeFlow {threadFlows}, threadFlow {locations}, threadFlowLocation.
std::vector<std::string> sarif_errors(const nlohmann::json& j) {
  std::vector<std::string> e;
  const auto need = [&](const nlohmann::json& o, const char* key, const std::string& where) {
    if (!o.is_object() || !o.contains(key)) {
      e.push_back(where + ": '" + key + "' is required");
      return false;
    }
    return true;
  };
  const auto message = [&](const nlohmann::json& m, const std::string& where) {
    if (!m.is_object() || (!(m.contains("text") && m["text"].is_string()) && !m.contains("id")))
      e.push_back(where + ": a message needs text or id");
  };
  const auto location = [&](const nlohmann::json& l, const std::string& where) {
    if (!l.is_object()) return e.push_back(where + ": not an object");
    if (!l.contains("physicalLocation")) return;
    const auto& p = l["physicalLocation"];
    if (!p.contains("artifactLocation") && !p.contains("address"))
      e.push_back(where + ".physicalLocation: artifactLocation or address is required");
    if (p.contains("artifactLocation") && !p["artifactLocation"].value("uri", std::string()).size())
      e.push_back(where + ".artifactLocation.uri: empty");
    if (p.contains("region") && (!p["region"].contains("startLine") || !p["region"]["startLine"].is_number_integer() ||
                                 p["region"]["startLine"].get<int>() < 1))
      e.push_back(where + ".region.startLine: an integer >= 1");
    if (l.contains("message")) message(l["message"], where + ".message");
  };
  if (!need(j, "version", "sarifLog") || j["version"] != "2.1.0") e.push_back("sarifLog.version: must be \"2.1.0\"");
  if (!need(j, "runs", "sarifLog") || !j["runs"].is_array()) return e;
  for (std::size_t r = 0; r < j["runs"].size(); ++r) {
    const auto& run = j["runs"][r];
    const std::string rw = "runs[" + std::to_string(r) + "]";
    if (!need(run, "tool", rw) || !need(run["tool"], "driver", rw + ".tool") ||
        !need(run["tool"]["driver"], "name", rw + ".tool.driver"))
      continue;
    std::set<std::string> rule_ids;
    for (const auto& rule : run["tool"]["driver"].value("rules", nlohmann::json::array()))
      if (need(rule, "id", rw + ".tool.driver.rules[]")) rule_ids.insert(rule["id"].get<std::string>());
    for (std::size_t i = 0; i < run.value("results", nlohmann::json::array()).size(); ++i) {
      const auto& res = run["results"][i];
      const std::string w = rw + ".results[" + std::to_string(i) + "]";
      if (need(res, "message", w)) message(res["message"], w + ".message");
      if (res.contains("level")) {
        const std::string l = res["level"];
        if (l != "none" && l != "note" && l != "warning" && l != "error") e.push_back(w + ".level: " + l);
      }
      if (res.contains("ruleId") && !rule_ids.count(res["ruleId"])) e.push_back(w + ".ruleId: not among the rules");
      for (const auto& l : res.value("locations", nlohmann::json::array())) location(l, w + ".locations[]");
      for (const auto& cf : res.value("codeFlows", nlohmann::json::array())) {
        if (!need(cf, "threadFlows", w + ".codeFlows[]") || cf["threadFlows"].empty()) continue;
        for (const auto& tf : cf["threadFlows"]) {
          if (!need(tf, "locations", w + ".threadFlows[]") || tf["locations"].empty()) {
            e.push_back(w + ".threadFlows[].locations: at least one");
            continue;
          }
          for (const auto& tl : tf["locations"])
            if (tl.contains("location")) location(tl["location"], w + ".threadFlowLocation");
        }
      }
    }
  }
  return e;
}

}  // namespace

TEST(LintCodeSarif, the_log_has_the_2_1_0_required_structure_with_the_path_as_a_code_flow) {
  REQUIRE_GRAMMAR();
  const auto sarif = render_sarif(corpus().scan, corpus().findings);
  const auto errors = sarif_errors(sarif);
  for (const auto& e : errors) ADD_FAILURE() << e;
  const auto& results = sarif["runs"][0]["results"];
  EXPECT_EQ(results.size(), corpus().findings.size());
  bool flow = false;
  for (const auto& r : results)
    if (r.contains("codeFlows") && r["codeFlows"][0]["threadFlows"][0]["locations"].size() >= 3) flow = true;
  EXPECT_TRUE(flow) << "no result carries a call path of three steps";
}

TEST(LintCodeSarif, the_check_refuses_a_log_without_what_the_schema_requires) {
  nlohmann::json bad = {{"version", "2.0.0"},
                        {"runs", {{{"tool", {{"driver", nlohmann::json::object()}}},
                                   {"results", {{{"level", "fatal"}, {"locations", {{{"physicalLocation",
                                                                                      {{"region", {{"startLine", 0}}}}}}}}}}}}}}};
  EXPECT_GE(sarif_errors(bad).size(), 2u);  // version; driver name
  bad["version"] = "2.1.0";
  bad["runs"][0]["tool"]["driver"]["name"] = "x";
  const auto e = sarif_errors(bad);
  EXPECT_EQ(e.size(), 4u) << (e.empty() ? "" : e[0]);  // message, level, artifactLocation, startLine
}

TEST(LintCodeText, json_and_text_carry_each_finding_with_its_family) {
  REQUIRE_GRAMMAR();
  const auto j = render_json(corpus().scan, corpus().findings);
  EXPECT_EQ(j["verdict"], "flagged");
  EXPECT_EQ(j["findings"].size(), corpus().findings.size());
  const std::string text = render_text(corpus().scan, corpus().findings);
  EXPECT_NE(text.find("FLAG remote-in-tx: tx/ClassLevelTxService.java:21:"), std::string::npos) << text;
  EXPECT_NE(text.find("family: held-tx (lockbench explain held-tx)"), std::string::npos);
  EXPECT_NE(text.find("NOTE unresolved: tx/Ambiguous.java:14:"), std::string::npos);
}

// --- bad input ---------------------------------------------------------

TEST(LintCodeScan, skips_and_counts_what_it_does_not_read_and_never_leaves_the_directory) {
  REQUIRE_GRAMMAR();
  const fs::path base = fs::temp_directory_path() / ("lint_code_scan_" + std::to_string(::getpid()));
  fs::remove_all(base);
  const fs::path dir = base / "svc", outside = base / "outside";
  fs::create_directories(dir / "src");
  fs::create_directories(outside);
  const std::string tx_remote =
      "@Service @Transactional class Out { RestTemplate rt; void f() { rt.getForObject(\"u\", String.class); } }\n";
  std::ofstream(outside / "Out.java") << tx_remote;
  std::ofstream(dir / "src" / "In.java") << tx_remote;
  std::ofstream(dir / "notes.txt") << "not java";
  {
    std::ofstream bin(dir / "src" / "Blob.java", std::ios::binary);
    bin << "class A {" << std::string(1, '\0') << "}";
  }
  {
    std::ofstream big(dir / "src" / "Huge.java");
    big << "class Huge {\n" << std::string((4 << 20) + 10, ' ') << "}\n";
  }
  fs::create_directory_symlink(dir, dir / "src" / "loop");           // a loop
  fs::create_directory_symlink(outside, dir / "src" / "elsewhere");  // leaves the directory
  fs::create_symlink(outside / "Out.java", dir / "src" / "Linked.java");

  const Scan scan = scan_tree(dir.string(), 2);
  EXPECT_EQ(scan.counts.java_files, 1);
  EXPECT_EQ(scan.counts.not_java, 1);
  EXPECT_EQ(scan.counts.binary, 1);
  EXPECT_EQ(scan.counts.too_large, 1);
  EXPECT_EQ(scan.counts.symlinks, 1);
  EXPECT_EQ(scan.counts.outside, 2);
  const auto findings = analyze(scan.files, {});
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].file, "src/In.java");
  const std::string summary = scan_summary(scan);
  EXPECT_NE(summary.find("skipped: 1 not Java, 1 over 4 MiB, 1 binary"), std::string::npos) << summary;
  EXPECT_THROW(scan_tree((dir / "notes.txt").string()), std::invalid_argument);
  fs::remove_all(base);
}
