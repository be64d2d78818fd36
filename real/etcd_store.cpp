#include "real/etcd_store.hpp"

#include <httplib.h>

#include <algorithm>
#include <charconv>
#include <chrono>

#include "base/units.hpp"

namespace lockbench::real {

namespace {

using json = nlohmann::json;

constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string b64(std::string_view in) {
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const unsigned v = (static_cast<unsigned char>(in[i]) << 16) | (static_cast<unsigned char>(in[i + 1]) << 8) |
                       static_cast<unsigned char>(in[i + 2]);
    out += kB64[v >> 18];
    out += kB64[(v >> 12) & 63];
    out += kB64[(v >> 6) & 63];
    out += kB64[v & 63];
  }
  if (i < in.size()) {
    unsigned v = static_cast<unsigned char>(in[i]) << 16;
    if (i + 1 < in.size()) v |= static_cast<unsigned char>(in[i + 1]) << 8;
    out += kB64[v >> 18];
    out += kB64[(v >> 12) & 63];
    out += i + 1 < in.size() ? kB64[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::string unb64(std::string_view in) {
  std::string out;
  unsigned v = 0;
  int bits = 0;
  for (char c : in) {
    const char* p = std::find(kB64, kB64 + 64, c);
    if (p == kB64 + 64) continue;  // '=' and anything else
    v = (v << 6) | static_cast<unsigned>(p - kB64);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((v >> bits) & 0xff);
    }
  }
  return out;
}

// The gateway writes 64-bit numbers as strings and leaves out zeros.
std::int64_t num(const json& j, const char* field) {
  if (!j.is_object() || !j.contains(field)) return 0;
  const json& v = j[field];
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (!v.is_string()) return 0;
  const std::string& s = v.get_ref<const std::string&>();
  std::int64_t out = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size() ? out : 0;
}

bool parse_port(std::string_view s, int& out) {
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size() && out >= 1 && out <= 65535;
}

// The first kv of a range response (null when none).
const json* first_kv(const json& range) {
  if (!range.contains("kvs") || !range["kvs"].is_array() || range["kvs"].empty()) return nullptr;
  return &range["kvs"][0];
}

std::string range_end_of(const std::string& prefix) {
  std::string end = prefix;
  end.back() = static_cast<char>(end.back() + 1);  // the prefix ends in '/': '0' follows it
  return end;
}

}  // namespace

EtcdUrl parse_etcd_url(const std::string& url) {
  const auto bad = [&](const std::string& why) {
    return SettingError("--etcd: '" + url + "' " + why +
                        " (accepted: http://HOST:PORT, etcd's client URL, e.g. http://127.0.0.1:2379)");
  };
  constexpr std::string_view scheme = "http://";
  if (url.rfind(scheme, 0) != 0) throw bad("is not an http:// URL");
  std::string_view rest = std::string_view(url).substr(scheme.size());
  if (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  if (rest.find('/') != std::string_view::npos) throw bad("has a path; the gateway's paths are lockbench's");
  if (rest.find('@') != std::string_view::npos) throw bad("carries credentials, which lockbench does not take");
  const auto colon = rest.rfind(':');
  if (colon == std::string_view::npos || colon == 0) throw bad("has no HOST:PORT");
  EtcdUrl out;
  out.host = std::string(rest.substr(0, colon));
  if (!parse_port(rest.substr(colon + 1), out.port)) throw bad("has no port from 1 to 65535");
  return out;
}

std::unique_ptr<KvLeaseStore> open_etcd_store(const std::string& url, const std::string& run_id, Duration timeout) {
  if (url.empty())
    throw SettingError(
        "--etcd: etcd-lease needs an etcd client URL (e.g. --etcd http://127.0.0.1:2379; scripts/etcd start DIR starts one)");
  parse_etcd_url(url);
  try {
    return std::make_unique<EtcdStore>(url, "lockbench/" + run_id + "/", timeout);
  } catch (const DbError& e) {
    std::string why = e.what();
    for (char& ch : why)
      if (ch == '\n' || ch == '\r') ch = ' ';
    throw SettingError("--etcd: cannot use " + url + ": " + why);
  }
}

EtcdStore::EtcdStore(const std::string& url, std::string prefix, Duration timeout)
    : url_(parse_etcd_url(url)), prefix_(std::move(prefix)), timeout_(timeout) {
  auto c = borrow();
  const auto res = c->Get("/version");
  if (!res) throw DbError("etcd: no answer (" + httplib::to_string(res.error()) + ")");
  json v = json::parse(res->body, nullptr, false);
  if (res->status != 200 || !v.is_object() || !v.contains("etcdserver") || !v["etcdserver"].is_string())
    throw DbError("etcd: GET /version did not answer as etcd does (HTTP " + std::to_string(res->status) + ")");
  const std::string version = v["etcdserver"];
  if (version.rfind("3.", 0) != 0 || version.size() < 3 || version[2] < '4')
    throw DbError("etcd " + version + " has no /v3 gateway (3.4 or later needed)");
  give_back(std::move(c));
}

EtcdStore::~EtcdStore() = default;

std::int64_t EtcdStore::ttl_seconds(Duration ttl) {
  const auto s = std::chrono::ceil<std::chrono::seconds>(ttl).count();
  return std::max<std::int64_t>(1, s);
}

std::unique_ptr<httplib::Client> EtcdStore::borrow() {
  {
    std::lock_guard lock(mu_);
    if (!idle_.empty()) {
      auto c = std::move(idle_.back());
      idle_.pop_back();
      return c;
    }
  }
  // One per concurrent caller (bounded by the pods' worker and renewal threads).
  auto c = std::make_unique<httplib::Client>(url_.host, url_.port);
  c->set_keep_alive(true);
  c->set_tcp_nodelay(true);  // as the partner client: no Nagle wait between headers and body
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(timeout_);
  c->set_connection_timeout(us);
  c->set_read_timeout(us);
  c->set_write_timeout(us);
  return c;
}

void EtcdStore::give_back(std::unique_ptr<httplib::Client> c) {
  std::lock_guard lock(mu_);
  if (idle_.size() < kIdleMax) idle_.push_back(std::move(c));
}

json EtcdStore::post(const char* path, const json& body) {
  auto c = borrow();
  const auto res = c->Post(path, body.dump(), "application/json");
  if (!res) throw DbError(std::string("etcd ") + path + ": " + httplib::to_string(res.error()));  // the client is dropped
  give_back(std::move(c));
  json out = json::parse(res->body, nullptr, false);
  if (out.is_discarded()) throw DbError(std::string("etcd ") + path + ": HTTP " + std::to_string(res->status) + ", not JSON");
  if (res->status != 200) {
    const std::string msg = out.is_object() && out.contains("message") && out["message"].is_string()
                                ? out["message"].get<std::string>()
                                : "HTTP " + std::to_string(res->status);
    throw DbError(std::string("etcd ") + path + ": " + msg);
  }
  return out;
}

std::string EtcdStore::key(std::string_view kind, Key k) const {
  return prefix_ + std::string(kind) + "/" + std::to_string(k);
}

void EtcdStore::revoke(std::int64_t lease) {
  try {
    post("/v3/lease/revoke", {{"ID", std::to_string(lease)}});
  } catch (const DbError&) {
    // "requested lease not found": it expired already. Either way its keys are gone.
  }
}

LeaseResult EtcdStore::acquire(Key k, std::string_view owner, Duration ttl) {
  const json grant = post("/v3/lease/grant", {{"TTL", std::to_string(ttl_seconds(ttl))}});
  const std::int64_t lease = num(grant, "ID");
  if (lease == 0) throw DbError("etcd: lease/grant answered no lease ID");
  const std::string lk = b64(key("lease", k)), hk = b64(key("holder", k)), me = b64(owner);
  const json txn = post("/v3/kv/txn",
                        {{"compare", {{{"target", "CREATE"}, {"result", "EQUAL"}, {"key", lk}, {"create_revision", "0"}}}},
                         {"success",
                          {{{"request_range", {{"key", hk}}}},
                           {{"request_put", {{"key", lk}, {"value", me}, {"lease", std::to_string(lease)}}}},
                           {{"request_put", {{"key", hk}, {"value", me}}}}}}});
  LeaseResult out;
  if (!txn.value("succeeded", false)) {
    revoke(lease);  // the compare failed: another holder's key exists
    return out;
  }
  out.acquired = true;
  out.token = static_cast<std::uint64_t>(num(txn["header"], "revision"));  // lease/K's mod_revision
  const json holder = txn.contains("responses") && txn["responses"].is_array() && !txn["responses"].empty()
                          ? txn["responses"][0].value("response_range", json::object())
                          : json::object();
  if (const json* prev = first_kv(holder); prev && prev->contains("value")) {
    out.previous_owner = unb64((*prev)["value"].get<std::string>());
    out.took_over_expired = !out.previous_owner.empty();
  }
  std::lock_guard lock(mu_);
  leases_[{k, std::string(owner)}] = lease;
  return out;
}

bool EtcdStore::release(Key k, std::string_view owner) {
  const std::string lk = b64(key("lease", k)), hk = b64(key("holder", k));
  const json request = {
      {"compare", {{{"target", "VALUE"}, {"result", "EQUAL"}, {"key", lk}, {"value", b64(owner)}}}},
      {"success", {{{"request_delete_range", {{"key", lk}}}}, {{"request_delete_range", {{"key", hk}}}}}}};
  // The release is idempotent (value == me ? delete), so a failed attempt is
  // made again, as etcd's own clients retry a request across a leader change:
  // an election longer than the timeout must not leave the key held until its
  // TTL. (acquire is not retried: a timed-out grant or txn may have happened.)
  json txn;
  for (int attempt = 1;; ++attempt) {
    try {
      txn = post("/v3/kv/txn", request);
      break;
    } catch (const DbError&) {
      if (attempt == kReleaseAttempts) throw;
    }
  }
  std::int64_t lease = 0;
  {
    std::lock_guard lock(mu_);
    if (const auto it = leases_.find({k, std::string(owner)}); it != leases_.end()) {
      lease = it->second;
      leases_.erase(it);
    }
  }
  if (lease != 0) revoke(lease);
  return txn.value("succeeded", false);
}

bool EtcdStore::extend(Key k, std::string_view owner, Duration) {
  std::int64_t lease = 0;
  {
    std::lock_guard lock(mu_);
    if (const auto it = leases_.find({k, std::string(owner)}); it != leases_.end()) lease = it->second;
  }
  if (lease == 0) return false;
  // The gateway's keep-alive stream: one request, one result; no TTL left = the lease expired.
  const json r = post("/v3/lease/keepalive", {{"ID", std::to_string(lease)}});
  return num(r.value("result", json::object()), "TTL") > 0;
}

std::int64_t EtcdStore::held() {
  const std::string from = prefix_ + "lease/";
  const json r = post("/v3/kv/range", {{"key", b64(from)}, {"range_end", b64(range_end_of(from))}, {"count_only", true}});
  return num(r, "count");
}

KvLeaseStore::Held EtcdStore::held_by(const std::vector<std::string>& owners) {
  Held out;
  if (owners.empty()) return out;
  const std::string from = prefix_ + "lease/";
  const json r = post("/v3/kv/range", {{"key", b64(from)}, {"range_end", b64(range_end_of(from))}});
  if (!r.contains("kvs")) return out;
  for (const json& kv : r["kvs"]) {
    const std::string owner = unb64(kv.value("value", std::string()));
    if (std::find(owners.begin(), owners.end(), owner) == owners.end()) continue;
    const json ttl = post("/v3/lease/timetolive", {{"ID", std::to_string(num(kv, "lease"))}});
    const std::int64_t left_s = num(ttl, "TTL");
    if (left_s <= 0) continue;  // expired since the range
    ++out.count;
    out.left_ms_max = std::max(out.left_ms_max, 1000.0 * static_cast<double>(left_s));
  }
  return out;
}

std::int64_t EtcdStore::keys() {
  const json r = post("/v3/kv/range", {{"key", b64(prefix_)}, {"range_end", b64(range_end_of(prefix_))}, {"count_only", true}});
  return num(r, "count");
}

std::int64_t EtcdStore::drop_run_keys() {
  std::vector<std::int64_t> known;
  {
    std::lock_guard lock(mu_);
    for (const auto& [k, lease] : leases_) known.push_back(lease);
    leases_.clear();
  }
  for (std::int64_t lease : known) revoke(lease);
  const json r = post("/v3/kv/deleterange", {{"key", b64(prefix_)}, {"range_end", b64(range_end_of(prefix_))}});
  return num(r, "deleted");
}

}  // namespace lockbench::real
