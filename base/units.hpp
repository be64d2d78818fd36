// Durations with units, and the one error type for bad settings.
#pragma once

#include <chrono>
#include <stdexcept>
#include <string>
#include <string_view>

namespace lockbench {

// All lockbench times are nanoseconds: wall-clock in the real world, virtual in
// the simulator. A Duration since the start of a run doubles as a time point.
using Duration = std::chrono::nanoseconds;

// A bad setting or input. what() is one line that names the setting and says
// what is accepted, e.g. "--duration: '5 parsecs' is not a duration (use 200ms, 1.5s, 30s, 2m)".
// The line is made printable (one_line): a value with a NUL byte or a newline
// in it cannot cut the reason off, and a 50 MB value is not echoed whole.
class SettingError : public std::runtime_error {
 public:
  explicit SettingError(const std::string& what);
  explicit SettingError(const char* what) : SettingError(std::string(what)) {}
};

// `text` as one printable line: control bytes (NUL, newline, ESC ...) as \xNN,
// a quoted value ('...', what the user gave) over 120 bytes cut in its middle
// (" ...[N bytes cut]... "), and the whole line too beyond kOneLineBytesMax, so
// that the setting named at its start and the reason after the value (an
// accepted list included) stay.
inline constexpr std::size_t kOneLineBytesMax = 2000;
std::string one_line(std::string_view text);

// The longest duration any setting takes; parse_duration and Settings::validate
// both refuse longer ones with the same words (kDurationMaxText).
inline constexpr Duration kDurationMax = std::chrono::hours(24 * 365);
inline constexpr std::string_view kDurationMaxText = "at most 365 days";

// Parses "200ms", "1.5s", "30s", "2m", "1h", "250us", "0". A bare number other
// than 0 is refused: a unit is required. Throws SettingError naming `setting`.
Duration parse_duration(std::string_view text, std::string_view setting);

// "1.5s", "200ms", "250us": shortest exact-ish form for humans and result files.
std::string format_duration(Duration d);

constexpr double to_ms(Duration d) { return std::chrono::duration<double, std::milli>(d).count(); }
constexpr double to_s(Duration d) { return std::chrono::duration<double>(d).count(); }
inline Duration from_ms(double ms) {
  return std::chrono::duration_cast<Duration>(std::chrono::duration<double, std::milli>(ms));
}
inline Duration from_s(double s) {
  return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(s));
}

}  // namespace lockbench
