// The marks of a sharded real run (contract in shard_marks.hpp). Each poll
// opens nothing new: one session per wait, statements of one line each.
#include "real/shard_marks.hpp"

#include <chrono>
#include <optional>
#include <set>
#include <thread>

#include "base/redact.hpp"
#include "real/pg_conn.hpp"

namespace lockbench::real {

namespace {

constexpr auto kPoll = std::chrono::milliseconds(50);

std::string slice(int index, int count) { return std::to_string(index) + "/" + std::to_string(count); }

// Upserts shard `id`'s mark: `what` with `num`.
void put_mark(pqxx::connection& c, std::int64_t run, int id, const std::string& what, std::int64_t num) {
  pqxx::nontransaction tx(c);
  tx.exec_params(
      "INSERT INTO lockbench.rows (run, tbl, id, text, num) VALUES ($1, 0, $2, $3, $4) "
      "ON CONFLICT (run, tbl, id, seq) DO UPDATE SET text = EXCLUDED.text, num = EXCLUDED.num",
      run, id, what, num);
}

// The ids of the marks that say `what` (and carry `num`, when given).
std::set<int> marks_saying(pqxx::connection& c, std::int64_t run, const std::string& what,
                           std::optional<std::int64_t> num) {
  pqxx::nontransaction tx(c);
  const pqxx::result r =
      num ? tx.exec_params("SELECT id FROM lockbench.rows WHERE run = $1 AND tbl = 0 AND text = $2 AND num = $3", run,
                           what, *num)
          : tx.exec_params("SELECT id FROM lockbench.rows WHERE run = $1 AND tbl = 0 AND text = $2", run, what);
  std::set<int> out;
  for (const auto& row : r) out.insert(row[0].as<int>());
  return out;
}

std::string missing_text(const std::set<int>& have, int count) {
  std::string out;
  for (int k = 1; k < count; ++k)
    if (!have.contains(k)) out += (out.empty() ? "" : ", ") + std::to_string(k);
  return out;
}

}  // namespace

std::int64_t unix_ms_now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool sleep_until_unix_ms(std::int64_t start, const std::function<bool()>& should_stop) {
  for (;;) {
    if (should_stop && should_stop()) return false;
    const std::int64_t left = start - unix_ms_now();
    if (left <= 0) return true;
    std::this_thread::sleep_for(std::min<std::chrono::milliseconds>(std::chrono::milliseconds(left), kPoll));
  }
}

ShardMarks::ShardMarks(std::string db_url, std::string application_name, std::int64_t run, int index, int count)
    : url_(std::move(db_url)), name_(std::move(application_name)), run_(run), index_(index), count_(count) {}

void ShardMarks::clear() const {
  auto c = open_session(url_, name_);
  create_schema(*c);
  pqxx::nontransaction tx(*c);
  tx.exec_params("DELETE FROM lockbench.rows WHERE run = $1", marks_run(run_));
}

std::int64_t ShardMarks::announce(Duration wait, const std::function<bool()>& should_stop) const {
  auto c = open_session(url_, name_);
  const auto deadline = std::chrono::steady_clock::now() + wait;
  for (;;) {
    const std::set<int> joined = marks_saying(*c, marks_run(run_), "joined", std::nullopt);
    if (missing_text(joined, count_).empty()) break;
    if (std::chrono::steady_clock::now() >= deadline || (should_stop && should_stop()))
      throw SettingError("--shard " + slice(index_, count_) + ": shard(s) " + missing_text(joined, count_) +
                         " did not join run " + std::to_string(run_) + " within " + format_duration(wait) +
                         " (every runner needs the same --targets and --db; --shard-wait waits longer)");
    std::this_thread::sleep_for(kPoll);
  }
  const std::int64_t start = unix_ms_now() + std::chrono::duration_cast<std::chrono::milliseconds>(kLead).count();
  put_mark(*c, marks_run(run_), 0, "ready", start);
  return start;
}

std::int64_t ShardMarks::await_start(Duration wait, const std::function<bool()>& should_stop) const {
  auto c = open_session(url_, name_);
  const auto deadline = std::chrono::steady_clock::now() + wait;
  for (;;) {
    put_mark(*c, marks_run(run_), index_, "joined", unix_ms_now());
    pqxx::nontransaction tx(*c);
    const pqxx::result r = tx.exec_params(
        "SELECT num FROM lockbench.rows WHERE run = $1 AND tbl = 0 AND id = 0 AND text = 'ready'", marks_run(run_));
    tx.commit();
    if (!r.empty() && r[0][0].as<std::int64_t>() > unix_ms_now()) return r[0][0].as<std::int64_t>();
    if (std::chrono::steady_clock::now() >= deadline || (should_stop && should_stop()))
      throw SettingError("--shard " + slice(index_, count_) + ": shard 0 did not announce run " + std::to_string(run_) +
                         "'s start within " + format_duration(wait) +
                         " (start shard 0 with the same --targets and --db; --shard-wait waits longer)");
    std::this_thread::sleep_for(kPoll);
  }
}

void ShardMarks::ended(std::int64_t start) const {
  auto c = open_session(url_, name_);
  put_mark(*c, marks_run(run_), index_, "ended", start);
}

std::vector<int> ShardMarks::await_ended(std::int64_t start, Duration wait,
                                         const std::function<bool()>& should_stop) const {
  auto c = open_session(url_, name_);
  const auto deadline = std::chrono::steady_clock::now() + wait;
  std::set<int> ended;
  for (;;) {
    ended = marks_saying(*c, marks_run(run_), "ended", start);
    if (missing_text(ended, count_).empty() || std::chrono::steady_clock::now() >= deadline ||
        (should_stop && should_stop()))
      break;
    std::this_thread::sleep_for(kPoll);
  }
  std::vector<int> missing;
  for (int k = 1; k < count_; ++k)
    if (!ended.contains(k)) missing.push_back(k);
  return missing;
}

}  // namespace lockbench::real
