#include "report/sequence.hpp"

#include <algorithm>
#include <cmath>
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

}  // namespace

namespace detail {

// One row of a sequence diagram, placed at a time; ties keep insertion order.
struct SeqItem {
  enum Kind { message, reply, note } kind = message;
  std::string from, to;  // participant ids; a note spans from..to (to may be empty)
  std::string text;
  double t_ms = 0;
  std::size_t seq = 0;
};

struct Sequence {
  std::vector<std::pair<std::string, std::string>> participants;  // id, label
  std::vector<SeqItem> items;                                     // in time order after sorted()
};

}  // namespace detail

namespace {

using detail::SeqItem;
using detail::Sequence;

class Diagram {
 public:
  void message(double t_ms, std::string from, std::string to, std::string text) {
    add({SeqItem::message, std::move(from), std::move(to), std::move(text), t_ms, 0});
  }
  void reply(double t_ms, std::string from, std::string to, std::string text) {
    add({SeqItem::reply, std::move(from), std::move(to), std::move(text), t_ms, 0});
  }
  void note(double t_ms, std::string over, std::string to, std::string text) {
    add({SeqItem::note, std::move(over), std::move(to), std::move(text), t_ms, 0});
  }
  Sequence finish(std::vector<std::pair<std::string, std::string>> participants) {
    std::stable_sort(items_.begin(), items_.end(), [](const SeqItem& a, const SeqItem& b) {
      return a.t_ms != b.t_ms ? a.t_ms < b.t_ms : a.seq < b.seq;
    });
    return {std::move(participants), std::move(items_)};
  }

