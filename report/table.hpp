// Internal: one table model rendered to Markdown and to HTML, so report.md and
// report.html always show the same numbers.
#pragma once

#include <string>
#include <vector>

namespace lockbench::report::detail {

struct Table {
  std::vector<std::string> headers;
  std::vector<std::vector<std::string>> rows;  // plain text cells; renderers escape
  std::vector<bool> numeric;                   // per column: right-aligned when true

  std::string markdown() const;
  std::string html() const;
};

}  // namespace lockbench::report::detail
