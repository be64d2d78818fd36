// Parsing the configuration document. Every refusal names the JSON path of
// the bad value and says what is accepted, in one line.
#include "fake_partner/model/config.hpp"

#include <cmath>
#include <initializer_list>
#include <string>

namespace lockbench::partner {

namespace {
using json = nlohmann::json;


std::string endpoint_list() {
  std::string s = "*";
  for (auto e : kEndpoints) s += ", " + std::string(endpoint_name(e));
  return s;
}

void only_keys(const json& j, const std::string& path, std::initializer_list<std::string_view> keys) {
  if (!j.is_object()) throw bad_at(path, "must be an object");
  for (const auto& [k, v] : j.items()) {
    bool known = false;
    for (auto key : keys) known = known || (!key.empty() && key == k);  // "": a key left out
    if (!known) {
      std::string accepted;
      for (auto key : keys)
        if (!key.empty()) accepted += (accepted.empty() ? "" : ", ") + std::string(key);
      throw bad_at(path + "." + k, "unknown setting (accepted: " + accepted + ")");
    }
  }
}

std::string plain(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<long long>(v));
  return json(v).dump();
}

double number(const json& j, const std::string& path, double lo, double hi) {
  if (!j.is_number()) throw bad_at(path, "must be a number");
  const double v = j.get<double>();
  if (!(v >= lo && v <= hi) || std::isnan(v))
    throw bad_at(path, j.dump() + " is out of range (accepted: " + plain(lo) + " to " + plain(hi) + ")");
  return v;
}

Endpoint endpoint(const std::string& name, const std::string& path) {
  if (auto e = endpoint_from_name(name)) return *e;
  throw bad_at(path, "unknown endpoint '" + name + "' (accepted: " + endpoint_list().substr(3) + ")");
}

LatencySpec parse_latency(const json& j, const std::string& path) {
  only_keys(j, path, {"dist", "ms", "min_ms", "max_ms", "mean_ms", "p50_ms", "p99_ms", "cap_ms", "apply_at"});
  LatencySpec l;
  l.dist = Distribution::from_json(j, path);
  if (j.contains("apply_at")) l.apply_at = number(j["apply_at"], path + ".apply_at", 0, 1);
  return l;
}

// One fault object. `scripted`: one-shot faults have no probability.
FaultSpec parse_fault(const json& j, const std::string& path, bool scripted) {
  using K = FaultPlan::Kind;
  if (!j.is_object() || !j.contains("kind") || !j["kind"].is_string())
    throw bad_at(path + ".kind", "is required (accepted: error, rate_limit_429, hang, reset, slow_body, truncate, garbage, slow)");
  const auto kind_name = j["kind"].get<std::string>();
  FaultSpec f;
  auto& plan = f.plan;
  const std::string pk = scripted ? "" : "p";
  const std::string from_key = scripted ? "" : "from_ms", until_key = scripted ? "" : "until_ms";
  if (kind_name == "error") {
    only_keys(j, path, {"kind", pk, from_key, until_key, "status", "phase"});
    plan.kind = K::error;
    plan.status = j.contains("status") ? static_cast<int>(number(j["status"], path + ".status", 400, 599)) : 503;
  } else if (kind_name == "rate_limit_429") {
    only_keys(j, path, {"kind", pk, from_key, until_key});
    plan.kind = K::rate_limit_429;
    plan.status = 429;
  } else if (kind_name == "hang") {
    only_keys(j, path, {"kind", pk, from_key, until_key, "ms", "phase"});
    plan.kind = K::hang;
    if (j.contains("ms") && !(j["ms"].is_string() && j["ms"] == "forever")) {
      if (!j["ms"].is_number()) throw bad_at(path + ".ms", "must be a number of milliseconds or \"forever\"");
      plan.hang_for = from_ms(number(j["ms"], path + ".ms", 0, 1e9));
    }
  } else if (kind_name == "reset") {
    only_keys(j, path, {"kind", pk, from_key, until_key, "phase"});
    plan.kind = K::reset;
  } else if (kind_name == "slow_body") {
    only_keys(j, path, {"kind", pk, from_key, until_key, "bytes_per_s"});
    plan.kind = K::slow_body;
    plan.phase = Phase::after;
    plan.bytes_per_s = j.contains("bytes_per_s") ? number(j["bytes_per_s"], path + ".bytes_per_s", 1, 1e12) : 100;
  } else if (kind_name == "truncate") {
    only_keys(j, path, {"kind", pk, from_key, until_key});
    plan.kind = K::truncate;
    plan.phase = Phase::after;
  } else if (kind_name == "garbage") {
    only_keys(j, path, {"kind", pk, from_key, until_key, "phase"});
    plan.kind = K::garbage;
    plan.phase = Phase::after;
  } else if (kind_name == "slow") {
    only_keys(j, path, {"kind", pk, from_key, until_key, "ms"});
    plan.kind = K::slow;
    if (!j.contains("ms") || !j["ms"].is_number()) throw bad_at(path + ".ms", "is required (the answer's delay in milliseconds)");
    plan.hang_for = from_ms(number(j["ms"], path + ".ms", 0, 1e9));
  } else {
    throw bad_at(path + ".kind",
              "unknown fault '" + kind_name + "' (accepted: error, rate_limit_429, hang, reset, slow_body, truncate, garbage, slow)");
  }
  if (j.contains("phase")) {
    const auto& ph = j["phase"];
    if (ph == "before") plan.phase = Phase::before;
    else if (ph == "after") plan.phase = Phase::after;
    else throw bad_at(path + ".phase", ph.dump() + " is not a phase (accepted: \"before\", \"after\")");
  }
  if (j.contains("from_ms")) f.from = from_ms(number(j["from_ms"], path + ".from_ms", 0, 1e12));
  if (j.contains("until_ms")) {
    f.until = from_ms(number(j["until_ms"], path + ".until_ms", 0, 1e12));
    if (*f.until <= f.from) throw bad_at(path + ".until_ms", j["until_ms"].dump() + " is not after from_ms (the window is [from_ms, until_ms))");
  }
  if (scripted) {
    f.p = 1;
  } else {
    if (!j.contains("p")) throw bad_at(path + ".p", "is required (a probability from 0 to 1)");
    f.p = number(j["p"], path + ".p", 0, 1);
  }
  return f;
}

json fault_json(const FaultPlan& plan, std::optional<double> p) {
  using K = FaultPlan::Kind;
  json j = {{"kind", fault_kind_name(plan.kind)}};
  if (p) j["p"] = *p;
  if (plan.kind == K::error) j["status"] = plan.status;
  if (plan.kind == K::hang) {
    if (plan.hang_for) j["ms"] = to_ms(*plan.hang_for);
    else j["ms"] = "forever";
  }
  if (plan.kind == K::slow_body) j["bytes_per_s"] = plan.bytes_per_s;
  if (plan.kind == K::slow && plan.hang_for) j["ms"] = to_ms(*plan.hang_for);
  if (plan.kind == K::error || plan.kind == K::hang || plan.kind == K::reset || plan.kind == K::garbage)
    j["phase"] = plan.phase == Phase::before ? "before" : "after";
  return j;
}

std::vector<FaultSpec> parse_fault_list(const json& j, const std::string& path) {
  if (!j.is_array()) throw bad_at(path, "must be a list of faults [{\"kind\",\"p\",...}]");
  std::vector<FaultSpec> out;
  for (std::size_t i = 0; i < j.size(); ++i) out.push_back(parse_fault(j[i], path + "[" + std::to_string(i) + "]", false));
  return out;
}
}  // namespace

