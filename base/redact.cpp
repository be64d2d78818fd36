#include "base/redact.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

namespace lockbench {

namespace {

bool url_char(char c) {
  // Characters that can sit in a URL's user-info (RFC 3986 unreserved,
  // sub-delims, percent escapes): the password runs until '@' over these.
  const auto u = static_cast<unsigned char>(c);
  return std::isalnum(u) || std::string_view("-._~%!$&'()*+,;=:").find(c) != std::string_view::npos;
}

bool url_end(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '"' || c == '\'' || c == '<' || c == '>'; }

// The one URL scanner: every "scheme://" in `in`, its rest up to the first
// character for which `ends` holds handed to `edit`, which returns what
// replaces it; the text between URLs is kept as it is.
template <class Ends, class Edit>
std::string for_each_url(std::string_view in, Ends ends, Edit edit) {
  std::string out;
  out.reserve(in.size());
  std::size_t i = 0;
  while (i < in.size()) {
    const std::size_t sep = in.find("://", i);
    if (sep == std::string_view::npos) break;
    std::size_t end = sep + 3;
    while (end < in.size() && !ends(in[end])) ++end;
    out.append(in.substr(i, sep + 3 - i));
    out.append(edit(in.substr(sep + 3, end - sep - 3)));
    i = end;
  }
  out.append(in.substr(i));
  return out;
}

// Where an authority's user-info can run: over user-info characters and '@'.
// It ends at its last '@' before any '/', '?', '#' or space (libpq splits
// there too, so "p@ss" stays whole).
bool userinfo_ends(char c) { return c != '@' && !url_char(c); }

// The user-info of a URL's rest (after "://"): empty when it has no '@'.
std::string_view userinfo_of(std::string_view rest) {
  const std::size_t at = rest.rfind('@');
  return at == std::string_view::npos ? std::string_view() : rest.substr(0, at);
}

// scheme://user:password@ -> scheme://user:***@
std::string redact_userinfo(std::string_view in) {
  return for_each_url(in, userinfo_ends, [](std::string_view rest) {
    const std::string_view userinfo = userinfo_of(rest);
    const std::size_t colon = userinfo.find(':');
    if (userinfo.empty() || colon == std::string_view::npos) return std::string(rest);
    return std::string(userinfo.substr(0, colon + 1)) + std::string(kRedacted) + std::string(rest.substr(userinfo.size()));
  });
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// %XX decoded, as libpq decodes a URI's keys and values.
std::string percent_decoded(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '%' && i + 2 < in.size() && hex_value(in[i + 1]) >= 0 && hex_value(in[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hex_value(in[i + 1]) * 16 + hex_value(in[i + 2])));
      i += 2;
    } else {
      out.push_back(in[i]);
    }
  }
  return out;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A URL's query as libpq reads it: each key percent-decoded, so
// ?%70assword=X is a password; a dbname may itself be a connection string or
// URI (libpq expands it), so its decoded value is redacted in turn.
std::string redact_queries(std::string_view in) {
  return for_each_url(in, url_end, [](std::string_view url) {
    const std::size_t q = url.find('?');
    if (q == std::string_view::npos) return std::string(url);
    std::string out(url.substr(0, q + 1));
    const std::size_t hash = url.find('#', q);
    const std::string_view query = url.substr(q + 1, hash == std::string_view::npos ? std::string_view::npos : hash - q - 1);
    std::size_t p = 0;
    while (p <= query.size()) {
      const std::size_t amp = std::min(query.find('&', p), query.size());
      const std::string_view param = query.substr(p, amp - p);
      const std::size_t eq = param.find('=');
      const std::string key = lower(percent_decoded(param.substr(0, eq)));
      if (eq == std::string_view::npos) {
        out.append(param);
      } else if (key.find("password") != std::string::npos) {
        out.append(param.substr(0, eq + 1)).append(kRedacted);
      } else if (key == "dbname") {
        const std::string value = percent_decoded(param.substr(eq + 1));
        const std::string redacted = redact_secrets(value);
        out.append(param.substr(0, eq + 1)).append(redacted == value ? std::string(param.substr(eq + 1)) : redacted);
      } else {
        out.append(param);
      }
      if (amp < query.size()) out.push_back('&');
      p = amp + 1;
    }
    if (hash != std::string_view::npos) out.append(url.substr(hash));
    return out;
  });
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

std::string redact_secrets(std::string_view text) { return redact_keyword(redact_queries(redact_userinfo(text))); }

std::string redact_driver_message(std::string_view message, std::string_view url) {
  std::string out = redact_secrets(message);
  // The password as we read it (up to the last '@') and as libpq reads it (up
  // to the first '@': the rest becomes its "host name"), raw and decoded.
  std::vector<std::string> secrets;
  const std::size_t sep = url.find("://");
  if (sep != std::string_view::npos) {
    std::size_t end = sep + 3;
    while (end < url.size() && !userinfo_ends(url[end])) ++end;
    const std::string_view userinfo = userinfo_of(url.substr(sep + 3, end - sep - 3));
    const std::size_t colon = userinfo.find(':');
    if (colon != std::string_view::npos) {
      const std::string_view password = userinfo.substr(colon + 1);
      std::size_t from = 0;
      for (;;) {  // every '@'-separated piece, and the whole
        const std::size_t a = password.find('@', from);
        secrets.emplace_back(password.substr(from, a == std::string_view::npos ? std::string_view::npos : a - from));
        if (a == std::string_view::npos) break;
        from = a + 1;
      }
      secrets.emplace_back(password);
    }
  }
  for (std::size_t n = secrets.size(), k = 0; k < n; ++k) secrets.push_back(percent_decoded(secrets[k]));
  std::sort(secrets.begin(), secrets.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
  for (const auto& secret : secrets) {
    if (secret.size() < 2 || secret == kRedacted) continue;
    for (std::size_t p = out.find(secret); p != std::string::npos; p = out.find(secret, p + kRedacted.size()))
      out.replace(p, secret.size(), kRedacted);
  }
  // libpq quotes the host text it was given; it may hold what it took for a
  // host out of a mistyped password: never echoed.
  static constexpr std::string_view kHostName = "host name \"";
  for (std::size_t p = out.find(kHostName); p != std::string::npos; p = out.find(kHostName, p + 1)) {
    const std::size_t close = out.find('"', p + kHostName.size());
    if (close == std::string::npos) break;
    out.replace(p, close + 1 - p, "host name (as given in the URL)");
  }
  return out;
}

}  // namespace lockbench
