#include "fake_partner/server/http_api.hpp"

#include <algorithm>

#include <arpa/inet.h>
#include <cctype>

#include <charconv>
#include <cstdio>
#include <exception>
#include <string>

#include "fake_partner/model/partner.hpp"

namespace lockbench::partner_server {

namespace {

using nlohmann::json;
using partner::Endpoint;

bool starts_with_v1(std::string_view target) { return target.rfind("/v1/", 0) == 0 || target == "/v1"; }

std::string_view path_of(std::string_view target) { return target.substr(0, target.find('?')); }

HttpResponse method_not_allowed(const HttpRequest& request, std::string_view allow) {
  HttpResponse r = HttpApi::error(405, "method_not_allowed",
                                  request.method + " is not allowed on " + std::string(path_of(request.target)) +
                                      " (use " + std::string(allow) + ").",
                                  request.target);
  r.headers.emplace_back("Allow", std::string(allow));
  return r;
}

HttpResponse not_found(const HttpRequest& request) {
  return HttpApi::error(404, "not_found",
                        "Unrecognized request URL (" + request.method + ": " +
                            std::string(path_of(request.target)) + ").",
                        request.target);
}

HttpResponse bad_request(const HttpRequest& request, std::string_view code, std::string message) {
  return HttpApi::error(400, code, message, request.target);
}

// Whole-string unsigned decimal; nullopt for anything else ("", "-1", "12x").
std::optional<std::uint64_t> parse_u64(std::string_view s) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<std::int64_t> parse_i64(std::string_view s) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// The attribution headers. They never change what the model does, but a
// malformed value is a client bug worth a 400 rather than a silent 0.
std::optional<HttpResponse> parse_tags(const HttpRequest& request, partner::Tags& tags) {
  if (auto v = request.header("X-Op-Id")) {
    auto id = parse_u64(*v);
    if (!id) return bad_request(request, "invalid_header", "X-Op-Id must be an unsigned integer.");
    tags.op_id = *id;
  }
  if (auto v = request.header("X-Op-Step")) {
    auto step = parse_u64(*v);
    if (!step || *step > 1000) return bad_request(request, "invalid_header", "X-Op-Step must be 1, 2, ...");
    tags.op_step = static_cast<int>(*step);
  }
  if (auto v = request.header("X-Fencing-Token")) {
    auto token = parse_u64(*v);
    if (!token) return bad_request(request, "invalid_header", "X-Fencing-Token must be an unsigned integer.");
    tags.fencing_token = *token;
  }
  if (auto v = request.header("X-Client-Timeout-Ms")) {
    auto ms = parse_u64(*v);
    if (!ms || *ms > 86'400'000)
      return bad_request(request, "invalid_header", "X-Client-Timeout-Ms must be an integer from 0 to 86400000.");
    tags.client_timeout = std::chrono::milliseconds(*ms);
  }
  if (auto v = request.header("Idempotency-Key")) tags.idempotency_key = std::string(*v);
  if (auto v = request.header("X-Tenant"); v && !v->empty()) tags.tenant = std::string(*v);
  return std::nullopt;
}

// POST /api/v2/users/{id}/identities body {"provider": "...", "user_id": "..." | n}.
std::optional<HttpResponse> parse_link_body(const HttpRequest& request, partner::Call& call) {
  const json body = json::parse(request.body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) return bad_request(request, "invalid_body", "Payload validation error: 'Invalid JSON'.");
  if (!body.is_object()) {
    return bad_request(request, "invalid_body", "Payload validation error: 'Expected type object but found type " +
                                                    std::string(body.type_name()) + "'.");
  }
  for (const char* field : {"provider", "user_id"}) {
    if (!body.contains(field)) {
      return bad_request(request, "invalid_body",
                         std::string("Payload validation error: 'Missing required property: ") + field +
                             "' on property " + field + ".");
    }
  }
  const json& provider = body["provider"];
  const json& user_id = body["user_id"];
  if (!provider.is_string() || provider.get_ref<const std::string&>().empty()) {
    return bad_request(request, "invalid_body",
                       "Payload validation error: 'Expected type string but found type " +
                           std::string(provider.type_name()) + "' on property provider.");
  }
  if (user_id.is_string() && !user_id.get_ref<const std::string&>().empty()) {
    call.identity_user_id = user_id.get<std::string>();
  } else if (user_id.is_number_integer()) {
    call.identity_user_id = user_id.dump();  // Auth0 accepts numeric ids
  } else {
    return bad_request(request, "invalid_body",
                       "Payload validation error: 'Expected type string but found type " +
                           std::string(user_id.type_name()) + "' on property user_id.");
  }
  call.provider = provider.get<std::string>();
  return std::nullopt;
}

// Stripe takes form-encoded parameters; JSON objects are accepted too so a
// test can send either. Values are returned as strings, as in a form.
std::optional<std::map<std::string, std::string>> stripe_params(const HttpRequest& request, std::string& problem) {
  const auto content_type = request.header("Content-Type").value_or("");
  if (content_type.find("json") == std::string_view::npos) {
    auto form = parse_form(request.body);
    if (!form) problem = "Invalid form encoding in the request body.";
    return form;
  }
  const json body = json::parse(request.body, nullptr, false);
  if (body.is_discarded() || !body.is_object()) {
    problem = "Invalid JSON in the request body: expected an object.";
    return std::nullopt;
  }
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : body.items()) {
    if (k == "metadata" && v.is_object()) {
      for (const auto& [mk, mv] : v.items()) out["metadata[" + mk + "]"] = mv.is_string() ? mv.get<std::string>() : mv.dump();
    } else {
      out[k] = v.is_string() ? v.get<std::string>() : v.dump();
    }
  }
  return out;
}

HttpResponse stripe_missing(const HttpRequest& request, std::string_view param) {
  HttpResponse r = HttpApi::error(400, "parameter_missing", "Missing required param: " + std::string(param) + ".",
                                  request.target);
  return r;
}

// "amount": required, an integer (its sign is the model's to judge).
std::optional<HttpResponse> stripe_amount(const HttpRequest& request, const std::map<std::string, std::string>& params,
                                          partner::Call& call) {
  auto amount = params.find("amount");
  if (amount == params.end()) return stripe_missing(request, "amount");
  auto value = parse_i64(amount->second);
  if (!value) return bad_request(request, "parameter_invalid_integer", "Invalid integer: " + amount->second);
  call.amount = *value;
  return std::nullopt;
}

}  // namespace

