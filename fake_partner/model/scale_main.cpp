// partner_model_scale: what a compact reset of many persons costs the model
// (issue 14): time and resident memory of a person_range reset, of correct
// promotions on random persons, and of the end-of-run check.
// Usage: partner_model_scale [persons=10000000] [promotions=2000] [listed]
// "listed" seeds the same persons as a persons[] list instead of a range: the anchor to compare with.
// Prints one line per phase and the persons that came into being; the
// figure to watch is the memory, which must follow the touched persons.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>

#include "base/random.hpp"
#include "fake_partner/model/partner.hpp"

using namespace lockbench;
using namespace lockbench::partner;

namespace {
// VmRSS of this process in KiB (Linux); 0 when unknown.
long rss_kib() {
  std::ifstream status("/proc/self/status");
  std::string key;
  long value = 0;
  while (status >> key) {
    if (key == "VmRSS:") {
      status >> value;
      return value;
    }
    status.ignore(1 << 10, '\n');
  }
  return 0;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

int main(int argc, char** argv) {
  const long long persons = argc > 1 ? std::atoll(argv[1]) : 10'000'000;
  const long promotions = argc > 2 ? std::atol(argv[2]) : 2000;
  const bool listed = argc > 3 && std::string(argv[3]) == "listed";
  if (persons <= 0 || persons > kRangeCountMax || promotions <= 0 || promotions > 100'000'000) {
    std::fprintf(stderr, "usage: partner_model_scale [persons 1..1000000000] [promotions 1..100000000]\n");
    return 2;
  }
  const long rss0 = rss_kib();
  Partner p(Config::from_json({{"latency", {{"*", {{"dist", "fixed"}, {"ms", 0}}}}}}));
  ResetSpec spec;
  if (listed) spec = ResetSpec::persons_with_two_identities(static_cast<int>(std::min<long long>(persons, 100'000'000)));
  else spec.person_range = PersonRange{persons, 2};
  auto t0 = std::chrono::steady_clock::now();
  p.reset(spec, Duration(0));
  std::printf("reset of %lld %s persons: %.6f s, rss +%ld KiB\n", persons, listed ? "listed" : "range", seconds_since(t0),
              rss_kib() - rss0);

  Rng rng(1, "scale");
  std::set<long long> promoted;  // persons whose primary is google-oauth2 now
  Duration now{0};
  Tags tags;
  const auto one = [&](const Call& c) {
    const Plan plan = p.arrive(c, tags, now);
    const bool ok = p.execute(plan.call_id, now).ok();
    p.complete(plan.call_id, now);
    now += std::chrono::microseconds(10);
    return ok;
  };
  long failed = 0;
  t0 = std::chrono::steady_clock::now();
  for (long i = 1; i <= promotions; ++i) {
    const long long k = 1 + static_cast<long long>(rng.next() % static_cast<std::uint64_t>(persons));
    const std::string a = "auth0|u" + std::to_string(k), g = "google-oauth2|u" + std::to_string(k);
    const bool to_google = promoted.insert(k).second;
    if (!to_google) promoted.erase(k);
    const std::string& from = to_google ? a : g;
    const std::string& to = to_google ? g : a;
    tags.op_id = static_cast<std::uint64_t>(i);
    tags.op_step = 1;
    failed += !one(Call::unlink(from, to));
    tags.op_step = 2;
    failed += !one(Call::link(to, from));
  }
  std::printf("%ld promotions (%ld calls failed): %.6f s, rss +%ld KiB, persons touched %zu\n", promotions, failed,
              seconds_since(t0), rss_kib() - rss0, p.persons_touched());
  t0 = std::chrono::steady_clock::now();
  const CheckReport r = p.check(now);
  long long violations = 0;
  for (auto kind : kCheckKinds)
    if (is_violation_kind(kind)) violations += r.count(kind);
  std::printf("check: %.6f s, %lld violations, %lld episodes, rss +%ld KiB\n", seconds_since(t0), violations,
              static_cast<long long>(r.episodes), rss_kib() - rss0);
  return violations == 0 && failed == 0 ? 0 : 1;
}
