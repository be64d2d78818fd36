// The mapping between HTTP and the partner model, with no sockets.
//
// Requests become typed partner::Call + Tags (or a 4xx with the partner's
// error body), typed Replies become status, headers and JSON. Admin endpoints
// (section E of docs/reference/partner-api.md) are answered here at once: they never wait
// and never fault. The Asio server only moves bytes and runs the timers.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/units.hpp"
#include "fake_partner/server/http_message.hpp"

#include "fake_partner/model/call.hpp"

namespace lockbench::partner {
class Partner;
}

namespace lockbench::partner_server {

// How the server must deliver an answer: the transport side of a planned fault.
// Error statuses and 429s are ordinary answers; these are the ones that break HTTP.
struct Transport {
  enum class Kind { normal, hang, reset, slow_body, truncate, garbage };
  Kind kind = Kind::normal;
  std::optional<Duration> hang_for;  // hang: nullopt = never answer
  double bytes_per_s = 0;            // slow_body
};

// A call the model accepted: the server waits apply_after, calls execute(),
// waits the rest of delay, then delivers the answer and calls complete().
struct Pending {
  std::uint64_t call_id = 0;
  Duration apply_after{0};
  Duration delay{0};
  Transport transport;
};

// A request mapped to the typed model call, before it reaches the model.
struct ApiRequest {
  partner::Call call;
  partner::Tags tags;
};

// The pure half of the mapping: path, method, headers and body to a typed
// call, or the 4xx (404, 405, 400) to answer instead. Never throws.
std::variant<ApiRequest, HttpResponse> map_api_request(const HttpRequest& request, const Target& target);

// A model Reply as HTTP: status, X-RateLimit-*, Idempotent-Replayed, JSON body.
HttpResponse render_reply(const partner::Reply& reply);

// The admin endpoints change the oracle, so a page in a browser on the same
// machine must not reach them: a cross-origin "simple" POST cannot set
// Content-Type: application/json, and a DNS-rebinding page reaches us under
// its own domain name. So every guarded request (`guarded_target`: /admin/*
// and /metrics, in any spelling the router could read as them) needs one Host
// header that is one valid authority (`parse_host_header`) naming an address
// (127.0.0.1, 10.1.2.3, [::1]; any port), localhost, or one of `admin_hosts`
// (the server's --admin-host, e.g. its Kubernetes service name), and every one
// but GET and HEAD needs one Content-Type whose media type is application/json.
// The refusal (403 forbidden_host, 415 unsupported_media_type), or nullopt.
// The guard reads the normalised target (parse_target), the router's view.
std::optional<HttpResponse> admin_refusal(const HttpRequest& request, const Target& target,
                                          const std::vector<std::string>& admin_hosts);
// The same on the raw target; 400 when it cannot be normalised.
std::optional<HttpResponse> admin_refusal(const HttpRequest& request, const std::vector<std::string>& admin_hosts);

// /admin/* or /metrics: the first normalised segment, in any case, trailing dots and spaces dropped.
bool guarded_target(const Target& target);

// The Host header when it is given once and is one authority (RFC 3986 section
// 3.2): an IPv4 dotted quad (0..255 each, no leading zero), an IPv6 literal in
// brackets that inet_pton reads, or a DNS name; an optional port 0..65535.
// nullopt otherwise ("[evil.com]", "999.999.999.999", "a@b", two Host headers).
struct Authority {
  std::string host;  // without the port; "[::1]" keeps its brackets
  bool address = false;
};
std::optional<Authority> parse_host_header(const HttpRequest& request);

// A Content-Type value as a media type (RFC 9110 section 8.3.1): type "/"
// subtype (tokens, lower-cased), then ";" parameters, each token=token or a
// quoted string. nullopt for anything else ("application/json, text/plain").
struct MediaType {
  std::string type, subtype;
};
std::optional<MediaType> parse_media_type(std::string_view value);

// RFC 9112 section 6: a request whose length cannot be told for sure is
// refused with 400, never guessed (request smuggling): Transfer-Encoding
// other than exactly "chunked", sent more than once, or with Content-Length.
// `transfer_encodings`: every Transfer-Encoding field's value.
std::optional<HttpResponse> framing_refusal(const std::vector<std::string>& transfer_encodings,
                                            bool has_content_length);

class HttpApi {
 public:
  explicit HttpApi(partner::Partner& partner) : partner_(partner) {}

  // Admin requests and bad input are answered now; API calls arrive at the model.
  std::variant<HttpResponse, Pending> handle(const HttpRequest& request, Duration now);
  // The same on the target the server has already normalised (its guards read it): parsed once per request.
  std::variant<HttpResponse, Pending> handle(const HttpRequest& request, const Target& target, Duration now);
  // The effect happens (unless the fault is before it); returns the answer to send.
  HttpResponse execute(std::uint64_t call_id, Duration now);
  // The answer left as planned (lost = false), or the client gave up or the
  // connection died first (lost = true).
  void complete(std::uint64_t call_id, Duration now, bool lost);

  // The error body the server sends for problems found before routing
  // (431, 413, unparsable requests). Auth0 shape for /api/v2 and admin, Stripe's for /v1.
  static HttpResponse error(int status, std::string_view error_code, std::string_view message,
                            std::string_view target);

 // How long a run stays live after its reset or its last call, unless it says it is done
  // (POST /admin/run-done): a runner killed with kill -9 frees the partner this much later.
  static constexpr Duration kLiveWindow = std::chrono::seconds(10);

 private:
  // The run that reset the partner last ("run" in the reset body), while it is live.
  struct LiveRun {
    std::string run;
    Duration reset_at{0}, last_call{0};
    bool done = false;
  };
  std::optional<HttpResponse> refuse_reset(const HttpRequest& request, const std::string& run, bool force, Duration now) const;
  HttpResponse handle_admin(const HttpRequest& request, const Target& target, Duration now);
  std::variant<HttpResponse, Pending> handle_api(const HttpRequest& request, const Target& target, Duration now);
  partner::Partner& partner_;
  std::optional<LiveRun> live_;  // the server's one thread only
};

}  // namespace lockbench::partner_server
