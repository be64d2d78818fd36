#include "report/table.hpp"

#include "report/fields.hpp"

namespace lockbench::report::detail {

namespace {

// Emoji need a colour-emoji font that many machines (and headless browsers)
// lack; the page shows DejaVu/Helvetica symbols in colour instead.
std::string symbols(std::string cell) {
  const std::pair<std::string, std::string> map[] = {
      {"✅", "<span class=\"yes\">✔</span>"},
      {"❌", "<span class=\"no\">✘</span>"},
      {"⚠️", "<span class=\"warn\">⚠</span>"},
      {"⚠", "<span class=\"warn\">⚠</span>"}};
  // One left-to-right pass: a replacement is never scanned again (it contains ⚠ itself).
  std::string out;
  for (std::size_t at = 0; at < cell.size();) {
    bool replaced = false;
    for (const auto& [from, to] : map)
      if (cell.compare(at, from.size(), from) == 0) {
        out += to;
        at += from.size();
        replaced = true;
        break;
      }
    if (!replaced) out += cell[at++];
  }
  return out;
}

}  // namespace

std::string Table::markdown() const {
  std::string out = "|";
  for (const auto& h : headers) out += " " + md_cell(h) + " |";
  out += "\n|";
  for (std::size_t i = 0; i < headers.size(); ++i)
    out += (i < numeric.size() && numeric[i]) ? "---:|" : "---|";
  out += "\n";
  for (const auto& row : rows) {
    out += "|";
    for (std::size_t i = 0; i < headers.size(); ++i) out += " " + md_cell(i < row.size() ? row[i] : "") + " |";
    out += "\n";
  }
  return out;
}

std::string Table::html() const {
  std::string out = "<table>\n<thead><tr>";
  // Long snake_case headers (violation kinds) may break after an underscore.
  for (const auto& h : headers) {
    std::string cell = html_escape(h), broken;
    for (char c : cell) broken += c == '_' ? std::string("_<wbr>") : std::string(1, c);
    out += "<th>" + broken + "</th>";
  }
  out += "</tr></thead>\n<tbody>\n";
  for (const auto& row : rows) {
    out += "<tr>";
    for (std::size_t i = 0; i < headers.size(); ++i) {
      const bool right = i < numeric.size() && numeric[i];
      const bool short_name = i == 0 && i < row.size() && row[i].size() <= 24;
      out += right ? "<td class=\"num\">" : short_name ? "<td class=\"name\">" : i == 0 ? "<td class=\"first\">" : "<td>";
      out += symbols(html_escape(i < row.size() ? row[i] : "")) + "</td>";
    }
    out += "</tr>\n";
  }
  return out + "</tbody>\n</table>\n";
}

}  // namespace lockbench::report::detail
