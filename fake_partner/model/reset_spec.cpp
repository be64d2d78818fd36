// The reset document: who exists (persons and their identities, listed or as a
// generated range), which orders and which accounts with their opening balances.
#include <charconv>
#include <string>
#include <unordered_set>

#include "fake_partner/model/config.hpp"

namespace lockbench::partner {

namespace {
using json = nlohmann::json;

bool valid_identity_key(std::string_view k) {
  const auto bar = k.find('|');
  return bar != std::string_view::npos && bar > 0 && bar + 1 < k.size();
}

std::int64_t integer(const json& j, const std::string& path, std::int64_t lo, std::int64_t hi, const char* what) {
  if (!j.is_number_integer() || j.get<std::int64_t>() < lo || j.get<std::int64_t>() > hi ||
      (j.is_number_unsigned() && j.get<std::uint64_t>() > static_cast<std::uint64_t>(hi)))
    throw bad_at(path, j.dump() + " is out of range (accepted: " + what + ")");
  return j.get<std::int64_t>();
}

std::string currency_of(const json& j, const std::string& path) {
  if (!j.is_string() || j.get<std::string>().empty()) throw bad_at(path, "must be a string such as \"eur\"");
  return j.get<std::string>();
}

void only_keys(const json& j, const std::string& path, std::initializer_list<std::string_view> keys,
               const char* shape) {
  if (!j.is_object()) throw bad_at(path, std::string("must be an object ") + shape);
  for (const auto& [k, v] : j.items()) {
    bool known = false;
    for (auto key : keys) known = known || key == k;
    if (!known) {
      std::string accepted;
      for (auto key : keys) accepted += (accepted.empty() ? "" : ", ") + std::string(key);
      throw bad_at(path + "." + k, "unknown setting (accepted: " + accepted + ")");
    }
  }
}

constexpr const char* kCountRange = "an integer from 0 to 1000000000";
}  // namespace

std::int64_t range_index(std::string_view name, std::string_view prefix, std::int64_t count) {
  if (name.size() <= prefix.size() || name.substr(0, prefix.size()) != prefix) return 0;
  const auto digits = name.substr(prefix.size());
  if (digits.front() == '0' || digits.size() > 10) return 0;
  std::int64_t k = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), k);
  if (ec != std::errc() || end != digits.data() + digits.size() || k < 1 || k > count) return 0;
  return k;
}

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
  json ps = json::array(), os = json::array(), as = json::array();
  for (const auto& p : persons) {
    json pj = {{"identities", p.identities}};
    if (!p.primary.empty()) pj["primary"] = p.primary;  // "" = the first identity
    ps.push_back(std::move(pj));
  }
  for (const auto& o : orders) os.push_back({{"order_id", o.order_id}, {"amount", o.amount}, {"currency", o.currency}});
  for (const auto& a : accounts)
    as.push_back({{"account_id", a.account_id}, {"balance", a.balance}, {"currency", a.currency}});
  json j = {{"persons", std::move(ps)}, {"orders", std::move(os)}, {"accounts", std::move(as)}};
  if (seed) j["seed"] = *seed;
  if (person_range) j["person_range"] = {{"count", person_range->count}, {"identities", person_range->identities}};
  if (order_range)
    j["order_range"] = {{"count", order_range->count}, {"amount", order_range->amount}, {"currency", order_range->currency}};
  if (account_range)
    j["account_range"] = {
        {"count", account_range->count}, {"balance", account_range->balance}, {"currency", account_range->currency}};
  return j;
}

