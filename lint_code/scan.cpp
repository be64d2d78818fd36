#include "lint_code/scan.hpp"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <system_error>
#include <thread>

namespace lockbench::lint_code {

namespace fs = std::filesystem;

namespace {

bool inside(const fs::path& root, const fs::path& p) {
  auto r = root.begin(), q = p.begin();
  for (; r != root.end(); ++r, ++q)
    if (q == p.end() || *r != *q) return false;
  return true;
}

// The Java files under `root`, relative paths; counts what is skipped.
std::vector<fs::path> list_java(const fs::path& root, ScanCounts& c) {
  std::vector<fs::path> out;
  std::error_code ec;
  // Symbolic links are not followed: a link is looked at, counted, and left.
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end;
  if (ec) throw std::invalid_argument("--code: '" + root.string() + "': " + ec.message());
  for (; it != end; it.increment(ec)) {
    if (ec) {
      ++c.unreadable;
      ec.clear();
      continue;
    }
    const fs::directory_entry& e = *it;
    if (e.is_symlink(ec)) {
      const fs::path target = fs::weakly_canonical(e.path(), ec);
      if (ec || !inside(root, target))
        ++c.outside;
      else
        ++c.symlinks;
      ec.clear();
      continue;
    }
    if (e.is_directory(ec)) continue;
    if (!e.is_regular_file(ec)) continue;
    if (e.path().extension() != ".java") {
      ++c.not_java;
      continue;
    }
    out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

enum class ReadResult { ok, too_large, binary, unreadable };

ReadResult read_source(const fs::path& p, std::int64_t max_bytes, std::string& out) {
  std::error_code ec;
  const auto size = fs::file_size(p, ec);
  if (ec) return ReadResult::unreadable;
  if (static_cast<std::int64_t>(size) > max_bytes) return ReadResult::too_large;
  std::ifstream in(p, std::ios::binary);
  if (!in) return ReadResult::unreadable;
  out.resize(size);
  in.read(out.data(), static_cast<std::streamsize>(size));
  out.resize(static_cast<std::size_t>(in.gcount()));
  const std::size_t probe = std::min<std::size_t>(out.size(), 8192);
  if (out.find('\0') < probe) return ReadResult::binary;
  return ReadResult::ok;
}

}  // namespace

Scan scan_tree(const std::string& dir, unsigned threads, std::int64_t max_file_bytes) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw std::invalid_argument("--code: '" + dir + "' is not a directory");
  const fs::path root = fs::canonical(dir, ec);
  if (ec) throw std::invalid_argument("--code: '" + dir + "': " + ec.message());
  Scan scan;
  scan.root = dir;
  const std::vector<fs::path> paths = list_java(root, scan.counts);
  std::vector<JavaFile> files(paths.size());
  std::vector<ReadResult> results(paths.size(), ReadResult::ok);
  std::vector<std::int64_t> sizes(paths.size(), 0);
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    std::string text;
    for (std::size_t i; (i = next.fetch_add(1)) < paths.size();) {
      results[i] = read_source(paths[i], max_file_bytes, text);
      if (results[i] != ReadResult::ok) continue;
      sizes[i] = static_cast<std::int64_t>(text.size());
      files[i] = parse_java(text, fs::relative(paths[i], root).generic_string());
    }
  };
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<std::size_t>(threads, std::max<std::size_t>(1, paths.size())));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  for (std::size_t i = 0; i < paths.size(); ++i) {
    switch (results[i]) {
      case ReadResult::too_large: ++scan.counts.too_large; continue;
      case ReadResult::binary: ++scan.counts.binary; continue;
      case ReadResult::unreadable: ++scan.counts.unreadable; continue;
      case ReadResult::ok: break;
    }
    ++scan.counts.java_files;
    scan.counts.bytes += sizes[i];
    if (!files[i].error_lines.empty()) ++scan.counts.with_syntax_errors;
    scan.files.push_back(std::move(files[i]));
  }
  return scan;
}

}  // namespace lockbench::lint_code