HttpResponse HttpApi::error(int status, std::string_view error_code, std::string_view message,
                            std::string_view target) {
  HttpResponse r;
  r.status = status;
  json body;
  if (starts_with_v1(target)) {
    body = {{"error",
             {{"type", status == 429 ? "rate_limit_error" : "invalid_request_error"},
              {"code", error_code},
              {"message", message}}}};
  } else {
    body = {{"statusCode", status}, {"error", reason_phrase(status)}, {"message", message}, {"errorCode", error_code}};
  }
  r.body = body.dump();
  return r;
}

std::variant<ApiRequest, HttpResponse> map_api_request(const HttpRequest& request, const Target& target) {
  const auto& seg = target.segments;
  const std::string& method = request.method;
  ApiRequest out;
  partner::Call& call = out.call;

  if (seg.size() >= 4 && seg[0] == "api" && seg[1] == "v2" && seg[2] == "users") {
    call.user_id = seg[3];
    if (seg.size() == 4) {
      if (method != "GET") return method_not_allowed(request, "GET");
      call.endpoint = Endpoint::auth0_get;
    } else if (seg.size() == 5 && seg[4] == "identities") {
      if (method != "POST") return method_not_allowed(request, "POST");
      call.endpoint = Endpoint::auth0_link;
      if (auto bad = parse_link_body(request, call)) return *bad;
    } else if (seg.size() == 7 && seg[4] == "identities") {
      if (method != "DELETE") return method_not_allowed(request, "DELETE");
      call.endpoint = Endpoint::auth0_unlink;
      call.provider = seg[5];
      call.identity_user_id = seg[6];
    } else {
      return not_found(request);
    }
  } else if (seg.size() == 2 && seg[0] == "v1" && seg[1] == "charges") {
    if (method != "POST") return method_not_allowed(request, "POST");
    call.endpoint = Endpoint::stripe_charge;
    std::string problem;
    auto params = stripe_params(request, problem);
    if (!params) return bad_request(request, "parameter_invalid", problem);
    if (auto bad = stripe_amount(request, *params, call)) return *bad;
    auto currency = params->find("currency");
    if (currency == params->end() || currency->second.empty()) return stripe_missing(request, "currency");
    call.currency = currency->second;
    if (auto order = params->find("metadata[order_id]"); order != params->end()) call.order_id = order->second;
  } else if (seg.size() == 3 && seg[0] == "v1" && seg[1] == "charges") {
    if (method != "GET") return method_not_allowed(request, "GET");
    call.endpoint = Endpoint::stripe_get;
    call.charge_id = seg[2];
  } else if (seg.size() == 2 && seg[0] == "v1" && seg[1] == "payouts") {
    if (method != "POST") return method_not_allowed(request, "POST");
    call.endpoint = Endpoint::stripe_payout;
    std::string problem;
    auto params = stripe_params(request, problem);
    if (!params) return bad_request(request, "parameter_invalid", problem);
    if (auto bad = stripe_amount(request, *params, call)) return *bad;
    auto currency = params->find("currency");
    if (currency == params->end() || currency->second.empty()) return stripe_missing(request, "currency");
    call.currency = currency->second;
    auto account = params->find("metadata[account_id]");
    if (account == params->end() || account->second.empty()) return stripe_missing(request, "metadata[account_id]");
    call.account_id = account->second;
  } else if (seg.size() == 4 && seg[0] == "v1" && seg[1] == "customers" && seg[3] == "balance_transactions") {
    if (method != "POST") return method_not_allowed(request, "POST");
    call.endpoint = Endpoint::stripe_credit;
    call.customer_id = seg[2];
    std::string problem;
    auto params = stripe_params(request, problem);
    if (!params) return bad_request(request, "parameter_invalid", problem);
    if (auto bad = stripe_amount(request, *params, call)) return *bad;
    auto currency = params->find("currency");
    call.currency = currency == params->end() || currency->second.empty() ? "eur" : currency->second;
    auto reward = params->find("metadata[reward]");
    if (reward == params->end() || reward->second.empty()) return stripe_missing(request, "metadata[reward]");
    call.reward = reward->second;
  } else if (seg.size() == 2 && seg[0] == "v1" && seg[1] == "refunds") {
    if (method != "POST") return method_not_allowed(request, "POST");
    call.endpoint = Endpoint::stripe_refund;
    std::string problem;
    auto params = stripe_params(request, problem);
    if (!params) return bad_request(request, "parameter_invalid", problem);
    auto charge = params->find("charge");
    if (charge == params->end() || charge->second.empty()) return stripe_missing(request, "charge");
    call.charge_id = charge->second;
  } else {
    return not_found(request);
  }
  if (auto bad = parse_tags(request, out.tags)) return *bad;
  return out;
}