ResetSpec ResetSpec::from_json(const json& doc) {
  constexpr const char* kShape =
      "{\"seed\",\"persons\",\"person_range\",\"orders\",\"order_range\",\"accounts\",\"account_range\"}";
  only_keys(doc, "reset", {"seed", "persons", "person_range", "orders", "order_range", "accounts", "account_range"},
            kShape);
  ResetSpec r;
  if (doc.contains("seed")) {
    if (!doc["seed"].is_number_integer() || (!doc["seed"].is_number_unsigned() && doc["seed"].get<std::int64_t>() < 0))
      throw bad_at("reset.seed", doc["seed"].dump() + " is not a seed (accepted: an integer >= 0)");
    r.seed = doc["seed"].get<std::uint64_t>();
  }
  if (doc.contains("person_range")) {
    const auto& j = doc["person_range"];
    only_keys(j, "reset.person_range", {"count", "identities"}, "{\"count\",\"identities\"}");
    if (!j.contains("count")) throw bad_at("reset.person_range.count", "is required (" + std::string(kCountRange) + ")");
    PersonRange pr;
    pr.count = integer(j["count"], "reset.person_range.count", 0, kRangeCountMax, kCountRange);
    if (j.contains("identities"))
      pr.identities = static_cast<int>(
          integer(j["identities"], "reset.person_range.identities", 1, kRangeProvidersMax, "an integer from 1 to 16"));
    r.person_range = pr;
  }
  // A listed identity that a range person also has would belong to two persons.
  const auto in_person_range = [&](std::string_view key) {
    if (!r.person_range) return false;
    const auto bar = key.find('|');
    const auto provider = key.substr(0, bar);
    for (int i = 0; i < r.person_range->identities; ++i)
      if (kRangeProviders[i] == provider) return range_index(key.substr(bar + 1), "u", r.person_range->count) > 0;
    return false;
  };
  std::unordered_set<std::string> seen;
  if (doc.contains("persons")) {
    if (!doc["persons"].is_array()) throw bad_at("reset.persons", "must be a list [{\"identities\",\"primary\"}]");
    for (std::size_t i = 0; i < doc["persons"].size(); ++i) {
      const auto& pj = doc["persons"][i];
      const std::string path = "reset.persons[" + std::to_string(i) + "]";
      if (!pj.is_object() || !pj.contains("identities") || !pj["identities"].is_array() || pj["identities"].empty())
        throw bad_at(path + ".identities", "is required (a non-empty list of \"provider|user_id\")");
      PersonSeed p;
      for (const auto& idj : pj["identities"]) {
        if (!idj.is_string() || !valid_identity_key(idj.get<std::string>()))
          throw bad_at(path + ".identities", idj.dump() + " is not an identity (accepted: \"provider|user_id\")");
        if (!seen.insert(idj.get<std::string>()).second || in_person_range(idj.get<std::string>()))
          throw bad_at(path + ".identities", idj.dump() + " belongs to two persons");
        p.identities.push_back(idj.get<std::string>());
      }
      if (pj.contains("primary")) {
        if (!pj["primary"].is_string()) throw bad_at(path + ".primary", "must be one of the person's identities");
        p.primary = pj["primary"].get<std::string>();
        bool found = false;
        for (const auto& id : p.identities) found = found || id == p.primary;
        if (!found) throw bad_at(path + ".primary", "'" + p.primary + "' must be one of the person's identities");
      }
      r.persons.push_back(std::move(p));
    }
  }
  if (doc.contains("order_range")) {
    const auto& j = doc["order_range"];
    only_keys(j, "reset.order_range", {"count", "amount", "currency"}, "{\"count\",\"amount\",\"currency\"}");
    if (!j.contains("count")) throw bad_at("reset.order_range.count", "is required (" + std::string(kCountRange) + ")");
    OrderRange o;
    o.count = integer(j["count"], "reset.order_range.count", 0, kRangeCountMax, kCountRange);
    if (j.contains("amount"))
      o.amount = integer(j["amount"], "reset.order_range.amount", 1, INT64_MAX, "an integer above 0 (smallest currency unit)");
    if (j.contains("currency")) o.currency = currency_of(j["currency"], "reset.order_range.currency");
    r.order_range = o;
  }
  if (doc.contains("orders")) {
    if (!doc["orders"].is_array()) throw bad_at("reset.orders", "must be a list [{\"order_id\",\"amount\",\"currency\"}]");
    std::unordered_set<std::string> ids;
    for (std::size_t i = 0; i < doc["orders"].size(); ++i) {
      const auto& oj = doc["orders"][i];
      const std::string path = "reset.orders[" + std::to_string(i) + "]";
      if (!oj.is_object() || !oj.contains("order_id") || !oj["order_id"].is_string())
        throw bad_at(path + ".order_id", "is required (a string)");
      OrderSeed o;
      o.order_id = oj["order_id"].get<std::string>();
      if (!ids.insert(o.order_id).second || (r.order_range && range_index(o.order_id, "o", r.order_range->count) > 0))
        throw bad_at(path + ".order_id", "'" + o.order_id + "' is listed twice");
      if (oj.contains("amount")) {
        if (!oj["amount"].is_number_integer() || oj["amount"].get<std::int64_t>() <= 0)
          throw bad_at(path + ".amount", "must be an integer above 0 (smallest currency unit)");
        o.amount = oj["amount"].get<std::int64_t>();
      }
      if (oj.contains("currency")) {
        if (!oj["currency"].is_string()) throw bad_at(path + ".currency", "must be a string such as \"eur\"");
        o.currency = oj["currency"].get<std::string>();
      }
      r.orders.push_back(std::move(o));
    }
  }
  if (doc.contains("account_range")) {
    const auto& j = doc["account_range"];
    only_keys(j, "reset.account_range", {"count", "balance", "currency"}, "{\"count\",\"balance\",\"currency\"}");
    if (!j.contains("count")) throw bad_at("reset.account_range.count", "is required (" + std::string(kCountRange) + ")");
    AccountRange a;
    a.count = integer(j["count"], "reset.account_range.count", 0, kRangeCountMax, kCountRange);
    if (j.contains("balance"))
      a.balance = integer(j["balance"], "reset.account_range.balance", 0, INT64_MAX, "an integer >= 0 (smallest currency unit)");
    if (j.contains("currency")) a.currency = currency_of(j["currency"], "reset.account_range.currency");
    r.account_range = a;
  }
  if (doc.contains("accounts")) {
    if (!doc["accounts"].is_array())
      throw bad_at("reset.accounts", "must be a list [{\"account_id\",\"balance\",\"currency\"}]");
    std::unordered_set<std::string> ids;
    for (std::size_t i = 0; i < doc["accounts"].size(); ++i) {
      const auto& aj = doc["accounts"][i];
      const std::string path = "reset.accounts[" + std::to_string(i) + "]";
      only_keys(aj, path, {"account_id", "balance", "currency"}, "{\"account_id\",\"balance\",\"currency\"}");
      if (!aj.contains("account_id") || !aj["account_id"].is_string() || aj["account_id"].get<std::string>().empty())
        throw bad_at(path + ".account_id", "is required (a string)");
      AccountSeed a;
      a.account_id = aj["account_id"].get<std::string>();
      if (!ids.insert(a.account_id).second ||
          (r.account_range && range_index(a.account_id, "a", r.account_range->count) > 0))
        throw bad_at(path + ".account_id", "'" + a.account_id + "' is listed twice");
      if (!aj.contains("balance")) throw bad_at(path + ".balance", "is required (an integer >= 0, smallest currency unit)");
      a.balance = integer(aj["balance"], path + ".balance", 0, INT64_MAX, "an integer >= 0 (smallest currency unit)");
      if (aj.contains("currency")) a.currency = currency_of(aj["currency"], path + ".currency");
      r.accounts.push_back(std::move(a));
    }
  }
  return r;
}

}  // namespace lockbench::partner
