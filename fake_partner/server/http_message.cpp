#include "fake_partner/server/http_message.hpp"

#include <cctype>

namespace lockbench::partner_server {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

std::optional<std::string_view> HttpRequest::header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (iequals(k, name)) return std::string_view(v);
  }
  return std::nullopt;
}

std::string_view reason_phrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 201: return "Created";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 402: return "Payment Required";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 411: return "Length Required";
    case 413: return "Payload Too Large";
    case 415: return "Unsupported Media Type";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "Unknown";
  }
}

std::string render_head(const HttpResponse& r, std::size_t content_length, bool keep_alive) {
  std::string out;
  out.reserve(160 + r.headers.size() * 40);
  out += "HTTP/1.1 ";
  out += std::to_string(r.status);
  out += ' ';
  out += reason_phrase(r.status);
  out += "\r\n";
  for (const auto& [k, v] : r.headers) {
    out += k;
    out += ": ";
    out += v;
    out += "\r\n";
  }
  out += "Content-Type: ";
  out += r.content_type;
  out += "\r\nContent-Length: ";
  out += std::to_string(content_length);
  out += keep_alive ? "\r\nConnection: keep-alive\r\n\r\n" : "\r\nConnection: close\r\n\r\n";
  return out;
}

namespace {
int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace

std::optional<std::string> percent_decode(std::string_view s, bool plus_is_space) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '%') {
      if (i + 2 >= s.size()) return std::nullopt;  // "%" or "%4" at the end
      const int hi = hex_value(s[i + 1]);
      const int lo = hex_value(s[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

std::optional<std::map<std::string, std::string>> parse_form(std::string_view body) {
  std::map<std::string, std::string> out;
  std::size_t pos = 0;
  while (pos <= body.size()) {
    std::size_t amp = body.find('&', pos);
    if (amp == std::string_view::npos) amp = body.size();
    const std::string_view pair = body.substr(pos, amp - pos);
    if (!pair.empty()) {
      const std::size_t eq = pair.find('=');
      auto key = percent_decode(pair.substr(0, eq), true);
      auto value = eq == std::string_view::npos ? std::optional<std::string>("")
                                                : percent_decode(pair.substr(eq + 1), true);
      if (!key || !value) return std::nullopt;
      out[std::move(*key)] = std::move(*value);
    }
    pos = amp + 1;
  }
  return out;
}

namespace {
// A decoded segment that would split, escape or re-encode the path: an encoded
// '/' or '\\' (%2F, %5C), an encoded ';' (a parameter that is not one), a '%'
// left after decoding (double encoding: %2561), control bytes (%00, CR, LF).
bool unsafe_segment(std::string_view decoded) {
  for (const char c : decoded) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '/' || c == '\\' || c == ';' || c == '%' || u < 0x20 || u == 0x7f) return true;
  }
  return false;
}
}  // namespace

std::optional<Target> parse_target(std::string_view target) {
  Target t;
  const std::size_t q = target.find('?');
  const std::string_view path = target.substr(0, q);
  if (path.empty() || path.front() != '/' || path.find('#') != std::string_view::npos) return std::nullopt;
  std::size_t pos = 1;
  while (pos <= path.size()) {
    std::size_t slash = path.find('/', pos);
    if (slash == std::string_view::npos) slash = path.size();
    std::string_view seg = path.substr(pos, slash - pos);
    pos = slash + 1;
    seg = seg.substr(0, seg.find(';'));  // path parameters ("/admin;x=1/reset") name no resource
    // A trailing slash or "//" adds no segment: "/admin/state/" is "/admin/state".
    if (seg.empty()) continue;
    auto decoded = percent_decode(seg);
    if (!decoded || unsafe_segment(*decoded)) return std::nullopt;
    // Dot segments after decoding (RFC 3986 section 5.2.4; "%2e%2e" is ".."): "/v1/../admin" is "/admin".
    if (*decoded == ".") continue;
    if (*decoded == "..") {
      if (!t.segments.empty()) t.segments.pop_back();
      continue;
    }
    t.segments.push_back(std::move(*decoded));
  }
  if (q != std::string_view::npos) {
    auto query = parse_form(target.substr(q + 1));
    if (!query) return std::nullopt;
    t.query = std::move(*query);
  }
  return t;
}

}  // namespace lockbench::partner_server
