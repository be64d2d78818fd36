// What lint's checks share (lint.cpp, lint_probes.cpp, lint_threads.cpp): not
// part of lint's public face (report/lint.hpp). Named outside an anonymous
// namespace, so the unity build's grouping cannot collide two copies.
#pragma once

#include <string>

#include "base/units.hpp"
#include "core/settings.hpp"
#include "report/lint.hpp"

namespace lockbench::report::lint_detail {

using Level = LintFinding::Level;

inline std::string d(Duration v) { return format_duration(v); }

inline void require(bool ok, const std::string& message) {
  if (!ok) throw SettingError(message);
}

}  // namespace lockbench::report::lint_detail
