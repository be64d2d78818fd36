// Plain HTTP messages and the small text helpers the API mapping needs.
//
// No sockets here: the Asio server fills an HttpRequest from Beast's parser
// and renders an HttpResponse itself, so faults (truncate, slow body) can cut
// the bytes wherever they like.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lockbench::partner_server {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  std::string method;  // "GET", "POST"... as sent
  std::string target;  // path and query, still percent-encoded
  HeaderList headers;  // names as sent; look them up with header()
  std::string body;

  // Case-insensitive lookup of the first header with this name.
  std::optional<std::string_view> header(std::string_view name) const;
};

struct HttpResponse {
  int status = 200;
  HeaderList headers;  // Content-Type/Length are added when rendering
  std::string body;
  std::string content_type = "application/json";
};

// "OK", "Not Found"...; "Unknown" for codes we never send.
std::string_view reason_phrase(int status);

// Status line and headers (with Content-Type, Content-Length and Connection),
// ending with the blank line. content_length may differ from body.size():
// the truncate fault announces more than it sends.
std::string render_head(const HttpResponse& r, std::size_t content_length, bool keep_alive);

// Decodes %XX and (when plus_is_space) '+'. nullopt for a malformed escape.
std::optional<std::string> percent_decode(std::string_view s, bool plus_is_space = false);

// The target split into its normalised path segments and its decoded query.
// Normalised as every guard and the router read it: each segment's
// `;parameters` dropped, percent-decoded, empty segments ("//") and "."
// dropped, ".." removing the segment before it (never above the root).
// nullopt for a malformed escape, a '#', a target not starting with '/', and
// a segment that decodes to '/', '\\', ';', '%' or a control byte (%2F,
// %2561, %00): a spelling no client of the partner's API sends.
struct Target {
  std::vector<std::string> segments;              // "/api/v2/users/a%7Cb" -> {"api","v2","users","a|b"}
  std::map<std::string, std::string> query;       // last value wins
};
std::optional<Target> parse_target(std::string_view target);

// application/x-www-form-urlencoded body: "a=1&metadata[order_id]=o1".
// nullopt when an escape is malformed.
std::optional<std::map<std::string, std::string>> parse_form(std::string_view body);

bool iequals(std::string_view a, std::string_view b);

}  // namespace lockbench::partner_server