HttpResponse render_reply(const partner::Reply& reply) {
  HttpResponse r;
  r.status = reply.status;
  for (auto& [name, value] : reply.headers()) {
    if (iequals(name, "Content-Type")) {
      r.content_type = value;
    } else {
      r.headers.emplace_back(name, value);
    }
  }
  r.body = reply.body().dump();
  return r;
}

std::variant<HttpResponse, Pending> HttpApi::handle(const HttpRequest& request, Duration now) {
  const auto target = parse_target(request.target);
  if (!target) return bad_request(request, "invalid_uri", "Malformed request target (bad percent-encoding).");
  return handle(request, *target, now);
}

std::variant<HttpResponse, Pending> HttpApi::handle(const HttpRequest& request, const Target& target, Duration now) {
  // A model bug must cost one answer, not the server and every call in flight.
  try {
    if (!target.segments.empty() && target.segments[0] == "admin") return handle_admin(request, target, now);
    // /metrics, where Prometheus looks by convention: the same text as /admin/metrics?format=prometheus.
    if (target.segments.size() == 1 && target.segments[0] == "metrics") {
      if (request.method != "GET") return method_not_allowed(request, "GET");
      HttpResponse r;
      r.content_type = "text/plain; version=0.0.4; charset=utf-8";
      r.body = partner_.metrics_prometheus();
      return r;
    }
    return handle_api(request, target, now);
  } catch (const std::exception& e) {
    return error(500, "internal_error", e.what(), request.target);
  }
}

