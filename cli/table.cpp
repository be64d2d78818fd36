#include "cli/table.hpp"

#include <algorithm>
#include <cstdint>
#include <iomanip>
#include <optional>
#include <sstream>
#include <string>

#include "report/fields.hpp"

using nlohmann::json;

namespace lockbench::cli {

namespace {

std::string num(double v, int precision = 1) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(precision) << v;
  return o.str();
}

double d(const json& j, std::initializer_list<const char*> path) {
  const json* p = &j;
  for (const char* k : path) {
    if (!p->is_object() || !p->contains(k)) return 0;
    p = &(*p)[k];
  }
  return p->is_number() ? p->get<double>() : 0;
}

// The violation counts, as the report decides them (report::detail::violations_of,
// the one place that classifies a kind): overlap_person has a column of its own,
// the other exclusion kinds share one, the orphan effects have theirs, so that
// overlaps + violations is the report's "exclusion held?" count and orphans its
// "orphan effects" count. Notes (stale_token_rejected, ...) are not violations.
struct TableViolations {
  std::int64_t overlaps = 0, other_exclusion = 0, orphans = 0;
};
TableViolations table_violations(const json& r) {
  const report::detail::Violations v = report::detail::violations_of(r);
  TableViolations t;
  for (const auto& [kind, n] : v.kinds)
    if (kind == "overlap_person") t.overlaps = static_cast<std::int64_t>(n);
  t.other_exclusion = static_cast<std::int64_t>(v.exclusion) - t.overlaps;
  t.orphans = static_cast<std::int64_t>(v.orphan);
  return t;
}

bool partner_unavailable(const json& r) {
  return r.contains("partner") && r["partner"].is_object() && !r["partner"].value("available", true);
}

// "unavailable" where the partner's checks could not be read: never a 0.
std::string check_cell(const json& r, std::int64_t n) { return partner_unavailable(r) ? "unavailable" : std::to_string(n); }

}  // namespace

void print_table(std::ostream& out, const std::vector<json>& results) {
  if (results.empty()) return;
  struct Col {
    std::string head;
    bool left;
  };
  const std::vector<Col> cols = {{"strategy", true},  {"ok", false},       {"conflict", false}, {"pool_to", false},
                                 {"rejected", false}, {"error", false},    {"ok/s", false},     {"ceiling/s", false},
                                 {"ok p50 ms", false}, {"ok p99 ms", false}, {"all p99 ms", false},   {"pool util", false}, {"probe fail", false},
                                 {"overlaps", false}, {"violations", false}, {"orphans", false}, {"steals", false},
                                 {"unlock fail", false}, {"leaked", false}};
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : results) {
    // Little's law caps only a strategy that holds its connection through the
    // partner calls; for the others pool / hold is a capacity nobody reaches.
    // The ceiling is the report's (report::detail::ceiling_per_s): pool / measured hold.
    const std::optional<double> ceiling = report::detail::ceiling_per_s(r);
    const TableViolations v = table_violations(r);
    rows.push_back({r.value("strategy", "?"),
                    std::to_string(r["requests"].value("ok", 0)),
                    std::to_string(r["requests"].value("conflict", 0)),
                    std::to_string(r["requests"].value("pool_timeout", 0)),
                    std::to_string(r["requests"].value("rejected", 0)),
                    std::to_string(r["requests"].value("error", 0)),
                    num(d(r, {"throughput_ok_per_s"}), 2),
                    ceiling ? num(*ceiling, 2) : "-",
                    num(d(r, {"latency_ok_ms", "p50"})),
                    num(d(r, {"latency_ok_ms", "p99"})),
                    num(d(r, {"latency_ms", "p99"})),
                    num(100 * d(r, {"pool", "utilization"}), 0) + "%",
                    std::to_string(static_cast<std::int64_t>(d(r, {"probe", "failed"}))) + "/" +
                        std::to_string(static_cast<std::int64_t>(d(r, {"probe", "total"}))),
                    check_cell(r, v.overlaps),
                    check_cell(r, v.other_exclusion),
                    check_cell(r, v.orphans),
                    std::to_string(static_cast<std::int64_t>(d(r, {"locks", "lease_steals"}))),
                    std::to_string(static_cast<std::int64_t>(d(r, {"locks", "unlock_failures"}))),
                    std::to_string(static_cast<std::int64_t>(d(r, {"locks", "leaked"})))});
  }
  std::vector<std::size_t> width(cols.size());
  for (std::size_t c = 0; c < cols.size(); ++c) {
    width[c] = cols[c].head.size();
    for (const auto& row : rows) width[c] = std::max(width[c], row[c].size());
  }
  const auto line = [&](const std::vector<std::string>& cells) {
    for (std::size_t c = 0; c < cols.size(); ++c) {
      out << (c ? "  " : "");
      if (cols[c].left) out << std::left << std::setw(static_cast<int>(width[c])) << cells[c];
      else out << std::right << std::setw(static_cast<int>(width[c])) << cells[c];
    }
    out << "\n";
  };
  std::vector<std::string> heads;
  for (const auto& c : cols) heads.push_back(c.head);
  line(heads);
  for (const auto& row : rows) line(row);
  out << std::left;

  const json& first = results.front();
  const double scale = first.value("time_scale", 1.0);
  out << "\nworld " << first.value("world", "?") << ", scenario " << first.value("scenario", "?") << ", seed "
      << first.value("seed", 0) << ", offered " << num(d(first, {"offered_per_s"}), 2) << "/s, pool "
      << static_cast<int>(d(first, {"pool", "size"}));
  const int pods = first["settings"].value("pods", 1);
  if (pods > 1) out << " (" << pods << " pods)";
  if (scale != 1.0)
    out << ", time scale " << scale << "\n(figures are measured wall times and rates: at the configured scale, times x"
        << num(1 / scale, 0) << ", rates /" << num(1 / scale, 0) << "; offered " << num(d(first, {"offered_per_s"}) * scale, 2)
        << "/s configured)";
  out << "\n";
  out << "ceiling/s = Little's law, for strategies that hold a connection through the partner calls: pool size /\n"
         "measured mean connection hold. ok p50/p99 = latency of ok requests,\n"
         "all p99 = of every request (from its intended start). overlaps = mutating partner calls for one person in\n"
         "flight at once (the lock did not exclude). violations = every other exclusion check (split, lost promotion,\n"
         "...); overlaps + violations = the report's \"exclusion held?\" count. orphans = effects on one side only\n"
         "(the report's \"orphan effects\").\n";
  for (const auto& r : results) {
    const auto& p = r["prediction"];
    const std::optional<double> ceiling = report::detail::ceiling_per_s(r);
    if (!ceiling) continue;
    // The ceiling/s column's figure, then the one predicted from the configured hold (before the run).
    out << "  " << r.value("strategy", "?") << ": holds a connection through the partner calls: "
        << static_cast<int>(d(r, {"pool", "size"})) << " / " << num(d(p, {"mean_hold_ms"}) / 1000, 3)
        << " s measured hold = " << num(*ceiling, 2) << " req/s ceiling";
    if (p.value("configured_ceiling_per_s", json()).is_number())
      out << " (" << num(p["configured_ceiling_per_s"].get<double>(), 2) << " predicted from the configured "
          << num(d(p, {"configured_hold_ms"}) / 1000, 3) << " s)";
    out << ", " << num(d(r, {"throughput_ok_per_s"}), 2) << " ok/s measured\n";
  }
}

}  // namespace lockbench::cli
