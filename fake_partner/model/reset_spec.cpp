// The reset document: who exists (persons and their identities) and which orders.
#include <string>
#include <unordered_set>

#include "fake_partner/model/config.hpp"

namespace lockbench::partner {

namespace {
using json = nlohmann::json;
SettingError bad(const std::string& path, const std::string& why) { return SettingError(path + ": " + why); }

bool valid_identity_key(std::string_view k) {
  const auto bar = k.find('|');
  return bar != std::string_view::npos && bar > 0 && bar + 1 < k.size();
}
}  // namespace

ResetSpec ResetSpec::persons_with_two_identities(int count) {
  ResetSpec r;
  r.persons.reserve(static_cast<std::size_t>(count));
  for (int i = 1; i <= count; ++i) {
    const std::string n = std::to_string(i);
    r.persons.push_back({{"auth0|u" + n, "google-oauth2|u" + n}, "auth0|u" + n});
  }
  return r;
}

json ResetSpec::to_json() const {
  json ps = json::array(), os = json::array();
  for (const auto& p : persons) ps.push_back({{"identities", p.identities}, {"primary", p.primary}});
  for (const auto& o : orders) os.push_back({{"order_id", o.order_id}, {"amount", o.amount}, {"currency", o.currency}});
  json j = {{"persons", std::move(ps)}, {"orders", std::move(os)}};
  if (seed) j["seed"] = *seed;
  return j;
}

ResetSpec ResetSpec::from_json(const json& doc) {
  if (!doc.is_object()) throw bad("reset", "must be an object {\"seed\",\"persons\",\"orders\"}");
  for (const auto& [k, v] : doc.items())
    if (k != "seed" && k != "persons" && k != "orders")
      throw bad("reset." + k, "unknown setting (accepted: seed, persons, orders)");
  ResetSpec r;
  if (doc.contains("seed")) {
    if (!doc["seed"].is_number_integer() || (!doc["seed"].is_number_unsigned() && doc["seed"].get<std::int64_t>() < 0))
      throw bad("reset.seed", doc["seed"].dump() + " is not a seed (accepted: an integer >= 0)");
    r.seed = doc["seed"].get<std::uint64_t>();
  }
  std::unordered_set<std::string> seen;
  if (doc.contains("persons")) {
    if (!doc["persons"].is_array()) throw bad("reset.persons", "must be a list [{\"identities\",\"primary\"}]");
    for (std::size_t i = 0; i < doc["persons"].size(); ++i) {
      const auto& pj = doc["persons"][i];
      const std::string path = "reset.persons[" + std::to_string(i) + "]";
      if (!pj.is_object() || !pj.contains("identities") || !pj["identities"].is_array() || pj["identities"].empty())
        throw bad(path + ".identities", "is required (a non-empty list of \"provider|user_id\")");
      PersonSeed p;
      for (const auto& idj : pj["identities"]) {
        if (!idj.is_string() || !valid_identity_key(idj.get<std::string>()))
          throw bad(path + ".identities", idj.dump() + " is not an identity (accepted: \"provider|user_id\")");
        if (!seen.insert(idj.get<std::string>()).second)
          throw bad(path + ".identities", idj.dump() + " belongs to two persons");
        p.identities.push_back(idj.get<std::string>());
      }
      if (pj.contains("primary")) {
        if (!pj["primary"].is_string()) throw bad(path + ".primary", "must be one of the person's identities");
        p.primary = pj["primary"].get<std::string>();
        bool found = false;
        for (const auto& id : p.identities) found = found || id == p.primary;
        if (!found) throw bad(path + ".primary", "'" + p.primary + "' must be one of the person's identities");
      }
      r.persons.push_back(std::move(p));
    }
  }
  if (doc.contains("orders")) {
    if (!doc["orders"].is_array()) throw bad("reset.orders", "must be a list [{\"order_id\",\"amount\",\"currency\"}]");
    std::unordered_set<std::string> ids;
    for (std::size_t i = 0; i < doc["orders"].size(); ++i) {
      const auto& oj = doc["orders"][i];
      const std::string path = "reset.orders[" + std::to_string(i) + "]";
      if (!oj.is_object() || !oj.contains("order_id") || !oj["order_id"].is_string())
        throw bad(path + ".order_id", "is required (a string)");
      OrderSeed o;
      o.order_id = oj["order_id"].get<std::string>();
      if (!ids.insert(o.order_id).second) throw bad(path + ".order_id", "'" + o.order_id + "' is listed twice");
      if (oj.contains("amount")) {
        if (!oj["amount"].is_number_integer() || oj["amount"].get<std::int64_t>() <= 0)
          throw bad(path + ".amount", "must be an integer above 0 (smallest currency unit)");
        o.amount = oj["amount"].get<std::int64_t>();
      }
      if (oj.contains("currency")) {
        if (!oj["currency"].is_string()) throw bad(path + ".currency", "must be a string such as \"eur\"");
        o.currency = oj["currency"].get<std::string>();
      }
      r.orders.push_back(std::move(o));
    }
  }
  return r;
}

}  // namespace lockbench::partner