std::optional<HttpResponse> HttpApi::refuse_reset(const HttpRequest& request, const std::string& run, bool force,
                                                  Duration now) const {
  if (!live_ || live_->done || live_->run == run || force) return std::nullopt;
  const Duration active = std::max(live_->reset_at, live_->last_call);
  if (now - active >= kLiveWindow) return std::nullopt;  // silent that long: its runner is gone
  const auto seconds = [](Duration d) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f s", std::chrono::duration<double>(d).count());
    return std::string(text);
  };
  return error(409, "run_live",
               "reset refused: run " + live_->run + " is live on this partner (reset " + seconds(now - live_->reset_at) +
                   " ago, its last call " + seconds(now - live_->last_call) + " ago); a reset for " +
                   (run.empty() ? std::string("an unnamed run") : "run " + run) +
                   " would spoil its checks. Wait until it ends (or " + seconds(kLiveWindow) +
                   " after its last call), or reset anyway with --force (\"force\": true)",
               request.target);
}

std::variant<HttpResponse, Pending> HttpApi::handle_api(const HttpRequest& request, const Target& target,
                                                        Duration now) {
  if (live_) live_->last_call = now;  // the live run's traffic (or anyone's: the partner cannot tell them apart)
  auto mapped = map_api_request(request, target);
  if (auto* response = std::get_if<HttpResponse>(&mapped)) return std::move(*response);
  const auto& api = std::get<ApiRequest>(mapped);
  const partner::Plan plan = partner_.arrive(api.call, api.tags, now);

  Pending p;
  p.call_id = plan.call_id;
  p.apply_after = plan.apply_after;
  p.delay = plan.delay;
  using K = partner::FaultPlan::Kind;
  switch (plan.fault.kind) {
    case K::none:
    case K::error:
    case K::rate_limit_429:
    case K::slow:  // arrive() made it a slower plain call (plan.delay)
      p.transport.kind = Transport::Kind::normal;  // the model's Reply already carries the status
      break;
    case K::hang:
      p.transport.kind = Transport::Kind::hang;
      p.transport.hang_for = plan.fault.hang_for;
      break;
    case K::reset: p.transport.kind = Transport::Kind::reset; break;
    case K::slow_body:
      p.transport.kind = Transport::Kind::slow_body;
      p.transport.bytes_per_s = plan.fault.bytes_per_s;
      break;
    case K::truncate: p.transport.kind = Transport::Kind::truncate; break;
    case K::garbage: p.transport.kind = Transport::Kind::garbage; break;
    case K::count_: break;  // not a kind
  }
  return p;
}

HttpResponse HttpApi::execute(std::uint64_t call_id, Duration now) {
  partner::Reply reply;
  try {
    reply = partner_.execute(call_id, now);
  } catch (const std::exception& e) {
    return error(500, "internal_error", e.what(), "");
  }
  if (reply.status == 0) {
    // No answer is due (a before-phase hang, reset or garbage): the transport
    // never sends this; 502 is what a proxy would show if it did.
    return error(502, "no_answer", "The partner gave no answer.", "");
  }
  return render_reply(reply);
}

void HttpApi::complete(std::uint64_t call_id, Duration now, bool lost) {
  try {
    partner_.complete(call_id, now, lost ? partner::Delivery::lost : partner::Delivery::as_planned);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fake_partner: complete(%llu): %s\n", static_cast<unsigned long long>(call_id), e.what());
  }
}

namespace {

HttpResponse json_response(const json& body, int status = 200) {
  HttpResponse r;
  r.status = status;
  r.body = body.dump();
  return r;
}

// An admin body: empty means {}; anything else must be a JSON object.
std::optional<json> admin_body(const HttpRequest& request, HttpResponse& error_out) {
  if (request.body.find_first_not_of(" \t\r\n") == std::string::npos) return json::object();
  json body = json::parse(request.body, nullptr, false);
  if (body.is_discarded() || !body.is_object()) {
    error_out = HttpApi::error(400, "invalid_json", "The request body must be a JSON object.", request.target);
    return std::nullopt;
  }
  return body;
}

}  // namespace

