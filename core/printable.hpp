// Text from files and flags on a terminal: control bytes (ESC, BEL, CR, ...;
// C0, DEL and the C1 range of UTF-8) shown as \xNN, so a Deployment named
// "\e]0;owned\a" or a path holding "\e[2J" cannot retitle or clear the
// tester's terminal. `keep_newlines`: a report of several lines keeps its
// line breaks (and tabs); an error line escapes them too.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace lockbench {

inline std::string printable(std::string_view text, bool keep_newlines = false) {
  std::string out;
  out.reserve(text.size());
  const auto hex = [&](unsigned char c) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\x%02X", c);
    out += buf;
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (keep_newlines && (c == '\n' || c == '\t')) {
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7F) {
      hex(c);
    } else if (c == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9F) {  // U+0080..U+009F: C1 controls (CSI is U+009B)
      hex(c);
      hex(static_cast<unsigned char>(text[++i]));
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace lockbench
