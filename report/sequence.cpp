#include "report/sequence.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "report/fields.hpp"

namespace lockbench::report {

namespace {

using detail::num_or;
using detail::str;
using nlohmann::json;

// Mermaid sequence text must not contain ';' (statement separator) or '#'
// (entity codes), and GitHub refuses raw HTML: keep a conservative alphabet.
std::string label(std::string_view text) {
  std::string out;
  for (char c : text) {
    const bool unsafe = c == ';' || c == '#' || c == '<' || c == '>' || c == '{' || c == '}' || c == '"' ||
                        c == '`' || c == '\n' || c == '\r' || c == '\t';
    const char keep = unsafe ? ' ' : c;
    if (keep == ' ' && (out.empty() || out.back() == ' ')) continue;  // no runs of blanks
    out += keep;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string ms(double v) { return fmt::format("{:.1f} ms", v); }

struct Event {
  std::string request_id;
  std::string step;
  double start_ms = 0;
  double end_ms = 0;
  std::optional<long> conn;
  std::string detail;
};

std::vector<Event> events_of(const json& result) {
  std::vector<Event> events;
  const json* evs = detail::find(result, "trace.events");
  if (evs == nullptr || !evs->is_array()) return events;
  for (const auto& e : *evs) {
    Event ev;
    ev.request_id = str(e, "request_id");
    ev.step = str(e, "step");
    ev.start_ms = num_or(e, "start_ms", 0);
    ev.end_ms = num_or(e, "end_ms", ev.start_ms);
    if (const json* c = detail::find(e, "conn"); c != nullptr && c->is_number_integer()) ev.conn = c->get<long>();
    ev.detail = str(e, "detail");
    events.push_back(std::move(ev));
  }
  std::stable_sort(events.begin(), events.end(),
                   [](const Event& a, const Event& b) { return a.start_ms < b.start_ms; });
  return events;
}

// One arrow in the diagram, placed at a time; ties keep insertion order.
struct Line {
  double t_ms;
  std::size_t seq;
  std::string text;
};

class Diagram {
 public:
  void at(double t_ms, std::string text) { lines_.push_back({t_ms, lines_.size(), std::move(text)}); }
  std::string render(const std::vector<std::string>& header) {
    std::stable_sort(lines_.begin(), lines_.end(), [](const Line& a, const Line& b) {
      return a.t_ms != b.t_ms ? a.t_ms < b.t_ms : a.seq < b.seq;
    });
    std::string out = "sequenceDiagram\n";
    for (const auto& h : header) out += "    " + h + "\n";
    for (const auto& l : lines_) out += "    " + l.text + "\n";
    return out;
  }

 private:
  std::vector<Line> lines_;
};

bool is_partner(const std::string& step) { return step.rfind("partner.", 0) == 0; }
bool is_db(const std::string& step) {
  return step.rfind("db.", 0) == 0 || step.rfind("lock.", 0) == 0;
}

// Steps shorter than this get one arrow; longer ones a call and an answer, so
// the diagram shows what overlapped without drowning in millisecond DB steps.
constexpr double kAnswerArrowMs = 10;

// The arrows for one event of request `who`, to the participant the step talks to.
void draw(Diagram& d, const Event& e, const std::string& who, const std::string& pool, const std::string& db,
          const std::string& partner) {
  const std::string detail = e.detail.empty() ? "" : " " + label(e.detail);
  const double took = e.end_ms - e.start_ms;
  const bool answer = took >= kAnswerArrowMs;
  if (e.step == "queue") {
    if (took >= 0.05)
      d.at(e.start_ms, fmt::format("Note over {}: t={} queued {} for a worker", who, ms(e.start_ms), ms(took)));
  } else if (e.step == "pool.acquire") {
    const std::string got = e.conn ? fmt::format("conn {}", *e.conn) : std::string("no connection");
    if (answer) {
      d.at(e.start_ms, fmt::format("{}->>{}: t={} acquire connection", who, pool, ms(e.start_ms)));
      d.at(e.end_ms, fmt::format("{}-->>{}: t={} {} after {}{}", pool, who, ms(e.end_ms), got, ms(took), detail));
    } else {
      d.at(e.start_ms, fmt::format("{}->>{}: t={} acquire connection, got {}", who, pool, ms(e.start_ms), got));
    }
  } else if (e.step == "pool.release") {
    d.at(e.start_ms, fmt::format("{}->>{}: t={} release {}", who, pool, ms(e.start_ms),
                                 e.conn ? fmt::format("conn {}", *e.conn) : std::string("connection")));
  } else if (is_partner(e.step)) {
    const std::string call = e.step.substr(std::string("partner.").size());
    // Details often start with the call's name ("unlink x from y"): do not say it twice.
    const std::string what = label(e.detail).rfind(call, 0) == 0 ? label(e.detail) : call + detail;
    d.at(e.start_ms, fmt::format("{}->>{}: t={} {}", who, partner, ms(e.start_ms), what));
    d.at(e.end_ms, fmt::format("{}-->>{}: t={} {} done after {}", partner, who, ms(e.end_ms), call, ms(took)));
  } else if (is_db(e.step)) {
    if (answer) {
      d.at(e.start_ms, fmt::format("{}->>{}: t={} {}{}", who, db, ms(e.start_ms), e.step, detail));
      d.at(e.end_ms, fmt::format("{}-->>{}: t={} {} after {}", db, who, ms(e.end_ms), e.step, ms(took)));
    } else {
      d.at(e.start_ms, fmt::format("{}->>{}: t={} {}{} ({})", who, db, ms(e.start_ms), e.step, detail, ms(took)));
    }
  } else if (e.step == "outcome") {
    // The outcome event spans the whole request: its answer is known at the end.
    d.at(e.end_ms, fmt::format("Note over {}: t={} outcome {}", who, ms(e.end_ms), label(e.detail)));
  } else {
    d.at(e.start_ms, fmt::format("Note over {}: t={} {}{}", who, ms(e.start_ms), label(e.step), detail));
  }
}

// [first partner call start, last partner call end] of one request.
std::optional<std::pair<double, double>> partner_span(const std::vector<Event>& events, const std::string& id) {
  std::optional<std::pair<double, double>> span;
  for (const auto& e : events) {
    if (e.request_id != id || !is_partner(e.step)) continue;
    if (!span) span = {e.start_ms, e.end_ms};
    span->first = std::min(span->first, e.start_ms);
    span->second = std::max(span->second, e.end_ms);
  }
  return span;
}

}  // namespace

std::optional<std::string> race_diagram(const json& result) {
  const json* race = detail::find(result, "trace.race");
  if (race == nullptr || !race->is_object()) return std::nullopt;
  const json* ids = detail::find(*race, "request_ids");
  if (ids == nullptr || !ids->is_array() || ids->size() < 2) return std::nullopt;
  const std::string a = str((*ids)[0], ""), b = str((*ids)[1], "");
  const std::string person = label(str(*race, "person", "?"));
  const auto events = events_of(result);

  Diagram d;
  for (const auto& e : events) {
    if (e.request_id == a) draw(d, e, "A", "Pool", "DB", "Partner");
    if (e.request_id == b) draw(d, e, "B", "Pool", "DB", "Partner");
  }
  const auto sa = partner_span(events, a), sb = partner_span(events, b);
  if (sa && sb) {
    const double from = std::max(sa->first, sb->first), to = std::min(sa->second, sb->second);
    if (from < to)
      // Notes do not wrap in Mermaid: span every participant so the sentence fits.
      d.at(to, fmt::format("Note over A,Partner: from t={} to t={} both requests were calling the partner for {}: "
                           "nothing excluded them",
                           ms(from), ms(to), person));
  }
  const std::string kind = str(*race, "kind");
  const std::string verdict = fmt::format(
      "Note over A,Partner: {}whole {} run, as the partner counted it: overlap_person {}, person_split {}, "
      "lost_promotion {}",
      kind.empty() ? "" : "flagged as " + label(kind) + ". ", label(str(result, "strategy")),
      detail::fmt(detail::num(result, "partner.violations.overlap_person"), 0),
      detail::fmt(detail::num(result, "partner.violations.person_split"), 0),
      detail::fmt(detail::num(result, "partner.violations.lost_promotion"), 0));
  d.at(1e300, verdict);
  return d.render({fmt::format("participant A as request {}", label(a)),
                   fmt::format("participant B as request {}", label(b)), "participant Pool as connection pool",
                   "participant DB as PostgreSQL", "participant Partner as partner (identity provider)"});
}

std::optional<std::string> pool_exhaustion_diagram(const json& result) {
  const auto events = events_of(result);
  // The first request that gave up waiting for a connection.
  const Event* victim_out = nullptr;
  for (const auto& e : events)
    if (e.step == "outcome" && e.detail.rfind("pool_timeout", 0) == 0) {  // detail may say more
      victim_out = &e;
      break;
    }
  if (victim_out == nullptr) return std::nullopt;
  const std::string victim = victim_out->request_id;
  const Event* wait = nullptr;
  for (const auto& e : events)
    if (e.request_id == victim && e.step == "pool.acquire") wait = &e;
  const double wait_from = wait ? wait->start_ms : victim_out->start_ms;

  // Holders: requests that got a connection before the victim started waiting
  // and had not released it yet.
  std::map<std::string, double> acquired_at, released_at;
  for (const auto& e : events) {
    if (e.request_id == victim) continue;
    if (e.step == "pool.acquire" && e.conn) acquired_at.emplace(e.request_id, e.end_ms);
    if (e.step == "pool.release") released_at[e.request_id] = e.start_ms;
  }
  std::vector<std::string> holders;
  for (const auto& [id, t] : acquired_at) {
    const auto rel = released_at.find(id);
    if (t <= wait_from && (rel == released_at.end() || rel->second > wait_from)) holders.push_back(id);
  }
  std::sort(holders.begin(), holders.end(),
            [&](const std::string& x, const std::string& y) { return acquired_at[x] < acquired_at[y]; });
  const std::size_t shown = std::min<std::size_t>(holders.size(), 3);

  Diagram d;
  std::vector<std::string> header;
  for (std::size_t i = 0; i < shown; ++i)
    header.push_back(fmt::format("participant H{} as request {}", i + 1, label(holders[i])));
  header.push_back("participant Pool as connection pool");
  header.push_back("participant DB as PostgreSQL");
  header.push_back("participant Partner as partner");
  header.push_back(fmt::format("participant V as request {}", label(victim)));
  for (const auto& e : events) {
    for (std::size_t i = 0; i < shown; ++i)
      if (e.request_id == holders[i]) draw(d, e, fmt::format("H{}", i + 1), "Pool", "DB", "Partner");
    if (e.request_id == victim) draw(d, e, "V", "Pool", "DB", "Partner");
  }
  const double size = num_or(result, "pool.size", 0);
  // The trace is a sample: it may hold only some of the requests that had the
  // connections, so say how many it shows rather than claim a count.
  std::string held = fmt::format("Note over {},V: t={} all {} connections busy, held in transactions while their "
                                 "requests wait on a row lock or the partner. {} holders traced",
                                 shown ? "H1" : "Pool", ms(wait_from), detail::fmt(size, 0), holders.size());
  if (holders.size() > shown) held += fmt::format(", {} not drawn", holders.size() - shown);
  d.at(wait_from, held);
  d.at(1e300, fmt::format("Note over Pool,V: {}: {} pool timeouts, {} of {} health probes failed, "
                          "ceiling {} requests/s",
                          label(str(result, "strategy")),
                          detail::fmt(detail::num(result, "requests.pool_timeout"), 0),
                          detail::fmt(detail::num(result, "probe.failed"), 0),
                          detail::fmt(detail::num(result, "probe.total"), 0),
                          detail::fmt(detail::num(result, "prediction.littles_law_ceiling_per_s"))));
  return d.render(header);
}

}  // namespace lockbench::report
