// Reading a source tree for lint --code: every *.java file under DIR, parsed on
// every core. What is not read is counted, never followed: files that are not
// Java, files over 4 MiB, binary files (a NUL byte in the first 8 KiB), and
// symbolic links (a link to a directory is a loop or an alias; a link that
// leaves DIR is never read). Nothing outside DIR is opened.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lint_code/java_source.hpp"

namespace lockbench::lint_code {

struct ScanCounts {
  int java_files = 0;        // read and parsed
  int not_java = 0;          // skipped: not *.java
  int too_large = 0;         // skipped: over max_file_bytes
  int binary = 0;            // skipped: a NUL byte
  int symlinks = 0;          // skipped: symbolic links inside DIR (loops, aliases of what is read anyway)
  int outside = 0;           // skipped: symbolic links whose target is outside DIR
  int unreadable = 0;        // could not be opened
  int with_syntax_errors = 0;
  std::int64_t bytes = 0;    // of the files parsed
};

struct Scan {
  std::string root;  // as given
  std::vector<JavaFile> files;  // sorted by path
  ScanCounts counts;
};

constexpr std::int64_t kMaxFileBytes = 4 << 20;

// Throws SettingError-like std::invalid_argument ("--code: 'DIR' is not a
// directory") for a DIR that is not one. threads = 0: every core.
Scan scan_tree(const std::string& dir, unsigned threads = 0, std::int64_t max_file_bytes = kMaxFileBytes);

}  // namespace lockbench::lint_code
