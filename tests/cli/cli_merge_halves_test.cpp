// Two runners' p99 (issue 43): `lockbench merge` of a run's runners adds
// their latency histograms bucket by bucket and reads the quantiles off the
// sum. Merged from two identical halves, the quantiles must be the ones of
// one half (a histogram doubled has the same quantiles), and within the
// histogram's resolution (1/8 of a power of two) of the exact ones: if the
// merge were wrong, two runners' p99 would differ from one runner's by the
// merge and not by the machine.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/cli/run_command.hpp"

namespace lockbench {
namespace cli_merge_halves_test {

using nlohmann::json;
using testing::run_command;
namespace fs = std::filesystem;

// A simulator result dressed as shard `index` of `count` of one real run (the
// fields merge checks: the shard block, a shared run and start).
json as_shard(json r, int index, int count) {
  r["run_id"] = "targets-4343-1700000000000";  // a real run's, as every runner of one run shares it
  r["shard"] = {{"index", index},         {"count", count},   {"slice", std::to_string(index) + "/" + std::to_string(count)},
                {"run", 4343},            {"start_unix_ms", 1700000000000}, {"partner_read", index == 0},
                {"not_ended", json::array()}};
  return r;
}

json merged(const fs::path& dir, const std::vector<json>& shards) {
  std::string files;
  for (std::size_t i = 0; i < shards.size(); ++i) {
    const fs::path f = dir / ("runner-" + std::to_string(i) + "-of-" + std::to_string(shards.size()) + ".json");
    std::ofstream(f) << shards[i].dump();
    files += " " + f.string();
  }
  const fs::path out = dir / ("merged-" + std::to_string(shards.size()));
  const auto r = run_command(std::string(LOCKBENCH_BIN) + " merge" + files + " --no-charts --out " + out.string());
  EXPECT_EQ(r.status, 0) << r.err;
  return json::parse(testing::slurp((out / "merged.json").string()));
}

TEST(MergeHalves, TwoIdenticalHalvesMergeToTheQuantilesOfOneHalfWithinTheHistogramsResolution) {
  const fs::path dir = fs::temp_directory_path() / ("lockbench-merge-halves-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  // A spread of latencies with a tail: held-tx near saturation.
  const auto sim = run_command(std::string(LOCKBENCH_BIN) +
                               " run --quiet --json --world sim --scenario single-call --strategy held-tx --maximum-pool-size 10"
                               " --partner-latency lognormal:p50=200ms,p99=900ms --rate 40 --duration 60s --seed 9");
  ASSERT_EQ(sim.status, 0) << sim.err;
  const json one = json::parse(sim.out).at(0);
  const json alone = merged(dir, {as_shard(one, 0, 1)});
  const json halves = merged(dir, {as_shard(one, 0, 2), as_shard(one, 1, 2)});
  EXPECT_EQ(halves["requests"]["total"].get<std::int64_t>(), 2 * one["requests"]["total"].get<std::int64_t>());
  for (const char* block : {"latency_ms", "latency_ok_ms"})
    for (const char* q : {"p50", "p90", "p99", "p999", "max"}) {
      EXPECT_DOUBLE_EQ(halves[block][q].get<double>(), alone[block][q].get<double>()) << block << "." << q;
      // The histogram's quantile is its bucket's upper bound: within 1/8 of a power of two of the exact one.
      const double exact = one[block][q].get<double>(), read = halves[block][q].get<double>();
      EXPECT_NEAR(read / exact, 1.0, 0.125) << block << "." << q << ": " << read << " against " << exact;
    }
  EXPECT_NEAR(halves["latency_ok_ms"]["mean"].get<double>(), one["latency_ok_ms"]["mean"].get<double>(), 1e-6);
  fs::remove_all(dir);
}

}  // namespace cli_merge_halves_test
}  // namespace lockbench
