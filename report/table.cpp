#include "report/table.hpp"

#include "report/fields.hpp"

namespace lockbench::report::detail {

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
  for (const auto& h : headers) out += "<th>" + html_escape(h) + "</th>";
  out += "</tr></thead>\n<tbody>\n";
  for (const auto& row : rows) {
    out += "<tr>";
    for (std::size_t i = 0; i < headers.size(); ++i) {
      const bool right = i < numeric.size() && numeric[i];
      out += right ? "<td class=\"num\">" : "<td>";
      out += html_escape(i < row.size() ? row[i] : "") + "</td>";
    }
    out += "</tr>\n";
  }
  return out + "</tbody>\n</table>\n";
}

}  // namespace lockbench::report::detail