Config Config::from_json(const json& doc) {
  only_keys(doc, "config", {"seed", "latency", "faults", "script", "rate_limit", "fencing", "payments"});
  Config c;
  c.source = doc;
  if (doc.contains("seed")) {
    if (!doc["seed"].is_number_integer() || (!doc["seed"].is_number_unsigned() && doc["seed"].get<std::int64_t>() < 0))
      throw bad_at("seed", doc["seed"].dump() + " is not a seed (accepted: an integer >= 0)");
    c.seed = doc["seed"].get<std::uint64_t>();
  }
  if (doc.contains("latency") && !doc["latency"].is_null()) {
    const auto& lat = doc["latency"];
    if (!lat.is_object()) throw bad_at("latency", "must be an object {\"*\"|endpoint: {\"dist\",...}}");
    LatencySpec fallback;
    if (lat.contains("*")) fallback = parse_latency(lat["*"], "latency.*");
    c.latency.fill(fallback);
    for (const auto& [name, v] : lat.items()) {
      if (name == "*") continue;
      c.latency[index_of(endpoint(name, "latency." + name))] = parse_latency(v, "latency." + name);
    }
  }
  if (doc.contains("faults") && !doc["faults"].is_null()) {
    const auto& fs = doc["faults"];
    if (!fs.is_object()) throw bad_at("faults", "must be an object {\"*\"|endpoint: [faults]}");
    std::vector<FaultSpec> fallback;
    if (fs.contains("*")) fallback = parse_fault_list(fs["*"], "faults.*");
    c.faults.fill(fallback);
    for (const auto& [name, v] : fs.items()) {
      if (name == "*") continue;
      c.faults[index_of(endpoint(name, "faults." + name))] = parse_fault_list(v, "faults." + name);
    }
  }
  if (doc.contains("script") && !doc["script"].is_null()) {
    const auto& s = doc["script"];
    if (!s.is_array()) throw bad_at("script", "must be a list [{\"endpoint\",\"nth\",\"fault\"}]");
    for (std::size_t i = 0; i < s.size(); ++i) {
      const std::string path = "script[" + std::to_string(i) + "]";
      only_keys(s[i], path, {"endpoint", "nth", "fault"});
      if (!s[i].contains("endpoint") || !s[i]["endpoint"].is_string())
        throw bad_at(path + ".endpoint", "is required (accepted: " + endpoint_list().substr(3) + ")");
      if (!s[i].contains("nth") || !s[i]["nth"].is_number_integer() || s[i]["nth"].get<std::int64_t>() < 1)
        throw bad_at(path + ".nth", "is required (an integer >= 1: the nth call of the endpoint since reset)");
      if (!s[i].contains("fault")) throw bad_at(path + ".fault", "is required ({\"kind\",...})");
      ScriptedFault sf;
      sf.endpoint = endpoint(s[i]["endpoint"].get<std::string>(), path + ".endpoint");
      sf.nth = s[i]["nth"].get<std::uint64_t>();
      sf.fault = parse_fault(s[i]["fault"], path + ".fault", true).plan;
      c.script.push_back(sf);
    }
  }
  if (doc.contains("rate_limit") && !doc["rate_limit"].is_null()) {
    const auto& r = doc["rate_limit"];
    only_keys(r, "rate_limit", {"size", "refill_per_s", "scope"});
    if (r.contains("size")) c.rate_limit.size = number(r["size"], "rate_limit.size", 0, 1e12);
    if (r.contains("refill_per_s")) c.rate_limit.refill_per_s = number(r["refill_per_s"], "rate_limit.refill_per_s", 0, 1e12);
    if (r.contains("scope")) {
      if (r["scope"] == "tenant") c.rate_limit.scope = RateLimitSpec::Scope::tenant;
      else if (r["scope"] == "endpoint") c.rate_limit.scope = RateLimitSpec::Scope::endpoint;
      else throw bad_at("rate_limit.scope", r["scope"].dump() + " is not a scope (accepted: \"tenant\", \"endpoint\")");
    }
  }
  if (doc.contains("fencing")) {
    if (doc["fencing"] == "ignore") c.fencing = Fencing::ignore;
    else if (doc["fencing"] == "enforce") c.fencing = Fencing::enforce;
    else throw bad_at("fencing", doc["fencing"].dump() + " is not a mode (accepted: \"ignore\", \"enforce\")");
  }
  if (doc.contains("payments") && !doc["payments"].is_null()) {
    const auto& p = doc["payments"];
    only_keys(p, "payments", {"idem_ttl_ms", "object_lock", "lock_timeout_ms"});
    if (p.contains("idem_ttl_ms")) c.payments.idem_ttl = from_ms(number(p["idem_ttl_ms"], "payments.idem_ttl_ms", 0, 1e12));
    if (p.contains("object_lock")) {
      if (!p["object_lock"].is_boolean()) throw bad_at("payments.object_lock", "must be true or false");
      c.payments.object_lock = p["object_lock"].get<bool>();
    }
    if (p.contains("lock_timeout_ms"))
      c.payments.lock_timeout = from_ms(number(p["lock_timeout_ms"], "payments.lock_timeout_ms", 0, 1e9));
  }
  return c;
}

