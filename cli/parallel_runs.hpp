// Independent runs on several threads, their results handed on in order.
//
// A sweep's simulator runs share nothing (each has its own settings, seed,
// event loop, partner model and recorder), so they can run side by side; each
// result is the same, byte for byte, as when it runs alone. Real-world runs are
// never given to this with more than one job: they share one database and one
// partner, and parallel runs would disturb each other's measurements.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

namespace lockbench::cli {

// The default for --jobs: the machine's cores (1 when unknown).
int default_jobs();
// --jobs N: 1..256, else SettingError naming the flag and the accepted range.
int parse_jobs(const std::string& text);

// Runs run(0) .. run(count - 1) on up to `jobs` threads (jobs <= 1: one after
// the other on the calling thread). done(i, result) is called on the calling
// thread in index order, as soon as runs 0..i have all finished, so results can
// be written as they come, in the order a sequential loop would write them.
// When a run throws, no further run starts; the ones running finish, done() is
// called for every run before the failed one, and the exception is rethrown.
void run_indexed(std::size_t count, int jobs, const std::function<nlohmann::json(std::size_t)>& run,
                 const std::function<void(std::size_t, nlohmann::json&&)>& done);

}  // namespace lockbench::cli
