// Where the real-world tests find their servers (scripts/test exports both).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>

#include <gtest/gtest.h>

namespace lockbench::test {

inline std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}
inline std::string test_db() { return env_or_empty("LOCKBENCH_TEST_DB"); }
inline std::string test_partner() { return env_or_empty("LOCKBENCH_TEST_PARTNER"); }

// A run id of this test's own. ctest runs tests in parallel against one
// database, and lockbench.rows and the advisory locks are keyed by run: two
// tests with the same fixed id take each other's locks (a fixed 434343 here
// once made a one-success burst show two).
inline std::int64_t private_run_id() {
  std::random_device rd;
  const std::uint64_t v = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  return static_cast<std::int64_t>(v >> 2) + 1;  // positive, as lockbench's own run keys
}

}  // namespace lockbench::test

#define LOCKBENCH_NEED_DB()                                                                                  \
  if (::lockbench::test::test_db().empty())                                                                  \
  GTEST_SKIP() << "LOCKBENCH_TEST_DB is unset: start PostgreSQL (scripts/pg start DIR) and export its URL, " \
                  "or run scripts/test"

#define LOCKBENCH_NEED_PARTNER()                                                                           \
  LOCKBENCH_NEED_DB();                                                                                     \
  if (::lockbench::test::test_partner().empty())                                                           \
  GTEST_SKIP() << "LOCKBENCH_TEST_PARTNER is unset: start fake_partner --port 0 and export "              \
                  "http://127.0.0.1:PORT, or run scripts/test"