json Config::to_json() const {
  json lat = json::object(), fs = json::object();
  for (auto e : kEndpoints) {
    const auto& l = latency[index_of(e)];
    json d = l.dist.to_json();
    d["apply_at"] = l.apply_at;
    lat[std::string(endpoint_name(e))] = std::move(d);
    json list = json::array();
    for (const auto& f : faults[index_of(e)]) {
      json one = fault_json(f.plan, f.p);
      if (f.from > Duration(0)) one["from_ms"] = to_ms(f.from);
      if (f.until) one["until_ms"] = to_ms(*f.until);
      list.push_back(std::move(one));
    }
    fs[std::string(endpoint_name(e))] = std::move(list);
  }
  json sc = json::array();
  for (const auto& s : script)
    sc.push_back({{"endpoint", endpoint_name(s.endpoint)}, {"nth", s.nth}, {"fault", fault_json(s.fault, std::nullopt)}});
  return {{"seed", seed},
          {"latency", std::move(lat)},
          {"faults", std::move(fs)},
          {"script", std::move(sc)},
          {"rate_limit",
           {{"size", rate_limit.size},
            {"refill_per_s", rate_limit.refill_per_s},
            {"scope", rate_limit.scope == RateLimitSpec::Scope::tenant ? "tenant" : "endpoint"}}},
          {"fencing", fencing == Fencing::ignore ? "ignore" : "enforce"},
          {"payments",
           {{"idem_ttl_ms", to_ms(payments.idem_ttl)},
            {"object_lock", payments.object_lock},
            {"lock_timeout_ms", to_ms(payments.lock_timeout)}}}};
}

Config Config::merged(const json& partial) const {
  if (!partial.is_object()) throw bad_at("config", "a partial update must be a JSON object");
  json doc = source;
  doc.merge_patch(partial);
  return from_json(doc);
}

std::optional<Config::Window> Config::fault_window() const {
  std::optional<Window> w;
  bool endless = false;
  for (const auto& list : faults)
    for (const auto& f : list) {
      if (!f.windowed()) continue;
      if (!w) w = Window{f.from, f.until};
      w->from = std::min(w->from, f.from);
      if (!f.until) endless = true;
      else if (!w->until || *f.until > *w->until) w->until = f.until;
    }
  if (w && endless) w->until.reset();
  return w;
}

}  // namespace lockbench::partner
