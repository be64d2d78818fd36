// partner_model_throughput: how many calls per second the model takes on the
// simulator's path (arrive + execute + complete, typed, no JSON).
// Usage: partner_model_throughput [calls=2000000] [persons=1000]
// Mix: correct promotions (unlink step 1, link step 2) over `persons`, user
// reads and keyed charges; lognormal latency and a 1% error fault everywhere.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "fake_partner/model/partner.hpp"

using namespace lockbench;
using namespace lockbench::partner;

int main(int argc, char** argv) {
  const long calls = argc > 1 ? std::atol(argv[1]) : 2000000;
  const int persons = argc > 2 ? std::atoi(argv[2]) : 1000;
  if (calls <= 0 || persons <= 0) {
    std::fprintf(stderr, "usage: partner_model_throughput [calls > 0] [persons > 0]\n");
    return 2;
  }
  Partner p(Config::from_json({{"latency", {{"*", {{"dist", "lognormal"}, {"p50_ms", 100}, {"p99_ms", 900}}}}},
                               {"faults", {{"*", {{{"kind", "error"}, {"p", 0.01}, {"status", 503}}}}}}}));
  p.reset(ResetSpec::persons_with_two_identities(persons), Duration(0));
  // Per person the four calls of two promotions that undo each other, then a read.
  std::vector<Call> script;
  for (int i = 1; i <= persons; ++i) {
    const std::string a = "auth0|u" + std::to_string(i), g = "google-oauth2|u" + std::to_string(i);
    script.push_back(Call::unlink(a, g));
    script.push_back(Call::link(g, a));
    script.push_back(Call::unlink(g, a));
    script.push_back(Call::link(a, g));
    script.push_back(Call::get_user(a));
    script.push_back(Call::charge("o" + std::to_string(i), 100, "eur"));
  }
  Duration now{0};
  Tags tags;
  long ok = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < calls; ++i) {
    const Call& c = script[static_cast<std::size_t>(i) % script.size()];
    const long step = i % 6;
    tags.op_id = static_cast<std::uint64_t>(i / 2 + 1);
    tags.op_step = step < 4 ? static_cast<int>(step % 2 + 1) : 0;
    tags.idempotency_key = step == 5 ? "k" + std::to_string(i % 5000) : std::string();
    const Plan plan = p.arrive(c, tags, now);
    ok += p.execute(plan.call_id, now + plan.apply_after).ok();
    p.complete(plan.call_id, now + plan.delay);
    now += std::chrono::microseconds(10);
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%ld calls in %.3f s: %.0f calls/s (%ld answered 2xx)\n", calls, s, static_cast<double>(calls) / s, ok);
  std::printf("%s\n", p.check(now).to_json()["counts"].dump().c_str());
  return 0;
}
