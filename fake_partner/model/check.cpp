#include "fake_partner/model/check.hpp"

#include "base/units.hpp"

namespace lockbench::partner {

namespace {
using json = nlohmann::json;

json violations_json(const std::vector<Violation>& list) {
  json vs = json::array();
  for (const auto& v : list)
    vs.push_back({{"kind", v.kind}, {"subject", v.subject}, {"detail", v.detail}, {"request_ids", v.request_ids}});
  return vs;
}

const json& object_at(const json& doc, const std::string& path, const char* shape) {
  if (!doc.is_object()) throw bad_at(path, std::string("must be an object ") + shape);
  return doc;
}

std::int64_t integer_at(const json& j, const std::string& path) {
  if (!j.is_number_integer() || (j.is_number_unsigned() && j.get<std::uint64_t>() > INT64_MAX))
    throw bad_at(path, j.dump() + " is not an integer (smallest currency unit)");
  return j.get<std::int64_t>();
}
}  // namespace

bool is_violation_kind(std::string_view kind) {
  for (const auto& note : kNoteKinds)
    if (note.kind == kind) return false;
  return true;
}

std::int64_t CheckReport::count(std::string_view kind) const {
  const auto it = counts.find(kind);
  return it == counts.end() ? 0 : it->second;
}

json CheckReport::to_json() const {
  json c = json::object();
  for (auto kind : kCheckKinds) c[std::string(kind)] = count(kind);
  return {{"counts", std::move(c)},
          {"max_inflight_per_person", max_inflight_per_person},
          {"episodes", episodes},
          {"corrupted_ms_max", corrupted_ms_max},
          {"corrupted_ms_total", corrupted_ms_total},
          {"violations", violations_json(violations)},
          {"notes", violations_json(notes)}};
}

ServiceView ServiceView::from_json(const json& doc) {
  object_at(doc, "service", "{\"primaries\",\"orders\",\"balances\",\"claims\"}");
  ServiceView v;
  for (const auto& [k, part] : doc.items()) {
    const std::string path = "service." + k;
    if (k == "primaries") {
      object_at(part, path, "{\"<person>\": \"<primary identity>\"}");
      v.primaries.emplace();
      for (const auto& [person, primary] : part.items()) {
        if (!primary.is_string()) throw bad_at(path + "." + person, "must be an identity \"provider|user_id\"");
        v.primaries->emplace(person, primary.get<std::string>());
      }
    } else if (k == "orders") {
      object_at(part, path, "{\"<order>\": {\"status\",\"charge_id\"}}");
      v.orders.emplace();
      for (const auto& [order, o] : part.items()) {
        const std::string op = path + "." + order;
        object_at(o, op, "{\"status\",\"charge_id\"}");
        ServiceOrder so;
        for (const auto& [field, value] : o.items()) {
          if (field != "status" && field != "charge_id")
            throw bad_at(op + "." + field, "unknown setting (accepted: status, charge_id)");
          if (!value.is_string() && !value.is_null()) throw bad_at(op + "." + field, "must be a string or null");
        }
        if (o.contains("status") && o["status"].is_string()) so.status = o["status"].get<std::string>();
        if (o.contains("charge_id") && o["charge_id"].is_string()) so.charge_id = o["charge_id"].get<std::string>();
        v.orders->emplace(order, std::move(so));
      }
    } else if (k == "balances") {
      object_at(part, path, "{\"<account>\": <balance>}");
      v.balances.emplace();
      for (const auto& [account, b] : part.items()) v.balances->emplace(account, integer_at(b, path + "." + account));
    } else if (k == "claims") {
      object_at(part, path, "{\"<customer>\": {\"<reward>\": <claim rows>}}");
      v.claims.emplace();
      for (const auto& [customer, rewards] : part.items()) {
        const std::string cp = path + "." + customer;
        object_at(rewards, cp, "{\"<reward>\": <claim rows>}");
        auto& m = (*v.claims)[customer];
        for (const auto& [reward, n] : rewards.items()) {
          const auto rows = integer_at(n, cp + "." + reward);
          if (rows < 0) throw bad_at(cp + "." + reward, "must be a count >= 0");
          m.emplace(reward, rows);
        }
      }
    } else {
      throw bad_at(path, "unknown setting (accepted: primaries, orders, balances, claims)");
    }
  }
  return v;
}

json ServiceView::to_json() const {
  json j = json::object();
  if (primaries) j["primaries"] = *primaries;
  if (orders) {
    json os = json::object();
    for (const auto& [id, o] : *orders) os[id] = {{"status", o.status}, {"charge_id", o.charge_id}};
    j["orders"] = std::move(os);
  }
  if (balances) j["balances"] = *balances;
  if (claims) j["claims"] = *claims;
  return j;
}

}  // namespace lockbench::partner
