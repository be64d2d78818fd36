#include "fake_partner/model/check.hpp"

namespace lockbench::partner {

std::int64_t CheckReport::count(std::string_view kind) const {
  const auto it = counts.find(kind);
  return it == counts.end() ? 0 : it->second;
}

nlohmann::json CheckReport::to_json() const {
  nlohmann::json vs = nlohmann::json::array();
  for (const auto& v : violations)
    vs.push_back({{"kind", v.kind}, {"subject", v.subject}, {"detail", v.detail}, {"request_ids", v.request_ids}});
  nlohmann::json c = nlohmann::json::object();
  for (auto kind : kCheckKinds) c[std::string(kind)] = count(kind);
  return {{"counts", std::move(c)}, {"max_inflight_per_person", max_inflight_per_person}, {"violations", std::move(vs)}};
}

}  // namespace lockbench::partner
