// The oracle: witnesses recorded while calls run, episode verdicts at each
// quiet point, and the checks made at check() (idle state, and the two-sided
// comparison with what the service's database stored).
#include <algorithm>
#include <map>
#include <set>
#include <unordered_set>

#include "fake_partner/model/partner_impl.hpp"

namespace lockbench::partner {

namespace {
std::string ops_text(const std::vector<std::uint64_t>& ops) {
  std::string s;
  for (auto op : ops) s += (s.empty() ? "" : ", ") + std::string("op ") + std::to_string(op);
  return s;
}

// Operations mutating one person at once: a retry shares its operation's id; untagged calls count one each.
std::int64_t distinct_ops(const std::vector<MutationInFlight>& inflight) {
  std::int64_t n = 0;
  for (std::size_t i = 0; i < inflight.size(); ++i) {
    const auto op = inflight[i].op;
    bool seen = false;
    for (std::size_t j = 0; j < i && op != 0; ++j) seen = seen || inflight[j].op == op;
    n += seen ? 0 : 1;
  }
  return n;
}

double ms(Duration d) { return to_ms(d); }
}  // namespace

void Partner::Impl::record(Kind k, std::string subject, std::string detail, std::vector<std::uint64_t> ops) {
  ++counts[static_cast<int>(k)];
  // ambiguous commits and fenced-off calls are counted, not listed; retries are listed apart.
  if (k == Kind::ambiguous_commit || k == Kind::stale_token_rejected) return;
  auto& list = is_note(k) ? notes : violations;
  if (list.size() >= CheckReport::kMaxViolations) return;
  list.push_back({std::string(kCheckKinds[static_cast<int>(k)]), std::move(subject), std::move(detail), std::move(ops)});
}

std::vector<std::uint64_t> Partner::Impl::recent_ops(int p) const {
  std::set<std::uint64_t> ops;
  for (const auto& [seq, op] : persons[p].recent)
    if (seq > 0) ops.insert(op);
  return {ops.begin(), ops.end()};
}

void Partner::Impl::witness_arrival(InFlight& f, Duration now) {
  if (!is_mutation(f.call.endpoint)) return;
  const std::uint64_t op = f.tags.op_id;
  const bool registers = f.door != Door::rate_limited;  // answered at the door: in flight for no time
  if (f.tags.client_timeout) f.abandoned_at = now + *f.tags.client_timeout;
  for (int p : f.persons) {
    if (p < 0) continue;
    auto& w = persons[p];
    // Only another operation's mutation is an overlap; the same operation's earlier attempt
    // still in flight is its client retrying (untagged calls are always another operation).
    // Another operation's call whose client has given up (its timeout has passed) no longer
    // means that two holders are inside the lock: it is overlap_abandoned, not overlap_person.
    std::size_t live = 0, abandoned = 0;
    bool own_retry = false;
    for (const auto& c : w.inflight) {
      if (op != 0 && c.op == op) own_retry = true;
      else ++(c.abandoned_at <= now ? abandoned : live);
    }
    const Kind overlap = live > 0 ? Kind::overlap_person : Kind::overlap_abandoned;
    if (live + abandoned > 0 && !listed(overlap)) {
      count(overlap);
    } else if (live + abandoned > 0) {
      std::vector<std::uint64_t> others;
      for (const auto& c : w.inflight)
        if (op == 0 || c.op != op) others.push_back(c.op);
      std::vector<std::uint64_t> ops{op};
      ops.insert(ops.end(), others.begin(), others.end());
      const std::string detail =
          live > 0 ? "a mutation (op " + std::to_string(op) + ") arrived while " + ops_text(others) + " was in flight"
                   : "a mutation (op " + std::to_string(op) + ") arrived while " + ops_text(others) +
                         " was still running at the partner, abandoned by its client (past its timeout); the lock "
                         "held: fix with an idempotency key or a fencing token, not another lock";
      record(overlap, person_name(p), detail, std::move(ops));
    }
    if (own_retry && !listed(Kind::retry_overlap))
      count(Kind::retry_overlap);
    else if (own_retry)
      record(Kind::retry_overlap, person_name(p),
             "op " + std::to_string(op) + " arrived again while its own earlier attempt was still in flight", {op});
    // A promotion between its steps no longer holds the person alone once another operation mutates it.
    std::erase_if(w.between_steps, [&](std::uint64_t o) { return op == 0 || o != op; });
    if (registers) {
      w.inflight.push_back({f.plan.call_id, op, f.abandoned_at});
      max_inflight_per_person = std::max(max_inflight_per_person, distinct_ops(w.inflight));
    }
    if (f.tags.fencing_token) w.max_token = std::max(w.max_token.value_or(0), *f.tags.fencing_token);
  }
  if (f.call.endpoint != Endpoint::stripe_charge) return;
  auto& order = orders[f.call.order_id];
  if (f.tags.fencing_token) order.max_token = std::max(order.max_token.value_or(0), *f.tags.fencing_token);
  if (!f.order_execution) return;
  if (!order.executing.empty()) {
    std::vector<std::uint64_t> ops{op}, others;
    for (const auto& c : order.executing) others.push_back(c.second);
    ops.insert(ops.end(), others.begin(), others.end());
    record(Kind::order_overlap, f.call.order_id,
           "a charge (op " + std::to_string(op) + ") executed while " + ops_text(others) + " was in flight",
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
    std::vector<std::string> problems;
    ids.check_users(touched, 2, problems);
    for (auto& detail : problems) record(Kind::user_malformed, ids.key(f.user), std::move(detail), {op});
  }
  for (int p : f.persons) {
    if (p < 0) continue;
    auto& w = persons[p];
    if (r.applied) {
      ++w.commit_seq;
      w.recent[w.commit_seq % PersonWatch::kRecent] = {w.commit_seq, op};
      w.abandoned_effect = w.abandoned_effect || f.late;
    }
    if (op == 0) continue;
    if (e == Endpoint::auth0_unlink && f.tags.op_step == 1) {
      if (w.open_steps.size() >= PersonWatch::kOpenMax) w.open_steps.erase(w.open_steps.begin());
      w.open_steps.emplace_back(op, w.commit_seq);
      if (r.applied && std::find(w.between_steps.begin(), w.between_steps.end(), op) == w.between_steps.end()) {
        if (w.between_steps.size() >= PersonWatch::kOpenMax) w.between_steps.erase(w.between_steps.begin());
        w.between_steps.push_back(op);
      }
    }
    if (e == Endpoint::auth0_link && f.tags.op_step == 2) {
      if (r.applied) std::erase(w.between_steps, op);
      const auto open = std::find_if(w.open_steps.begin(), w.open_steps.end(), [&](const auto& s) { return s.first == op; });
      if (open != w.open_steps.end()) {
        // Any commit by another operation since this one's step 1 interleaved. The ring holds
        // commits commit_seq - kRecent + 1 .. commit_seq, commit s in slot s % kRecent: visit only
        // those after step 1 (usually one or two) instead of the whole ring.
        constexpr std::uint64_t kRecent = PersonWatch::kRecent;
        const std::uint64_t oldest_kept = w.commit_seq >= kRecent ? w.commit_seq - kRecent + 1 : 1;
        const std::uint64_t first = std::max(open->second + 1, oldest_kept);
        const auto commit = [&](std::uint64_t s) -> const auto& { return w.recent[s % kRecent]; };
        if (!listed(Kind::flow_interleaving)) {
          for (std::uint64_t s = first; s <= w.commit_seq; ++s)
            if (commit(s).second != op) {
              count(Kind::flow_interleaving);
              break;
            }
        } else {
          std::set<std::uint64_t> others;
          for (std::uint64_t s = first; s <= w.commit_seq; ++s)
            if (commit(s).second != op) others.insert(commit(s).second);
          if (!others.empty()) {
            std::vector<std::uint64_t> ops{op};
            ops.insert(ops.end(), others.begin(), others.end());
            record(Kind::flow_interleaving, person_name(p),
                   "between step 1 and step 2 of op " + std::to_string(op) + ", " + std::to_string(others.size()) +
                       " other operation(s) changed this person",
                   std::move(ops));
          }
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

void Partner::Impl::person_left(int p, std::uint64_t call_id, Duration now, bool tagged) {
  auto& w = persons[p];
  const auto left = std::erase_if(w.inflight, [&](const auto& c) { return c.call_id == call_id; });
  // A quiet point: the last registered mutation left and no promotion is between its steps.
  // Untagged calls carry no operation boundaries: their persons are judged at check() only.
  if (left == 0 || !tagged || !w.inflight.empty() || !w.between_steps.empty()) return;
  judge_quiet(p, now);
}

void Partner::Impl::judge_quiet(int p, Duration now) {
  ++episodes;
  auto& w = persons[p];
  const bool split = ids.split(p);
  const bool lost = !split && w.has_promotion && ids.primary_of(p) != w.promotion_target;
  // A stretch of corruption counts once, when a quiet point first finds it; later traffic that
  // heals it does not take the count back. Corruption left by an effect applied after its client
  // gave up is abandoned_effect: the lock held, the client's timeout was shorter than the work.
  const Kind split_kind = w.abandoned_effect ? Kind::abandoned_effect : Kind::person_split;
  const Kind lost_kind = w.abandoned_effect ? Kind::abandoned_effect : Kind::lost_promotion;
  const std::string late = w.abandoned_effect ? " (after an effect applied past its client's timeout)" : "";
  if (split && !w.split_flagged && !listed(split_kind)) {
    count(split_kind);
  } else if (split && !w.split_flagged) {
    std::set<std::string> users;
    for (auto id : ids.person_identities(p)) users.insert(ids.key(ids.owner(id)));
    std::string list;
    for (const auto& u : users) list += (list.empty() ? "" : ", ") + u;
    record(split_kind, person_name(p),
           "when its calls ended, its identities were held by " + std::to_string(users.size()) + " users: " + list +
               late,
           recent_ops(p));
  }
  w.split_flagged = split;
  if (lost && w.lost_flagged_op != w.promotion_op) {
    if (!listed(lost_kind))
      count(lost_kind);
    else
      record(lost_kind, person_name(p),
             "when its calls ended, the primary was " + ids.key(ids.primary_of(p)) +
                 " but the promotion that finished last (op " + std::to_string(w.promotion_op) + ") made it " +
                 ids.key(w.promotion_target) + late,
             {w.promotion_op});
    w.lost_flagged_op = w.promotion_op;  // each promotion is counted lost at most once
  }
  if (!(split || lost)) w.abandoned_effect = false;  // whole again: a later stretch starts afresh
  if ((split || lost) && !w.corrupt_since) w.corrupt_since = now;
  if (!(split || lost) && w.corrupt_since) {
    const Duration d = now - *w.corrupt_since;
    corrupted_max = std::max(corrupted_max, d);
    corrupted_total += d;
    w.corrupt_since.reset();
  }
}

void Partner::Impl::check_service(
    const ServiceView& view, const std::vector<std::pair<std::string, std::vector<std::string>>>& live,
    const std::function<void(Kind, std::string, std::string, std::vector<std::uint64_t>)>& add) const {
  const auto op_of = [&](const std::vector<std::uint64_t>& ops, std::ptrdiff_t i) {
    return i >= 0 && static_cast<std::size_t>(i) < ops.size() ? ops[static_cast<std::size_t>(i)] : 0;
  };
  if (view.primaries) {
    for (const auto& [person, stored] : *view.primaries) {
      const IdentityId id = ids.find_existing(person);
      if (id == kNoIdentity) {
        const std::int64_t k = ids.range_person(person);
        if (k == 0) {
          add(Kind::db_partner_divergence, person, "the service stores primary " + stored + " for a person the partner does not know", {});
        } else if (const std::string seeded = "auth0|u" + std::to_string(k); stored != seeded) {
          // Untouched range person: whole, with its seeded primary.
          add(Kind::db_partner_divergence, seeded,
              "the service stores primary " + stored + " but the partner's primary is " + seeded, {});
        }
        continue;
      }
      const int p = ids.person_of(id);
      if (!persons[p].inflight.empty()) continue;  // judged when its calls have ended
      if (ids.split(p)) {
        std::set<std::string> users;
        for (auto i : ids.person_identities(p)) users.insert(ids.key(ids.owner(i)));
        add(Kind::db_partner_divergence, person_name(p),
            "the service stores primary " + stored + " but the partner holds the person split over " +
                std::to_string(users.size()) + " users",
            recent_ops(p));
      } else if (const std::string& primary = ids.key(ids.primary_of(p)); primary != stored) {
        add(Kind::db_partner_divergence, person_name(p),
            "the service stores primary " + stored + " but the partner's primary is " + primary, recent_ops(p));
      }
    }
  }
  if (view.orders) {
    for (const auto& [order, charges] : live) {
      const auto it = view.orders->find(order);
      for (const auto& c : charges) {
        if (it != view.orders->end() && it->second.status == "PAID" && it->second.charge_id == c) continue;
        const std::string held = it == view.orders->end()
                                     ? "the service holds no such order"
                                     : "the service holds it as " + (it->second.status.empty() ? "(no status)" : it->second.status) +
                                           (it->second.charge_id.empty() ? "" : " with " + it->second.charge_id);
        add(Kind::orphan_charge, order, "charge " + c + " took money but " + held,
            {op_of(charge_op, pay.charge_index(c))});
      }
    }
    for (const auto& [order, o] : *view.orders) {
      if (o.status != "PAID") continue;
      const Charge* c = pay.find_charge(o.charge_id);
      std::string why;
      if (o.charge_id.empty()) why = "with no charge id";
      else if (!c) why = "with charge " + o.charge_id + ", which the partner never made";
      else if (c->order_id != order) why = "with charge " + o.charge_id + ", which was for order " + c->order_id;
      else if (c->refunded) why = "with charge " + o.charge_id + ", which was refunded";
      if (!why.empty())
        add(Kind::paid_without_charge, order, "the service holds it as PAID " + why,
            {c ? op_of(charge_op, pay.charge_index(o.charge_id)) : 0});
    }
  }
  if (view.balances) {
    for (const auto& [account, balance] : *view.balances) {
      const auto opening = pay.opening_balance(account);
      if (!opening) {
        add(Kind::balance_divergence, account, "the service holds a balance of " + std::to_string(balance) +
                                                   " for an account the partner was given no opening balance for", {});
        continue;
      }
      std::int64_t paid = 0;
      std::vector<std::uint64_t> ops;
      for (std::size_t i = 0; i < pay.payouts().size(); ++i)
        if (pay.payouts()[i].account_id == account) {
          paid += pay.payouts()[i].amount;
          ops.push_back(op_of(payout_op, static_cast<std::ptrdiff_t>(i)));
        }
      if (*opening - paid != balance)
        add(Kind::balance_divergence, account,
            "the service holds " + std::to_string(balance) + " but the opening balance " + std::to_string(*opening) +
                " less " + std::to_string(paid) + " paid out is " + std::to_string(*opening - paid),
            std::move(ops));
    }
  }
  if (view.claims) {
    std::map<std::pair<std::string, std::string>, std::vector<std::uint64_t>> credits;  // (customer, reward) -> ops
    for (std::size_t i = 0; i < pay.credits().size(); ++i) {
      const auto& c = pay.credits()[i];
      credits[{c.customer_id, c.reward}].push_back(op_of(credit_op, static_cast<std::ptrdiff_t>(i)));
    }
    std::map<std::pair<std::string, std::string>, std::int64_t> rows;
    for (const auto& [customer, rewards] : *view.claims)
      for (const auto& [reward, n] : rewards) rows[{customer, reward}] = n;
    for (const auto& [key, ops] : credits) rows.try_emplace(key, 0);
    for (const auto& [key, n] : rows) {
      const auto it = credits.find(key);
      const std::int64_t granted = it == credits.end() ? 0 : static_cast<std::int64_t>(it->second.size());
      if (granted != n)
        add(Kind::claim_divergence, key.first,
            "reward " + key.second + ": the service holds " + std::to_string(n) + " claim row(s) but the partner granted " +
                std::to_string(granted) + " credit(s)",
            it == credits.end() ? std::vector<std::uint64_t>{} : it->second);
    }
  }
}

CheckReport Partner::check(Duration now, const ServiceView& service) {
  CheckInput in;
  in.service = service;
  return check(now, in);
}

CheckReport Partner::check(Duration now, const CheckInput& input) {
  auto& m = *impl_;

  // State checks, evaluated afresh on every call.
  std::array<std::int64_t, kKindCount> fresh{};
  std::vector<Violation> fresh_list;
  const auto add = [&](Kind k, std::string subject, std::string detail, std::vector<std::uint64_t> ops) {
    ++fresh[static_cast<int>(k)];
    fresh_list.push_back({std::string(kCheckKinds[static_cast<int>(k)]), std::move(subject), std::move(detail), std::move(ops)});
  };
  // The end-of-run verdict for persons with nothing in flight (touched persons only: an untouched
  // range person is whole by construction). A stretch a quiet point already counted is not counted again.
  for (int p = 0; p < static_cast<int>(m.persons.size()); ++p) {
    const auto& w = m.persons[p];
    if (!w.inflight.empty()) continue;
    const bool split = m.ids.split(p);
    if (split && !w.split_flagged) {
      std::set<std::string> users;
      for (auto id : m.ids.person_identities(p)) users.insert(m.ids.key(m.ids.owner(id)));
      std::string list;
      for (const auto& u : users) list += (list.empty() ? "" : ", ") + u;
      add(w.abandoned_effect ? Kind::abandoned_effect : Kind::person_split, m.person_name(p),
          "with nothing in flight, its identities are held by " + std::to_string(users.size()) + " users: " + list,
          m.recent_ops(p));
    }
    if (!split && w.has_promotion && m.ids.primary_of(p) != w.promotion_target && w.lost_flagged_op != w.promotion_op)
      add(w.abandoned_effect ? Kind::abandoned_effect : Kind::lost_promotion, m.person_name(p),
          "primary is " + m.ids.key(m.ids.primary_of(p)) + " but the promotion that finished last (op " +
              std::to_string(w.promotion_op) + ") made it " + m.ids.key(w.promotion_target),
          {w.promotion_op});
  }
  const auto live = m.pay.live_charges_by_order();
  for (const auto& [order, charges] : live) {
    if (charges.size() < 2) continue;
    std::string list;
    std::vector<std::uint64_t> ops;
    for (const auto& c : charges) {
      list += (list.empty() ? "" : ", ") + c;
      const auto i = m.pay.charge_index(c);
      ops.push_back(i >= 0 && static_cast<std::size_t>(i) < m.charge_op.size() ? m.charge_op[static_cast<std::size_t>(i)] : 0);
    }
    add(Kind::double_charge, order, std::to_string(charges.size()) + " succeeded, unrefunded charges: " + list, std::move(ops));
  }
  if (input.paid_orders && !(input.service && input.service->orders)) {
    const std::unordered_set<std::string> paid(input.paid_orders->begin(), input.paid_orders->end());
    for (const auto& [order, charges] : live)
      if (!paid.contains(order))
        for (const auto& c : charges) add(Kind::orphan_charge, order, "charge " + c + " took money for an order not paid", {});
  }
  {  // overdrawn: payouts beyond the opening balance the reset gave the account
    std::map<std::string, std::pair<std::int64_t, std::vector<std::size_t>>> by_account;
    for (std::size_t i = 0; i < m.pay.payouts().size(); ++i) {
      auto& [sum, list] = by_account[m.pay.payouts()[i].account_id];
      sum += m.pay.payouts()[i].amount;
      list.push_back(i);
    }
    for (const auto& [account, sl] : by_account) {
      const auto opening = m.pay.opening_balance(account);
      if (!opening || sl.first <= *opening) continue;
      std::string ids_text;
      std::vector<std::uint64_t> ops;
      for (auto i : sl.second) {
        ids_text += (ids_text.empty() ? "" : ", ") + m.pay.payouts()[i].id;
        ops.push_back(i < m.payout_op.size() ? m.payout_op[i] : 0);
      }
      add(Kind::overdrawn, account,
          std::to_string(sl.first) + " paid out of an opening balance of " + std::to_string(*opening) + ": " + ids_text,
          std::move(ops));
    }
  }
  {  // duplicate_reward: more than one credit of one reward for one customer
    std::map<std::pair<std::string, std::string>, std::vector<std::size_t>> by_reward;
    for (std::size_t i = 0; i < m.pay.credits().size(); ++i)
      by_reward[{m.pay.credits()[i].customer_id, m.pay.credits()[i].reward}].push_back(i);
    for (const auto& [key, list] : by_reward) {
      if (list.size() < 2) continue;
      std::string ids_text;
      std::vector<std::uint64_t> ops;
      for (auto i : list) {
        ids_text += (ids_text.empty() ? "" : ", ") + m.pay.credits()[i].id;
        ops.push_back(i < m.credit_op.size() ? m.credit_op[i] : 0);
      }
      add(Kind::duplicate_reward, key.first,
          "reward " + key.second + " credited " + std::to_string(list.size()) + " times: " + ids_text, std::move(ops));
    }
  }
  if (input.service) m.check_service(*input.service, live, add);
  m.last_fresh = fresh;

  CheckReport rep;
  for (int k = 0; k < kKindCount; ++k) rep.counts[std::string(kCheckKinds[k])] = m.counts[k] + fresh[k];
  rep.max_inflight_per_person = m.max_inflight_per_person;
  rep.episodes = m.episodes;
  Duration max = m.corrupted_max, total = m.corrupted_total;
  for (const auto& w : m.persons)
    if (w.corrupt_since && now > *w.corrupt_since) {
      max = std::max(max, now - *w.corrupt_since);
      total += now - *w.corrupt_since;
    }
  rep.corrupted_ms_max = ms(max);
  rep.corrupted_ms_total = ms(total);
  rep.violations = m.violations;
  for (auto& v : fresh_list)
    if (rep.violations.size() < CheckReport::kMaxViolations) rep.violations.push_back(std::move(v));
  rep.notes = m.notes;
  return rep;
}

}  // namespace lockbench::partner