namespace {
std::string_view trimmed(std::string_view v) {
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
  return v;
}

bool is_tchar(char c) {
  const auto u = static_cast<unsigned char>(c);
  return std::isalnum(u) || std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool is_token(std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), is_tchar); }

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Dotted-quad IPv4 as inet_aton reads none of its other forms: four decimal
// parts 0..255, no leading zero ("010.1.1.1" is octal to some resolvers).
bool ipv4_literal(std::string_view s) {
  int parts = 0;
  std::size_t pos = 0;
  while (true) {
    const std::size_t dot = std::min(s.find('.', pos), s.size());
    const std::string_view part = s.substr(pos, dot - pos);
    if (!all_digits(part) || part.size() > 3 || (part.size() > 1 && part.front() == '0')) return false;
    if (std::stoi(std::string(part)) > 255) return false;
    ++parts;
    if (dot == s.size()) break;
    pos = dot + 1;
  }
  return parts == 4;
}

// A DNS name (RFC 1123): labels of letters, digits and '-', 1..63 bytes, not
// starting or ending with '-'; at most 253 bytes; its last label not all digits
// (else it is a malformed address: "999.999.999.999").
bool dns_name(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  std::size_t pos = 0;
  std::string_view last;
  while (true) {
    const std::size_t dot = std::min(s.find('.', pos), s.size());
    const std::string_view label = s.substr(pos, dot - pos);
    if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-') return false;
    for (const char c : label)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') return false;
    last = label;
    if (dot == s.size()) break;
    pos = dot + 1;
  }
  return !all_digits(last);
}
}  // namespace

std::optional<Authority> parse_host_header(const HttpRequest& request) {
  std::optional<std::string_view> value;
  for (const auto& [k, v] : request.headers) {
    if (!iequals(k, "Host")) continue;
    if (value) return std::nullopt;  // given twice: which one a proxy read is anyone's guess
    value = v;
  }
  if (!value) return std::nullopt;
  const std::string_view h = trimmed(*value);
  Authority out;
  std::string_view port;
  if (!h.empty() && h.front() == '[') {
    const std::size_t close = h.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    const std::string inner(h.substr(1, close - 1));
    in6_addr a6{};
    if (inet_pton(AF_INET6, inner.c_str(), &a6) != 1) return std::nullopt;  // "[evil.com]"
    out.host = std::string(h.substr(0, close + 1));
    out.address = true;
    const std::string_view rest = h.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return std::nullopt;
      port = rest.substr(1);
      if (port.empty()) return std::nullopt;
    }
  } else {
    const std::size_t colon = h.find(':');
    const std::string_view name = h.substr(0, colon);
    if (colon != std::string_view::npos) {
      port = h.substr(colon + 1);
      if (port.empty()) return std::nullopt;
    }
    if (ipv4_literal(name)) {
      out.address = true;
    } else if (!dns_name(name)) {
      return std::nullopt;  // userinfo, a path, spaces, "999.999.999.999", a trailing dot
    }
    out.host = std::string(name);
  }
  if (!port.empty() && (!all_digits(port) || port.size() > 5 || std::stoi(std::string(port)) > 65535)) return std::nullopt;
  return out;
}

std::optional<MediaType> parse_media_type(std::string_view value) {
  value = trimmed(value);
  const std::size_t semi = std::min(value.find(';'), value.size());
  const std::string_view essence = value.substr(0, semi);
  const std::size_t slash = essence.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  MediaType m;
  const std::string_view type = essence.substr(0, slash), subtype = essence.substr(slash + 1);
  if (!is_token(type) || !is_token(subtype)) return std::nullopt;  // "application/json, text/plain" has a space
  for (const char c : type) m.type += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char c : subtype) m.subtype += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  // Parameters: *( OWS ";" OWS token "=" ( token / quoted-string ) ), RFC 9110 section 8.3.1.
  std::string_view rest = value.substr(semi);
  while (!rest.empty()) {
    rest.remove_prefix(1);  // the ';'
    rest = trimmed(rest);
    const std::size_t eq = rest.find('=');
    if (eq == std::string_view::npos || !is_token(rest.substr(0, eq))) return std::nullopt;
    rest.remove_prefix(eq + 1);
    std::size_t end = 0;
    if (!rest.empty() && rest.front() == '"') {
      for (end = 1; end < rest.size() && rest[end] != '"'; ++end)
        if (rest[end] == '\\') ++end;
      if (end >= rest.size()) return std::nullopt;
      ++end;
    } else {
      end = std::min(rest.find(';'), rest.size());
      if (!is_token(trimmed(rest.substr(0, end)))) return std::nullopt;
    }
    rest = trimmed(rest.substr(end));
    if (!rest.empty() && rest.front() != ';') return std::nullopt;
  }
  return m;
}

