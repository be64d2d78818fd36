#include "real/partner_http.hpp"

#include <httplib.h>

#include <cctype>
#include <chrono>
#include <memory>
#include <stdexcept>

namespace lockbench::real {

std::atomic<std::uint64_t> PartnerHttp::next_generation_{1};

namespace {

// The calling thread's keep-alive client (one per worker thread, as a servlet
// container's HTTP client pool would give each request a pooled connection).
struct ThreadClient {
  std::uint64_t generation = 0;
  std::unique_ptr<httplib::Client> client;
};

ThreadClient& thread_client() {
  thread_local ThreadClient tc;
  return tc;
}

std::pair<std::string, std::string> split_identity(const std::string& identity) {
  const auto bar = identity.find('|');
  if (bar == std::string::npos) return {identity, ""};
  return {identity.substr(0, bar), identity.substr(bar + 1)};
}

}  // namespace

namespace {
std::string without_trailing_slash(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}
}  // namespace

PartnerHttp::PartnerHttp(std::string url, Duration connect_timeout, Duration read_timeout)
    : url_(without_trailing_slash(std::move(url))),
      connect_timeout_(connect_timeout),
      read_timeout_(read_timeout),
      generation_(next_generation_.fetch_add(1)) {
  if (url_.rfind("http://", 0) != 0 || url_.size() <= 7)
    throw SettingError("--partner: '" + url_ + "' is not an http:// URL (e.g. http://127.0.0.1:8080)");
}

std::string PartnerHttp::encode_segment(std::string_view s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

namespace {

httplib::Headers headers_of(const PartnerCall& call, Duration read_timeout) {
  httplib::Headers headers = {{"X-Op-Id", std::to_string(call.op_id)}};
  if (call.op_step > 0) headers.emplace("X-Op-Step", std::to_string(call.op_step));
  if (call.fencing_token) headers.emplace("X-Fencing-Token", std::to_string(*call.fencing_token));
  if (!call.idempotency_key.empty()) headers.emplace("Idempotency-Key", call.idempotency_key);
  // The oracle tells a call this client abandoned (overlap_abandoned) from one it still waits for.
  headers.emplace("X-Client-Timeout-Ms", std::to_string(std::chrono::ceil<std::chrono::milliseconds>(read_timeout).count()));
  return headers;
}

// The call as the partner's API takes it (docs/reference/partner-api.md): Auth0's JSON, Stripe's form encoding.
httplib::Result send_call(httplib::Client& client, const PartnerCall& call, const httplib::Headers& headers) {
  const std::string user = "/api/v2/users/" + PartnerHttp::encode_segment(call.subject);
  // Stripe's form encoding: amount, currency and metadata[...] as a body.
  const auto form = [&](const char* meta, const std::string& value) {
    return "amount=" + std::to_string(call.amount) + "&currency=" + PartnerHttp::encode_segment(call.currency) + "&metadata%5B" +
           meta + "%5D=" + PartnerHttp::encode_segment(value);
  };
  constexpr const char* kForm = "application/x-www-form-urlencoded";
  switch (call.kind) {
    case PartnerCall::Kind::charge: return client.Post("/v1/charges", headers, form("order_id", call.subject), kForm);
    case PartnerCall::Kind::payout: return client.Post("/v1/payouts", headers, form("account_id", call.subject), kForm);
    case PartnerCall::Kind::credit: {
      const std::string path = "/v1/customers/" + PartnerHttp::encode_segment(call.subject) + "/balance_transactions";
      return client.Post(path.c_str(), headers, form("reward", call.identity), kForm);
    }
    case PartnerCall::Kind::get_user: return client.Get(user.c_str(), headers);
    case PartnerCall::Kind::unlink: {
      const auto [provider, uid] = split_identity(call.identity);
      const std::string path = user + "/identities/" + PartnerHttp::encode_segment(provider) + "/" + PartnerHttp::encode_segment(uid);
      return client.Delete(path.c_str(), headers);
    }
    case PartnerCall::Kind::link: {
      const auto [provider, uid] = split_identity(call.identity);
      const std::string body = nlohmann::json{{"provider", provider}, {"user_id", uid}}.dump();
      return client.Post((user + "/identities").c_str(), headers, body, "application/json");
    }
  }
  return httplib::Result{nullptr, httplib::Error::Unknown};
}

// An answer: its status, and what its body says (an error code, the object made).
PartnerReply reply_of(const httplib::Response& res) {
  PartnerReply reply;
  reply.status = res.status;
  if (reply.status < 100) {
    reply.status = 0;
    reply.failure = CallFailure::bad_response;
    return reply;
  }
  reply.replayed = res.get_header_value("Idempotent-Replayed") == "true";
  const auto body = nlohmann::json::parse(res.body, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object()) return reply;
  if (reply.status >= 400) {
    // Auth0: {"statusCode","error","message","errorCode"}: the code tells a 409
    // "identity exists" (done) from a 409 "stale token" (refused).
    // Stripe: {"error": {"type", "code", "message"}}: idempotency_key_in_use, lock_timeout, ...
    if (body.contains("errorCode") && body["errorCode"].is_string()) {
      reply.error_code = body["errorCode"].get<std::string>();
    } else if (body.contains("error") && body["error"].is_object() && body["error"].contains("code") &&
               body["error"]["code"].is_string()) {
      reply.error_code = body["error"]["code"].get<std::string>();
    }
  } else if (body.contains("id") && body["id"].is_string()) {
    reply.object_id = body["id"].get<std::string>();  // ch_..., po_..., txn_...
  }
  return reply;
}

// No answer: which failure, told apart by how long it took.
CallFailure failure_of(httplib::Error error, Duration elapsed, Duration connect_timeout, Duration read_timeout) {
  switch (error) {
    case httplib::Error::Connection:
    case httplib::Error::ConnectionTimeout:
      // A refused connection fails at once; one that hangs ends at the connect timeout.
      return elapsed >= connect_timeout * 9 / 10 ? CallFailure::timeout : CallFailure::connect;
    case httplib::Error::Read:
      // httplib says "Read" for both a read timeout and a closed or reset socket.
      return elapsed >= read_timeout * 9 / 10 ? CallFailure::timeout : CallFailure::reset;
    case httplib::Error::Write: return CallFailure::reset;
    default: return CallFailure::bad_response;
  }
}

}  // namespace

PartnerReply PartnerHttp::attempt(const PartnerCall& call) {
  ThreadClient& tc = thread_client();
  if (tc.generation != generation_ || !tc.client) {
    tc.client = std::make_unique<httplib::Client>(url_);
    tc.client->set_keep_alive(true);
    // httplib writes headers and body apart: without TCP_NODELAY, Nagle holds the body until the
    // server's delayed ACK (~40 ms on loopback), so a 0 ms partner call would cost ~43 ms.
    tc.client->set_tcp_nodelay(true);
    tc.client->set_connection_timeout(std::chrono::duration_cast<std::chrono::microseconds>(connect_timeout_));
    tc.client->set_read_timeout(std::chrono::duration_cast<std::chrono::microseconds>(read_timeout_));
    tc.client->set_write_timeout(std::chrono::duration_cast<std::chrono::microseconds>(read_timeout_));
    tc.generation = generation_;
  }
  const auto start = std::chrono::steady_clock::now();
  const httplib::Result res = send_call(*tc.client, call, headers_of(call, read_timeout_));
  if (res) return reply_of(*res);
  PartnerReply reply;
  reply.failure = failure_of(res.error(), std::chrono::steady_clock::now() - start, connect_timeout_, read_timeout_);
  tc.client.reset();  // never reuse a connection in an unknown state
  return reply;
}

namespace {
// httplib names a failure in one word ("Connection"); a user needs the reason.
std::string failure_text(httplib::Error e) {
  switch (e) {
    case httplib::Error::Connection:
      return "cannot connect (nothing listens there, or the host is unreachable)";
    case httplib::Error::ConnectionTimeout: return "the connection timed out (no answer to connect)";
    case httplib::Error::Read: return "the connection closed or timed out before a whole answer came";
    case httplib::Error::Write: return "the request could not be sent (connection closed)";
    case httplib::Error::SSLConnection:
    case httplib::Error::SSLLoadingCerts:
    case httplib::Error::SSLServerVerification: return "TLS failed (the fake partner speaks plain http://)";
    default: return "no HTTP answer (" + httplib::to_string(e) + ")";
  }
}
}  // namespace

nlohmann::json PartnerHttp::admin(const char* method, const std::string& path, const nlohmann::json* body) {
  httplib::Client c(url_);
  c.set_tcp_nodelay(true);
  c.set_connection_timeout(std::chrono::seconds(2));
  c.set_read_timeout(std::chrono::seconds(30));
  const std::string m = method;
  httplib::Result res{nullptr, httplib::Error::Unknown};
  const std::string text = body ? body->dump() : "{}";
  if (m == "GET") res = c.Get(path.c_str());
  else if (m == "PUT") res = c.Put(path.c_str(), text, "application/json");
  else res = c.Post(path.c_str(), text, "application/json");
  if (!res) throw std::runtime_error(m + " " + path + ": " + failure_text(res.error()));
  if (res->status < 200 || res->status >= 300) {
    // The partner's own words when it gave them ({"message": ...}), not its whole JSON.
    const auto err = nlohmann::json::parse(res->body, nullptr, false);
    const bool worded = err.is_object() && err.contains("message") && err["message"].is_string();
    throw std::runtime_error(m + " " + path + " answered " + std::to_string(res->status) + ": " +
                             (worded ? err["message"].get<std::string>() : res->body));
  }
  if (res->body.empty()) return nlohmann::json::object();
  auto j = nlohmann::json::parse(res->body, nullptr, false);
  if (j.is_discarded()) throw std::runtime_error(m + " " + path + " answered something that is not JSON");
  return j;
}

void PartnerHttp::reset(const nlohmann::json& doc) {
  if (run_.empty()) return static_cast<void>(admin("POST", "/admin/reset", &doc));
  nlohmann::json named = doc;
  named["run"] = run_;
  if (force_) named["force"] = true;
  admin("POST", "/admin/reset", &named);
}

void PartnerHttp::set_run(std::string run, bool force) {
  run_ = std::move(run);
  force_ = force;
}

void PartnerHttp::run_done() noexcept {
  if (run_.empty()) return;
  try {
    const nlohmann::json body = {{"run", run_}};
    admin("POST", "/admin/run-done", &body);
  } catch (const std::exception&) {
    // A partner gone or older: the run stays live there for kLiveWindow after its last call.
  }
  run_.clear();
}

PartnerHttp::~PartnerHttp() { run_done(); }
void PartnerHttp::configure(const nlohmann::json& config) { admin("PUT", "/admin/config", &config); }
nlohmann::json PartnerHttp::check(const std::optional<nlohmann::json>& service) {
  if (!service) return admin("POST", "/admin/check", nullptr);
  const nlohmann::json body = {{"service", *service}};
  return admin("POST", "/admin/check", &body);
}
nlohmann::json PartnerHttp::metrics() { return admin("GET", "/admin/metrics", nullptr); }

}  // namespace lockbench::real
