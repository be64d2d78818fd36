// Where the real-world tests find their servers (scripts/test exports both).
#pragma once

#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

namespace lockbench::test {

inline std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}
inline std::string test_db() { return env_or_empty("LOCKBENCH_TEST_DB"); }
inline std::string test_partner() { return env_or_empty("LOCKBENCH_TEST_PARTNER"); }

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