bool guarded_target(const Target& target) {
  if (target.segments.empty()) return false;
  // Compared as a lenient server would read it: any case, trailing dots and spaces dropped ("/ADMIN./reset").
  std::string first;
  for (const char c : target.segments.front()) first += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  while (!first.empty() && (first.back() == '.' || first.back() == ' ' || first.back() == '\t')) first.pop_back();
  return first == "admin" || first == "metrics";
}

std::optional<HttpResponse> admin_refusal(const HttpRequest& request, const Target& target,
                                          const std::vector<std::string>& admin_hosts) {
  if (!guarded_target(target)) return std::nullopt;
  const auto host = parse_host_header(request);
  const bool allowed = host && (host->address || iequals(host->host, "localhost") ||
                                std::any_of(admin_hosts.begin(), admin_hosts.end(),
                                            [&](const std::string& h) { return iequals(h, host->host); }));
  if (!allowed)
    return HttpApi::error(403, "forbidden_host",
                          "/admin/* and /metrics answer one Host header that is an IP address or localhost, or a "
                          "name given with --admin-host.",
                          request.target);
  if (request.method == "GET" || request.method == "HEAD") return std::nullopt;
  int types = 0;
  for (const auto& [k, v] : request.headers) types += iequals(k, "Content-Type") ? 1 : 0;
  const auto type = types == 1 ? parse_media_type(request.header("Content-Type").value_or("")) : std::nullopt;
  if (!type || type->type != "application" || type->subtype != "json")
    return HttpApi::error(415, "unsupported_media_type",
                          "Admin requests other than GET need one Content-Type: application/json.", request.target);
  return std::nullopt;
}

std::optional<HttpResponse> admin_refusal(const HttpRequest& request, const std::vector<std::string>& admin_hosts) {
  const auto target = parse_target(request.target);
  if (!target) return HttpApi::error(400, "invalid_uri", "Malformed request target.", request.target);
  return admin_refusal(request, *target, admin_hosts);
}

std::optional<HttpResponse> framing_refusal(const std::vector<std::string>& transfer_encodings, bool has_content_length) {
  if (transfer_encodings.empty()) return std::nullopt;
  const auto bad = [](std::string_view why) {
    return HttpApi::error(400, "bad_request", std::string("Request framing refused (RFC 9112 section 6): ") + std::string(why), "");
  };
  if (has_content_length) return bad("Transfer-Encoding together with Content-Length.");
  if (transfer_encodings.size() > 1 || !iequals(trimmed(transfer_encodings.front()), "chunked"))
    return bad("a Transfer-Encoding other than chunked.");
  return std::nullopt;
}

