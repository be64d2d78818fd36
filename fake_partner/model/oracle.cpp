// The oracle: witnesses recorded while calls run, and the idle-state checks.
#include <algorithm>
#include <set>
#include <unordered_set>

#include "fake_partner/model/partner_impl.hpp"

namespace lockbench::partner {

namespace {
std::string ops_text(const std::vector<std::pair<std::uint64_t, std::uint64_t>>& calls) {
  std::string s;
  for (const auto& [call, op] : calls) s += (s.empty() ? "" : ", ") + std::string("op ") + std::to_string(op);
  return s;
}
}  // namespace

void Partner::Impl::record(Kind k, std::string subject, std::string detail, std::vector<std::uint64_t> ops) {
  ++counts[static_cast<int>(k)];
  // ambiguous commits and fenced-off calls are counted, not violations of exclusion.
  if (k == Kind::ambiguous_commit || k == Kind::stale_token_rejected) return;
  if (violations.size() >= CheckReport::kMaxViolations) return;
  violations.push_back({std::string(kCheckKinds[static_cast<int>(k)]), std::move(subject), std::move(detail), std::move(ops)});
}

void Partner::Impl::witness_arrival(InFlight& f) {
  if (!is_mutation(f.call.endpoint)) return;
  const std::uint64_t op = f.tags.op_id;
  const bool registers = f.door != Door::rate_limited;  // answered at the door: in flight for no time
  for (int p : f.persons) {
    if (p < 0) continue;
    auto& w = persons[p];
    if (!w.inflight.empty()) {
      std::vector<std::uint64_t> ops{op};
      for (const auto& c : w.inflight) ops.push_back(c.second);
      record(Kind::overlap_person, person_name(p),
             "a mutation (op " + std::to_string(op) + ") arrived while " + ops_text(w.inflight) + " was in flight",
             std::move(ops));
    }
    if (registers) {
      w.inflight.emplace_back(f.plan.call_id, op);
      max_inflight_per_person = std::max<std::int64_t>(max_inflight_per_person, static_cast<std::int64_t>(w.inflight.size()));
    }
    if (f.tags.fencing_token) w.max_token = std::max(w.max_token.value_or(0), *f.tags.fencing_token);
  }
  if (f.call.endpoint != Endpoint::stripe_charge) return;
  auto& order = orders[f.call.order_id];
  if (f.tags.fencing_token) order.max_token = std::max(order.max_token.value_or(0), *f.tags.fencing_token);
  if (!f.order_execution) return;
  if (!order.executing.empty()) {
    std::vector<std::uint64_t> ops{op};
    for (const auto& c : order.executing) ops.push_back(c.second);
    record(Kind::order_overlap, f.call.order_id,
           "a charge (op " + std::to_string(op) + ") executed while " + ops_text(order.executing) + " was in flight",
           std::move(ops));
  }
  order.executing.emplace_back(f.plan.call_id, op);
}

bool Partner::Impl::stale(const InFlight& f) const {
  if (cfg.fencing != Fencing::enforce || !f.tags.fencing_token || !is_mutation(f.call.endpoint)) return false;
  const std::uint64_t token = *f.tags.fencing_token;
  for (int p : f.persons)
    if (p >= 0 && persons[p].max_token && token < *persons[p].max_token) return true;
  if (f.call.endpoint == Endpoint::stripe_charge) {
    const auto it = orders.find(f.call.order_id);
    if (it != orders.end() && it->second.max_token && token < *it->second.max_token) return true;
  }
  return false;
}

void Partner::Impl::witness_effect(InFlight& f, const Reply& r) {
  const Endpoint e = f.call.endpoint;
  if (e != Endpoint::auth0_link && e != Endpoint::auth0_unlink) return;
  const std::uint64_t op = f.tags.op_id;
  if (r.applied) {
    const IdentityId touched[2] = {f.user, f.other};
    std::vector<std::pair<std::string, std::string>> problems;
    ids.check_users(touched, 2, problems);
    for (auto& [kind, detail] : problems) {
      const auto k = kind == "identity_lost" ? Kind::identity_lost
                     : kind == "identity_duplicated" ? Kind::identity_duplicated : Kind::user_malformed;
      record(k, ids.key(f.user), std::move(detail), {op});
    }
  }
  for (int p : f.persons) {
    if (p < 0) continue;
    auto& w = persons[p];
    if (r.applied) {
      ++w.commit_seq;
      w.recent[w.commit_seq % PersonWatch::kRecent] = {w.commit_seq, op};
    }
    if (op == 0) continue;
    if (e == Endpoint::auth0_unlink && f.tags.op_step == 1) {
      if (w.open_steps.size() >= PersonWatch::kOpenMax) w.open_steps.erase(w.open_steps.begin());
      w.open_steps.emplace_back(op, w.commit_seq);
    }
    if (e == Endpoint::auth0_link && f.tags.op_step == 2) {
      const auto open = std::find_if(w.open_steps.begin(), w.open_steps.end(), [&](const auto& s) { return s.first == op; });
      if (open != w.open_steps.end()) {
        // Any commit by another operation since this one's step 1 interleaved.
        std::set<std::uint64_t> others;
        for (const auto& [seq, other_op] : w.recent)
          if (seq > open->second && other_op != op) others.insert(other_op);
        if (!others.empty()) {
          std::vector<std::uint64_t> ops{op};
          ops.insert(ops.end(), others.begin(), others.end());
          record(Kind::flow_interleaving, person_name(p),
                 "between step 1 and step 2 of op " + std::to_string(op) + ", " + std::to_string(others.size()) +
                     " other operation(s) changed this person",
                 std::move(ops));
        }
        w.open_steps.erase(open);
      }
      if (r.status == 201 && p == ids.person_of(f.user)) {
        w.has_promotion = true;
        w.promotion_target = f.user;
        w.promotion_op = op;
      }
    }
  }
}

void Partner::Impl::person_left(int p, std::uint64_t call_id) {
  auto& w = persons[p];
  std::erase_if(w.inflight, [&](const auto& c) { return c.first == call_id; });
}

CheckReport Partner::check(Duration /*now*/, const CheckInput& input) {
  auto& m = *impl_;

  // State checks, evaluated afresh on every call.
  std::array<std::int64_t, kKindCount> fresh{};
  std::vector<Violation> fresh_list;
  const auto add = [&](Kind k, std::string subject, std::string detail, std::vector<std::uint64_t> ops) {
    ++fresh[static_cast<int>(k)];
    fresh_list.push_back({std::string(kCheckKinds[static_cast<int>(k)]), std::move(subject), std::move(detail), std::move(ops)});
  };
  // A person is legitimately split between the two steps of a promotion, so
  // splits are judged here, at the end, for persons with nothing in flight.
  for (int p = 0; p < static_cast<int>(m.persons.size()); ++p) {
    const auto& w = m.persons[p];
    if (!w.inflight.empty() || !m.ids.split(p)) continue;
    std::set<std::string> users;
    for (auto id : m.ids.person_identities(p)) users.insert(m.ids.key(m.ids.owner(id)));
    std::string list;
    for (const auto& u : users) list += (list.empty() ? "" : ", ") + u;
    std::set<std::uint64_t> ops;  // the operations that last changed this person
    for (const auto& [seq, op] : w.recent)
      if (seq > 0) ops.insert(op);
    add(Kind::person_split, m.person_name(p),
        "with nothing in flight, its identities are held by " + std::to_string(users.size()) + " users: " + list,
        {ops.begin(), ops.end()});
  }
  for (int p = 0; p < static_cast<int>(m.persons.size()); ++p) {
    const auto& w = m.persons[p];
    if (!w.has_promotion || !w.inflight.empty() || m.ids.split(p)) continue;
    if (m.ids.primary_of(p) != w.promotion_target)
      add(Kind::lost_promotion, m.person_name(p),
          "primary is " + m.ids.key(m.ids.primary_of(p)) + " but the promotion that finished last (op " +
              std::to_string(w.promotion_op) + ") made it " + m.ids.key(w.promotion_target),
          {w.promotion_op});
  }
  const auto live = m.pay.live_charges_by_order();
  for (const auto& [order, charges] : live) {
    if (charges.size() < 2) continue;
    std::string list;
    for (const auto& c : charges) list += (list.empty() ? "" : ", ") + c;
    add(Kind::double_charge, order, std::to_string(charges.size()) + " succeeded, unrefunded charges: " + list, {});
  }
  if (input.paid_orders) {
    const std::unordered_set<std::string> paid(input.paid_orders->begin(), input.paid_orders->end());
    for (const auto& [order, charges] : live)
      if (!paid.contains(order))
        for (const auto& c : charges) add(Kind::orphan_charge, order, "charge " + c + " took money for an order not paid", {});
  }
  // Catch-all over every user, in case a problem escaped the per-mutation checks.
  if (m.counts[0] + m.counts[1] + m.counts[2] == 0) {
    std::vector<std::pair<std::string, std::string>> problems;
    m.ids.check_all(problems);
    for (auto& [kind, detail] : problems)
      add(kind == "identity_lost" ? Kind::identity_lost
          : kind == "identity_duplicated" ? Kind::identity_duplicated : Kind::user_malformed,
          "state", std::move(detail), {});
  }
  m.last_fresh = fresh;

  CheckReport rep;
  for (int k = 0; k < kKindCount; ++k) rep.counts[std::string(kCheckKinds[k])] = m.counts[k] + fresh[k];
  rep.max_inflight_per_person = m.max_inflight_per_person;
  rep.violations = m.violations;
  for (auto& v : fresh_list)
    if (rep.violations.size() < CheckReport::kMaxViolations) rep.violations.push_back(std::move(v));
  return rep;
}

}  // namespace lockbench::partner
