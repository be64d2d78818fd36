// What a fake partner has seen, for tests that wait on an observable event
// (with testing::wait_for, under a deadline) instead of a fixed sleep counted
// from before the run: a run holds its lock or lease during each partner call,
// so "the partner's first call arrived" is "the run is in its calls".
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include <httplib.h>
#include <nlohmann/json.hpp>

namespace lockbench::test {

// The calls a fake partner at `url` (http://127.0.0.1:PORT) has seen arrive
// since its last reset, all endpoints (its /admin/metrics "arrivals"); -1 when
// it does not answer.
inline std::int64_t partner_arrivals(const std::string& url) {
  httplib::Client c(url);
  c.set_connection_timeout(std::chrono::seconds(1));
  c.set_read_timeout(std::chrono::seconds(2));
  const auto res = c.Get("/admin/metrics");
  if (!res || res->status != 200) return -1;
  const auto j = nlohmann::json::parse(res->body, nullptr, false);
  if (!j.is_object() || !j.contains("arrivals") || !j["arrivals"].is_object()) return -1;
  std::int64_t n = 0;
  for (const auto& [name, count] : j["arrivals"].items()) n += count.get<std::int64_t>();
  return n;
}

}  // namespace lockbench::test