HttpResponse HttpApi::handle_admin(const HttpRequest& request, const Target& target, Duration now) {
  const auto& seg = target.segments;
  const std::string& method = request.method;
  const auto is = [&](std::initializer_list<std::string_view> path) {
    return seg.size() == path.size() && std::equal(seg.begin(), seg.end(), path.begin());
  };
  HttpResponse bad;
  // The model refuses bad settings with a one-line SettingError naming the path.
  try {
    if (is({"admin", "reset"})) {
      if (method != "POST") return method_not_allowed(request, "POST");
      auto body = admin_body(request, bad);
      if (!body) return bad;
      // "run": who resets (a runner names its run); "force": even while another run is live.
      const json run = body->contains("run") ? (*body)["run"] : json("");
      const json force = body->contains("force") ? (*body)["force"] : json(false);
      if (!run.is_string() || run.get_ref<const std::string&>().size() > 200)
        return error(400, "invalid_setting", "reset.run: expected the resetting run's name, a string of at most 200 bytes",
                     request.target);
      if (!force.is_boolean()) return error(400, "invalid_setting", "reset.force: expected true or false", request.target);
      body->erase("run");
      body->erase("force");
      if (auto refused = refuse_reset(request, run.get<std::string>(), force.get<bool>(), now)) return *refused;
      const auto spec = partner::ResetSpec::from_json(*body);
      partner_.reset(spec, now);
      if (run.get_ref<const std::string&>().empty()) live_.reset();
      else live_ = LiveRun{run.get<std::string>(), now, now, false};
      // Listed plus generated: a range costs nothing until its members are touched.
      const auto range = [](const auto& r) { return r ? r->count : std::int64_t{0}; };
      return json_response({{"ok", true},
                            {"persons", static_cast<std::int64_t>(spec.persons.size()) + range(spec.person_range)},
                            {"orders", static_cast<std::int64_t>(spec.orders.size()) + range(spec.order_range)},
                            {"accounts", static_cast<std::int64_t>(spec.accounts.size()) + range(spec.account_range)}});
    }
    if (is({"admin", "run-done"})) {  // the run that reset the partner is over: another may reset it at once
      if (method != "POST") return method_not_allowed(request, "POST");
      auto body = admin_body(request, bad);
      if (!body) return bad;
      const json run = body->contains("run") ? (*body)["run"] : json();
      if (!run.is_string()) return error(400, "invalid_setting", "run-done.run: expected the run's name", request.target);
      const bool ours = live_ && live_->run == run.get_ref<const std::string&>();
      if (ours) live_->done = true;
      return json_response({{"ok", true}, {"was_live", ours}});
    }
    if (is({"admin", "config"})) {
      if (method == "GET") return json_response(partner_.config().to_json());
      if (method != "PUT") return method_not_allowed(request, "GET, PUT");
      auto body = admin_body(request, bad);
      if (!body) return bad;
      partner_.update_config(*body);
      return json_response(partner_.config().to_json());
    }
    if (is({"admin", "state"})) {
      if (method != "GET") return method_not_allowed(request, "GET");
      return json_response(partner_.state_json());
    }
    if (is({"admin", "check"})) {
      if (method != "POST") return method_not_allowed(request, "POST");
      auto body = admin_body(request, bad);
      if (!body) return bad;
      partner::CheckInput input;
      for (const auto& [key, value] : body->items())
        if (key != "service" && key != "paid_orders")
          return error(400, "invalid_setting", "check." + key + ": unknown setting (accepted: service, paid_orders)",
                       request.target);
      // {"service": {"primaries", "orders", "balances", "claims"}}: the two-sided verdict.
      if (body->contains("service")) input.service = partner::ServiceView::from_json((*body)["service"]);
      if (body->contains("paid_orders")) {
        const json& paid = (*body)["paid_orders"];
        if (!paid.is_array()) {
          return error(400, "invalid_setting", "check.paid_orders: expected an array of order ids", request.target);
        }
        input.paid_orders.emplace();
        for (const auto& id : paid) {
          if (!id.is_string()) {
            return error(400, "invalid_setting", "check.paid_orders: expected an array of order ids", request.target);
          }
          input.paid_orders->push_back(id.get<std::string>());
        }
      }
      return json_response(partner_.check(now, input).to_json());
    }
    if (is({"admin", "metrics"})) {
      if (method != "GET") return method_not_allowed(request, "GET");
      auto format = target.query.find("format");
      if (format == target.query.end() || format->second == "json") return json_response(partner_.metrics_json());
      if (format->second != "prometheus") {
        return error(400, "invalid_setting", "format: '" + format->second + "' is not a format (use json, prometheus)",
                     request.target);
      }
      HttpResponse r;
      r.content_type = "text/plain; version=0.0.4; charset=utf-8";
      r.body = partner_.metrics_prometheus();
      return r;
    }
    if (is({"admin", "metrics", "reset"})) {
      if (method != "POST") return method_not_allowed(request, "POST");
      partner_.reset_metrics();
      return json_response({{"ok", true}});
    }
  } catch (const SettingError& e) {
    return error(400, "invalid_setting", e.what(), request.target);
  }
  return not_found(request);
}

}  // namespace lockbench::partner_server