 private:
  void add(SeqItem i) {
    i.seq = items_.size();
    items_.push_back(std::move(i));
  }
  std::vector<SeqItem> items_;
};

std::string mermaid(const Sequence& s) {
  std::string out = "sequenceDiagram\n";
  for (const auto& [id, name] : s.participants) out += "    participant " + id + " as " + name + "\n";
  for (const auto& i : s.items) {
    switch (i.kind) {
      case SeqItem::message: out += "    " + i.from + "->>" + i.to + ": " + i.text + "\n"; break;
      case SeqItem::reply: out += "    " + i.from + "-->>" + i.to + ": " + i.text + "\n"; break;
      case SeqItem::note:
        out += "    Note over " + i.from + (i.to.empty() ? "" : "," + i.to) + ": " + i.text + "\n";
        break;
    }
  }
  return out;
}

bool is_partner(const std::string& step) { return step.rfind("partner.", 0) == 0; }

// The lifeline a db.* or lock.* step talks to, by what the trace says of it: a
// lease store's calls name the store ("redis lease 7", "etcd lease 7 revision
// 3", sim/renewal.cpp and real/real_world.cpp), an in-process lock says "local
// lock"; every other db.* and lock.* step (row locks, advisory locks, the lease
// table) is a statement on the PostgreSQL connection. Empty: not a store step.
std::string store_of(const Event& e) {
  const bool lock = e.step.rfind("lock.", 0) == 0;
  if (!lock && e.step.rfind("db.", 0) != 0) return {};
  if (lock && e.detail.rfind("redis ", 0) == 0) return "Redis";
  if (lock && e.detail.rfind("etcd ", 0) == 0) return "Etcd";
  if (lock && e.detail.rfind("local lock", 0) == 0) return "Local";
  return "DB";
}

// The lifelines the stores of `events` add after the DB's, in a fixed order,
// for the requests `drawn` holds.
std::vector<std::pair<std::string, std::string>> store_lifelines(const std::vector<Event>& events,
                                                                 const std::set<std::string>& drawn) {
  std::set<std::string> used;
  for (const auto& e : events)
    if (drawn.count(e.request_id)) used.insert(store_of(e));
  std::vector<std::pair<std::string, std::string>> out;
  if (used.count("Redis")) out.emplace_back("Redis", "Redis (lease store)");
  if (used.count("Etcd")) out.emplace_back("Etcd", "etcd (lease store)");
  if (used.count("Local")) out.emplace_back("Local", "lock in the pod's memory");
  return out;
}

// Steps shorter than this get one arrow; longer ones a call and an answer, so
// the diagram shows what overlapped without drowning in millisecond DB steps.
constexpr double kAnswerArrowMs = 10;

// The arrows for one event of request `who`, to the participant the step talks to.
void draw(Diagram& d, const Event& e, const std::string& who, const std::string& pool, const std::string& partner) {
  const std::string detail = e.detail.empty() ? "" : " " + label(e.detail);
  const double took = e.end_ms - e.start_ms;
  const bool answer = took >= kAnswerArrowMs;
  if (e.step == "queue") {
    if (took >= 0.05)
      d.note(e.start_ms, who, "", fmt::format("t={} queued {} for a worker", ms(e.start_ms), ms(took)));
  } else if (e.step == "pool.acquire") {
    const std::string got = e.conn ? fmt::format("conn {}", *e.conn) : std::string("no connection");
    if (answer) {
      d.message(e.start_ms, who, pool, fmt::format("t={} acquire connection", ms(e.start_ms)));
      d.reply(e.end_ms, pool, who, fmt::format("t={} {} after {}{}", ms(e.end_ms), got, ms(took), detail));
    } else {
      d.message(e.start_ms, who, pool, fmt::format("t={} acquire connection, got {}", ms(e.start_ms), got));
    }
  } else if (e.step == "pool.release") {
    d.message(e.start_ms, who, pool,
              fmt::format("t={} release {}", ms(e.start_ms),
                          e.conn ? fmt::format("conn {}", *e.conn) : std::string("connection")));
  } else if (is_partner(e.step)) {
    const std::string call = e.step.substr(std::string("partner.").size());
    // Details often start with the call's name ("unlink x from y"): do not say it twice.
    const std::string what = label(e.detail).rfind(call, 0) == 0 ? label(e.detail) : call + detail;
    d.message(e.start_ms, who, partner, fmt::format("t={} {}", ms(e.start_ms), what));
    d.reply(e.end_ms, partner, who, fmt::format("t={} {} done after {}", ms(e.end_ms), call, ms(took)));
  } else if (const std::string db = store_of(e); !db.empty()) {
    if (answer) {
      d.message(e.start_ms, who, db, fmt::format("t={} {}{}", ms(e.start_ms), e.step, detail));
      d.reply(e.end_ms, db, who, fmt::format("t={} {} after {}", ms(e.end_ms), e.step, ms(took)));
    } else {
      d.message(e.start_ms, who, db, fmt::format("t={} {}{} ({})", ms(e.start_ms), e.step, detail, ms(took)));
    }
  } else if (e.step == "outcome") {
    // The outcome event spans the whole request: its answer is known at the end.
    d.note(e.end_ms, who, "", fmt::format("t={} outcome {}", ms(e.end_ms), label(e.detail)));
  } else {
    d.note(e.start_ms, who, "", fmt::format("t={} {}{}", ms(e.start_ms), label(e.step), detail));
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

namespace {

std::optional<Sequence> race_sequence(const json& result) {
  const json* race = detail::find(result, "trace.race");
  if (race == nullptr || !race->is_object()) return std::nullopt;
  const json* ids = detail::find(*race, "request_ids");
  if (ids == nullptr || !ids->is_array() || ids->size() < 2) return std::nullopt;
  const std::string a = str((*ids)[0], ""), b = str((*ids)[1], "");
  const std::string person = label(str(*race, "person", "?"));
  const auto events = events_of(result);

  Diagram d;
  for (const auto& e : events) {
    if (e.request_id == a) draw(d, e, "A", "Pool", "Partner");
    if (e.request_id == b) draw(d, e, "B", "Pool", "Partner");
  }
  const auto sa = partner_span(events, a), sb = partner_span(events, b);
  if (sa && sb) {
    const double from = std::max(sa->first, sb->first), to = std::min(sa->second, sb->second);
    if (from < to)
      // Notes do not wrap in Mermaid: span every participant so the sentence fits.
      d.note(to, "A", "Partner",
             fmt::format("from t={} to t={} both requests were calling the partner for {}: nothing excluded them",
                         ms(from), ms(to), person));
  }
  const std::string kind = str(*race, "kind");
  // The run's counts come from the one function every section uses.
  const detail::Violations v = detail::violations_of(result);
  d.note(1e300, "A", "Partner",
         fmt::format("{}whole {} run, as the partner counted it: {} violations{}",
                     kind.empty() ? "" : "flagged as " + label(kind) + ". ", label(str(result, "strategy")),
                     detail::fmt(v.total, 0), v.kinds.empty() ? "" : ", " + label(detail::kinds_text(v.kinds, 3))));
  std::vector<std::pair<std::string, std::string>> header = {
      {"A", "request " + label(a)}, {"B", "request " + label(b)}, {"Pool", "connection pool"}, {"DB", "PostgreSQL"}};
  for (auto& lifeline : store_lifelines(events, {a, b})) header.push_back(std::move(lifeline));
  header.emplace_back("Partner", "partner (identity provider)");
  return d.finish(std::move(header));
}

std::optional<Sequence> pool_exhaustion_sequence(const json& result) {
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
  std::vector<std::pair<std::string, std::string>> header;
  for (std::size_t i = 0; i < shown; ++i) header.emplace_back(fmt::format("H{}", i + 1), "request " + label(holders[i]));
  header.emplace_back("Pool", "connection pool");
  header.emplace_back("DB", "PostgreSQL");
  std::set<std::string> drawn(holders.begin(), holders.begin() + static_cast<std::ptrdiff_t>(shown));
  drawn.insert(victim);
  for (auto& lifeline : store_lifelines(events, drawn)) header.push_back(std::move(lifeline));
  header.emplace_back("Partner", "partner");
  header.emplace_back("V", "request " + label(victim));
  for (const auto& e : events) {
    for (std::size_t i = 0; i < shown; ++i)
      if (e.request_id == holders[i]) draw(d, e, fmt::format("H{}", i + 1), "Pool", "Partner");
    if (e.request_id == victim) draw(d, e, "V", "Pool", "Partner");
  }
  const double size = num_or(result, "pool.size", 0);
  // The trace is a sample: it may hold only some of the requests that had the
  // connections, so say how many it shows rather than claim a count.
  std::string held = fmt::format("t={} all {} connections busy, held in transactions while their requests wait on "
                                 "a row lock or the partner. {} holders traced",
                                 ms(wait_from), detail::fmt(size, 0), holders.size());
  if (holders.size() > shown) held += fmt::format(", {} not drawn", holders.size() - shown);
  d.note(wait_from, shown ? "H1" : "Pool", "V", held);
  d.note(1e300, "Pool", "V",
         fmt::format("{}: {} pool timeouts, {} of {} health probes failed, ceiling {} requests/s",
                     label(str(result, "strategy")), detail::fmt(detail::num(result, "requests.pool_timeout"), 0),
                     detail::fmt(detail::num(result, "probe.failed"), 0),
                     detail::fmt(detail::num(result, "probe.total"), 0),
                     detail::fmt(detail::num(result, "prediction.littles_law_ceiling_per_s"))));
  return d.finish(std::move(header));
}

std::string xml(std::string_view text) { return detail::html_escape(text); }

// Greedy word wrap to at most `width` characters a line.
std::vector<std::string> wrap(const std::string& text, std::size_t width) {
  std::vector<std::string> lines;
  std::string line;
  std::size_t at = 0;
  while (at < text.size()) {
    auto end = text.find(' ', at);
    if (end == std::string::npos) end = text.size();
    std::string word = text.substr(at, end - at);
    at = end + 1;
    while (word.size() > width) {  // a word longer than a line is cut
      if (!line.empty()) lines.push_back(line), line.clear();
      lines.push_back(word.substr(0, width));
      word = word.substr(width);
    }
    if (!line.empty() && line.size() + 1 + word.size() > width) lines.push_back(line), line.clear();
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) lines.push_back(line);
  if (lines.empty()) lines.emplace_back();
  return lines;
}

// A sequence diagram as SVG: participants in boxes over dashed lifelines,
// one row per item top to bottom in time order, solid arrows for calls,
// dashed for answers, yellow notes. Text is wrapped to the space it has.
std::string svg(const Sequence& s, const std::string& id, const std::string& title) {
  constexpr double kCol = 230, kMargin = 20, kLine = 14, kCharPx = 6.4, kTop = 64;
  std::map<std::string, double> x;
  for (std::size_t i = 0; i < s.participants.size(); ++i)
    x[s.participants[i].first] = kMargin + kCol / 2 + kCol * static_cast<double>(i);
  const double width = 2 * kMargin + kCol * static_cast<double>(s.participants.size());
  const auto chars = [&](double px) { return static_cast<std::size_t>(std::max(8.0, px / kCharPx)); };
  std::string body;
  double y = kTop + 14;
  for (const auto& item : s.items) {
    const double x1 = x.count(item.from) ? x[item.from] : kMargin;
    const double x2 = !item.to.empty() && x.count(item.to) ? x[item.to] : x1;
    if (item.kind == detail::SeqItem::note) {
      const double left = std::min(x1, x2) - kCol / 2 + 8, right = std::max(x1, x2) + kCol / 2 - 8;
      const auto lines = wrap(item.text, chars(right - left - 12));
      const double h = kLine * static_cast<double>(lines.size()) + 10;
      body += fmt::format("<rect x='{:.0f}' y='{:.0f}' width='{:.0f}' height='{:.0f}' fill='#fff5c2' "
                          "stroke='#c9a800'/>\n",
                          left, y, right - left, h);
      for (std::size_t i = 0; i < lines.size(); ++i)
        body += fmt::format("<text x='{:.0f}' y='{:.0f}' font-size='11'>{}</text>\n", left + 6,
                            y + 15 + kLine * static_cast<double>(i), xml(lines[i]));
      y += h + 8;
      continue;
    }
    const double span = std::max(std::fabs(x2 - x1), kCol) - 16;
    const auto lines = wrap(item.text, chars(span));
    const double mid = (x1 + x2) / 2;
    for (std::size_t i = 0; i < lines.size(); ++i)
      body += fmt::format("<text x='{:.0f}' y='{:.0f}' font-size='11' text-anchor='middle'>{}</text>\n", mid,
                          y + 11 + kLine * static_cast<double>(i), xml(lines[i]));
    y += kLine * static_cast<double>(lines.size()) + 4;
    const bool answer = item.kind == detail::SeqItem::reply;
    body += fmt::format("<line x1='{:.0f}' y1='{:.0f}' x2='{:.0f}' y2='{:.0f}' stroke='#333' stroke-width='1.3'{} "
                        "marker-end='url(#{}-arrow)'/>\n",
                        x1, y, x2 + (x2 > x1 ? -2 : 2), y, answer ? " stroke-dasharray='5,4'" : "", id);
    y += 12;
  }
  const double height = y + 20;
  std::string out = fmt::format(
      "<svg xmlns='http://www.w3.org/2000/svg' id='{}' class='sequence' viewBox='0 0 {:.0f} {:.0f}' width='{:.0f}' "
      "height='{:.0f}' font-family='Helvetica, Arial, sans-serif' role='img'>\n<title>{}</title>\n"
      "<defs><marker id='{}-arrow' viewBox='0 0 10 10' refX='9' refY='5' markerWidth='8' markerHeight='8' "
      "orient='auto-start-reverse'><path d='M0,0 L10,5 L0,10 z' fill='#333'/></marker></defs>\n"
      "<rect width='100%' height='100%' fill='white'/>\n",
      id, width, height, width, height, xml(title), id);
  for (const auto& [pid, name] : s.participants) {
    const double cx = x[pid];
    out += fmt::format("<line x1='{:.0f}' y1='{:.0f}' x2='{:.0f}' y2='{:.0f}' stroke='#999' stroke-dasharray='3,3'/>\n",
                       cx, kTop - 12, cx, height - 10);
    const auto lines = wrap(name, chars(kCol - 30));
    out += fmt::format("<rect x='{:.0f}' y='10' width='{:.0f}' height='{:.0f}' rx='4' fill='#eaf1fb' "
                       "stroke='#4e79a7'/>\n",
                       cx - kCol / 2 + 12, kCol - 24, kTop - 22);
    for (std::size_t i = 0; i < lines.size() && i < 2; ++i)
      out += fmt::format("<text x='{:.0f}' y='{:.0f}' font-size='12' font-weight='bold' text-anchor='middle'>{}"
                         "</text>\n",
                         cx, (lines.size() == 1 ? 36.0 : 29.0) + 14 * static_cast<double>(i), xml(lines[i]));
  }
  return out + body + "</svg>\n";
}

}  // namespace

std::optional<std::string> race_diagram(const json& result) {
  auto s = race_sequence(result);
  if (!s) return std::nullopt;
  return mermaid(*s);
}

std::optional<std::string> pool_exhaustion_diagram(const json& result) {
  auto s = pool_exhaustion_sequence(result);
  if (!s) return std::nullopt;
  return mermaid(*s);
}

namespace {

// The SVG's title names the race it shows: the strategy, the flagged kind, the person.
std::string race_title(const json& result) {
  const json* race = detail::find(result, "trace.race");
  const std::string kind = race ? label(str(*race, "kind")) : "", person = race ? label(str(*race, "person")) : "";
  std::string title = "The race under " + label(str(result, "strategy", "?"));
  if (!kind.empty()) title += ": " + kind;
  if (!person.empty()) title += " on " + person;
  return title + ", as it happened";
}

}  // namespace

std::optional<std::string> race_diagram_svg(const json& result, const std::string& id) {
  auto s = race_sequence(result);
  if (!s) return std::nullopt;
  return svg(*s, id, race_title(result));
}

std::optional<std::string> pool_exhaustion_diagram_svg(const json& result, const std::string& id) {
  auto s = pool_exhaustion_sequence(result);
  if (!s) return std::nullopt;
  return svg(*s, id, "Pool exhaustion under " + label(str(result, "strategy", "?")));
}

}  // namespace lockbench::report
