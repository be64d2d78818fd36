#include "core/redact.hpp"

#include <cctype>

namespace lockbench {

namespace {

bool url_char(char c) {
  // Characters that can sit in a URL's user-info (RFC 3986 unreserved,
  // sub-delims, percent escapes): the password runs until '@' over these.
  const auto u = static_cast<unsigned char>(c);
  return std::isalnum(u) || std::string_view("-._~%!$&'()*+,;=:").find(c) != std::string_view::npos;
}

// scheme://user:password@ -> scheme://user:***@
std::string redact_userinfo(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  std::size_t i = 0;
  while (i < in.size()) {
    const std::size_t sep = in.find("://", i);
    if (sep == std::string_view::npos) break;
    const std::size_t start = sep + 3;
    // The authority's user-info ends at its last '@' before any '/', '?', '#'
    // or space (libpq splits there too, so "p@ss" stays whole).
    std::size_t at = std::string_view::npos;
    for (std::size_t j = start; j < in.size(); ++j) {
      const char c = in[j];
      if (c == '@') at = j;
      else if (!url_char(c)) break;
    }
    out.append(in.substr(i, start - i));
    if (at == std::string_view::npos) {
      i = start;
      continue;
    }
    const std::string_view userinfo = in.substr(start, at - start);
    const std::size_t colon = userinfo.find(':');
    if (colon == std::string_view::npos) {
      out.append(userinfo);
    } else {
      out.append(userinfo.substr(0, colon + 1));
      out.append(kRedacted);
    }
    out.push_back('@');
    i = at + 1;
  }
  out.append(in.substr(i));
  return out;
}

// password=VALUE (conninfo keyword or URL query parameter; VALUE may be quoted).
std::string redact_keyword(std::string_view in) {
  static constexpr std::string_view kKey = "password";
  std::string out;
  out.reserve(in.size());
  std::size_t i = 0;
  while (i < in.size()) {
    std::size_t k = std::string_view::npos;
    for (std::size_t j = i; j + kKey.size() <= in.size(); ++j) {
      bool match = true;
      for (std::size_t n = 0; n < kKey.size() && match; ++n)
        match = std::tolower(static_cast<unsigned char>(in[j + n])) == kKey[n];
      if (match) {
        k = j;
        break;
      }
    }
    if (k == std::string_view::npos) break;
    std::size_t p = k + kKey.size();
    while (p < in.size() && in[p] == ' ') ++p;
    out.append(in.substr(i, k + kKey.size() - i));
    if (p >= in.size() || in[p] != '=') {
      i = k + kKey.size();
      continue;
    }
    out.append(in.substr(k + kKey.size(), p + 1 - (k + kKey.size())));
    ++p;
    while (p < in.size() && in[p] == ' ') out.push_back(in[p++]);
    if (in.substr(p, kRedacted.size()) == kRedacted) {  // already redacted
      i = p;
      continue;
    }
    if (p < in.size() && in[p] == '\'') {
      // libpq quoting: '...' with \' and \\ escapes.
      std::size_t q = p + 1;
      while (q < in.size() && in[q] != '\'') q += in[q] == '\\' ? 2 : 1;
      out.append(kRedacted);
      i = q < in.size() ? q + 1 : in.size();
    } else {
      std::size_t q = p;
      while (q < in.size() && in[q] != ' ' && in[q] != '&' && in[q] != '"' && in[q] != '\n' && in[q] != '#') ++q;
      if (q > p) out.append(kRedacted);
      i = q;
    }
  }
  out.append(in.substr(i));
  return out;
}

}  // namespace

std::string redact_secrets(std::string_view text) { return redact_keyword(redact_userinfo(text)); }

}  // namespace lockbench
