#include "base/units.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <cmath>
#include <cstdio>
#include <version>

namespace lockbench {

SettingError::SettingError(const std::string& what) : std::runtime_error(one_line(what)) {}

namespace {
// A quoted value ('...') longer than this is cut in its middle first: it is
// what a user gave, and the words around it say what was wrong (units.hpp).
constexpr std::size_t kQuotedBytesMax = 120;

bool continuation(std::string_view s, std::size_t i) { return (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80; }

// `s` with its middle cut out, keeping about `head` and `tail` bytes (on UTF-8 boundaries).
std::string cut_middle(std::string_view s, std::size_t head, std::size_t tail) {
  std::size_t h = head, t = s.size() - tail;
  while (h > 0 && continuation(s, h)) --h;
  while (t < s.size() && continuation(s, t)) ++t;
  return std::string(s.substr(0, h)) + " ...[" + std::to_string(t - h) + " bytes cut]... " + std::string(s.substr(t));
}
}  // namespace

std::string one_line(std::string_view text) {
  std::string printable;
  printable.reserve(std::min<std::size_t>(text.size(), 4096));
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u != 0x7f) {
      printable.push_back(c);
      continue;
    }
    char esc[8];
    std::snprintf(esc, sizeof esc, "\\x%02x", u);
    printable.append(esc);
  }
  // A quoted value is what a user gave: a long one is cut, the words around it stay.
  std::string out;
  for (std::size_t i = 0; i < printable.size();) {
    const std::size_t open = printable.find('\'', i);
    const std::size_t close = open == std::string::npos ? std::string::npos : printable.find('\'', open + 1);
    if (close == std::string::npos) {
      out.append(printable, i, std::string::npos);
      break;
    }
    out.append(printable, i, open + 1 - i);
    const std::string_view value = std::string_view(printable).substr(open + 1, close - open - 1);
    out += value.size() > kQuotedBytesMax ? cut_middle(value, kQuotedBytesMax / 2, kQuotedBytesMax / 3) : std::string(value);
    out.push_back('\'');
    i = close + 1;
  }
  if (out.size() <= kOneLineBytesMax) return out;
  return cut_middle(out, kOneLineBytesMax / 2, kOneLineBytesMax * 2 / 5);
}

namespace {
std::string bad_duration(std::string_view text, std::string_view setting) {
  return std::string(setting) + ": '" + std::string(text) +
         "' is not a duration (use a number and a unit: 250us, 200ms, 1.5s, 2m, 1h)";
}
}  // namespace

Duration parse_duration(std::string_view text, std::string_view setting) {
  std::string_view t = text;
  while (!t.empty() && t.front() == ' ') t.remove_prefix(1);
  while (!t.empty() && t.back() == ' ') t.remove_suffix(1);
  if (t == "0") return Duration::zero();
  std::size_t i = 0;
  while (i < t.size() && (std::isdigit(static_cast<unsigned char>(t[i])) || t[i] == '.')) ++i;
  if (i == 0) throw SettingError(bad_duration(text, setting));
  double value = 0;
  const std::string number(t.substr(0, i));
  char* end = nullptr;
  value = std::strtod(number.c_str(), &end);
  if (end != number.c_str() + number.size() || !std::isfinite(value))
    throw SettingError(bad_duration(text, setting));
  const std::string_view unit = t.substr(i);
  double ns_per_unit = 0;
  if (unit == "ns") ns_per_unit = 1;
  else if (unit == "us") ns_per_unit = 1e3;
  else if (unit == "ms") ns_per_unit = 1e6;
  else if (unit == "s") ns_per_unit = 1e9;
  else if (unit == "m" || unit == "min") ns_per_unit = 60e9;
  else if (unit == "h") ns_per_unit = 3600e9;
  else throw SettingError(bad_duration(text, setting));
  const double ns = value * ns_per_unit;
  if (ns > static_cast<double>(kDurationMax.count()))
    throw SettingError(std::string(setting) + ": '" + std::string(text) + "' is too long (" + std::string(kDurationMaxText) + ")");
  return Duration(static_cast<Duration::rep>(std::llround(ns)));
}

std::string format_duration(Duration d) {
  const auto ns = d.count();
  auto fmt = [](double v, std::string_view unit) {
    // printf's %.6g, as the standard defines this overload, without printf's
    // cost (a traced request formats a few of these).
    char buf[64];
#if defined(__cpp_lib_to_chars)
    const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, 6);
    std::string out(buf, r.ptr);
#else  // libc++ 13 (emscripten 3.1.6, the playground) has no floating-point to_chars: printf itself
    const int n = std::snprintf(buf, sizeof buf, "%.6g", v);
    std::string out(buf, static_cast<std::size_t>(n));
#endif
    out.append(unit);
    return out;
  };
  if (ns == 0) return "0";
  const auto a = ns < 0 ? -ns : ns;
  if (a >= 3600'000'000'000LL && a % 3600'000'000'000LL == 0) return fmt(ns / 3600e9, "h");
  if (a >= 60'000'000'000LL && a % 60'000'000'000LL == 0) return fmt(ns / 60e9, "m");
  if (a >= 1'000'000'000LL) return fmt(ns / 1e9, "s");
  if (a >= 1'000'000LL) return fmt(ns / 1e6, "ms");
  if (a >= 1'000LL) return fmt(ns / 1e3, "us");
  return fmt(static_cast<double>(ns), "ns");
}

}  // namespace lockbench
