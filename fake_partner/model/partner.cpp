// The three phases of a call: arrive (door decisions, latency, fault),
// execute (the effect), complete (the answer left).
#include "fake_partner/model/partner.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "fake_partner/model/partner_impl.hpp"

namespace lockbench::partner {

namespace {
bool is_auth0_mutation(Endpoint e) { return e == Endpoint::auth0_link || e == Endpoint::auth0_unlink; }
bool is_stripe_mutation(Endpoint e) {
  return e == Endpoint::stripe_charge || e == Endpoint::stripe_refund || e == Endpoint::stripe_payout ||
         e == Endpoint::stripe_credit;
}
constexpr std::size_t kIdempotencyKeyMax = 255;

// The status the client actually receives; 0 when the answer never arrives whole.
int delivered_status(const FaultPlan& fault, int status) {
  using K = FaultPlan::Kind;
  if (fault.kind == K::hang || fault.kind == K::reset || fault.kind == K::truncate || fault.kind == K::garbage) return 0;
  return status;
}
}  // namespace

Partner::Partner(Config cfg) : impl_(std::make_unique<Impl>()) {
  impl_->cfg = std::move(cfg);
  impl_->configured();
  impl_->reseed(impl_->cfg.seed);
}
Partner::~Partner() = default;
Partner::Partner(Partner&&) noexcept = default;
Partner& Partner::operator=(Partner&&) noexcept = default;

void Partner::Impl::configured() {
  for (auto e : kEndpoints) latency[index_of(e)] = DistributionSampler(cfg.latency[index_of(e)].dist);
}

void Partner::Impl::reseed(std::uint64_t seed) {
  seed_in_use = seed;
  for (auto e : kEndpoints) {
    const std::string name(endpoint_name(e));
    latency_rng[index_of(e)] = Rng(seed, "latency." + name);
    fault_rng[index_of(e)] = Rng(seed, "fault." + name);
  }
}

void Partner::reset(const ResetSpec& spec, Duration now) {
  auto& m = *impl_;
  m.reset_at = now;
  m.ids.reset(spec.persons, spec.person_range);
  m.pay.reset(spec);
  m.limiter.reset();
  m.reseed(spec.seed.value_or(m.cfg.seed));
  m.arrivals_since_reset = {};
  m.inflight.clear();  // forgotten calls: their ids are refused from now on
  m.clear_run_state();
  m.metrics = {};
}

void Partner::Impl::clear_run_state() {
  persons.assign(ids.person_count(), PersonWatch{});
  orders.clear();
  counts = {};
  last_fresh = {};
  violations.clear();
  notes.clear();
  max_inflight_per_person = 0;
  episodes = 0;
  corrupted_max = corrupted_total = Duration(0);
  charge_op.clear();
  payout_op.clear();
  credit_op.clear();
}

FaultPlan Partner::Impl::draw_fault(Endpoint e, Duration now) {
  const int ei = index_of(e);
  FaultPlan chosen;
  // Every configured fault draws, hit or not, in its window or not, so the
  // stream does not depend on which fault struck: the same calls give the same faults.
  for (const auto& spec : cfg.faults[ei])
    if (fault_rng[ei].bernoulli(spec.p) && !chosen.any() && spec.strikes_at(now - reset_at)) chosen = spec.plan;
  for (const auto& s : cfg.script)
    if (s.endpoint == e && s.nth == arrivals_since_reset[ei]) {
      chosen = s.fault;
      break;
    }
  return chosen;
}

// `c` is the caller's call: InFlight keeps no identity strings.
void Partner::Impl::resolve(InFlight& f, const CallView& c) {
  if (c.endpoint == Endpoint::auth0_get || is_auth0_mutation(c.endpoint)) f.user = ids.find(c.user_id);
  if (!is_auth0_mutation(c.endpoint)) {
    grow_persons();
    return;
  }
  f.identity_missing = c.provider.empty() || c.identity_user_id.empty();
  f.other = c.identity_key.empty() ? ids.find(c.provider, c.identity_user_id) : ids.find(c.identity_key);
  grow_persons();  // either lookup may have brought a range person into being
  const int a = ids.person_of(f.user), b = ids.person_of(f.other);
  f.persons = {a >= 0 ? a : b, (a >= 0 && b >= 0 && b != a) ? b : -1};
}

// `tags` are the caller's: InFlight keeps no tag strings.
void Partner::Impl::decide_door(InFlight& f, const Tags& tags, Duration now) {
  const Call& c = f.call;
  if (!is_stripe_mutation(c.endpoint)) return;
  const bool before = f.plan.fault.before_effect();
  const std::string& key = tags.idempotency_key;
  if (!key.empty()) {
    if (key.size() > kIdempotencyKeyMax) {
      f.door = Door::idem_too_long;
      return;
    }
    auto entry = pay.lookup(tags.tenant, key, now, f.idem_slot);
    const auto fp = PaymentsStore::fingerprint(c);
    switch (entry.state) {
      case PaymentsStore::KeyState::absent:
        // A call faulted before the effect never reserves: its retry executes.
        if (before) f.idem_slot.clear();
        else pay.reserve(f.idem_slot, fp);
        break;
      case PaymentsStore::KeyState::in_flight:
        f.door = Door::idem_in_use;
        f.idem_slot.clear();
        return;
      case PaymentsStore::KeyState::completed:
        f.door = entry.fingerprint == fp ? Door::idem_replay : Door::idem_mismatch;
        if (f.door == Door::idem_replay) f.replay = std::move(entry.stored);
        f.idem_slot.clear();
        return;
    }
  }
  if (c.endpoint != Endpoint::stripe_charge || before) return;
  auto& order = orders[c.order_id];
  if (cfg.payments.object_lock && !order.executing.empty()) {
    // Simplified object lock: the waiter always times out, the key is freed.
    f.door = Door::lock_timeout;
    f.plan.delay = cfg.payments.lock_timeout;
    f.plan.apply_after = f.plan.delay;
    if (!f.idem_slot.empty()) pay.release(f.idem_slot);
    f.idem_slot.clear();
    return;
  }
  f.order_execution = true;
}

Plan Partner::arrive(const CallView& call, const Tags& tags, Duration now) {
  auto& m = *impl_;
  const int ei = index_of(call.endpoint);
  InFlight& f = m.inflight.open(call, tags);
  ++m.arrivals_since_reset[ei];
  ++m.metrics.arrivals[ei];
  m.resolve(f, call);
  if (!m.limiter.take(m.cfg.rate_limit, tags.tenant, call.endpoint, now, f.rate_limit)) {
    // The bucket is empty: answered at the door, no latency, nothing executes.
    f.plan.rate_limited = true;
    f.door = Door::rate_limited;
  } else {
    const auto& lat = m.cfg.latency[ei];
    f.plan.delay = std::max(Duration(0), m.latency[ei].sample(m.latency_rng[ei]));
    f.plan.apply_after = Duration(std::llround(static_cast<double>(f.plan.delay.count()) * lat.apply_at));
    f.plan.fault = m.draw_fault(call.endpoint, now);
    if (f.plan.fault.any()) ++m.metrics.faults[ei][static_cast<int>(f.plan.fault.kind)];
    if (f.plan.fault.kind == FaultPlan::Kind::slow) {  // a slower call, nothing else: its answer as planned
      f.plan.delay = f.plan.fault.hang_for.value_or(f.plan.delay);
      f.plan.apply_after = Duration(std::llround(static_cast<double>(f.plan.delay.count()) * lat.apply_at));
      f.plan.fault = FaultPlan{};
    }
    m.decide_door(f, tags, now);
  }
  m.witness_arrival(f, now);
  return f.plan;
}

void Partner::Impl::run_effect(InFlight& f, Reply& r) {
  const Call& c = f.call;
  if (stale(f)) {
    r.status = 409;
    r.error = Error::stale_token;
    const std::string& other = c.endpoint == Endpoint::stripe_payout   ? c.account_id
                               : c.endpoint == Endpoint::stripe_credit ? c.customer_id
                                                                       : c.order_id;
    record(Kind::stale_token_rejected, f.persons[0] >= 0 ? person_name(f.persons[0]) : other,
           "fencing token " + std::to_string(*f.tags.fencing_token) + " is below the highest seen", {f.tags.op_id});
    return;
  }
  switch (c.endpoint) {
    case Endpoint::auth0_get:
      ids.get(f.user, r);
      break;
    case Endpoint::auth0_link:
    case Endpoint::auth0_unlink:
      if (f.identity_missing) {
        r.status = 400;
        r.error = Error::invalid_body;
      } else if (c.endpoint == Endpoint::auth0_link) {
        ids.link(f.user, f.other, r);
      } else {
        ids.unlink(f.user, f.other, r);
      }
      break;
    case Endpoint::stripe_charge:
      pay.charge(c, r);
      break;
    case Endpoint::stripe_get:
      pay.get(c.charge_id, r);
      break;
    case Endpoint::stripe_refund:
      pay.refund(c.charge_id, r);
      break;
    case Endpoint::stripe_payout:
      pay.payout(c, r);
      if (r.applied) payout_op.push_back(f.tags.op_id);
      break;
    case Endpoint::stripe_credit:
      pay.credit(c, r);
      if (r.applied) credit_op.push_back(f.tags.op_id);
      break;
  }
  if (c.endpoint == Endpoint::stripe_charge && r.applied) charge_op.push_back(f.tags.op_id);
  witness_effect(f, r);
}

Reply Partner::execute(std::uint64_t call_id, Duration now) {
  Reply r;
  execute(call_id, now, r);
  return r;
}

void Partner::execute(std::uint64_t call_id, Duration now, Reply& r) {
  auto& m = *impl_;
  InFlight* const found = m.inflight.find(call_id);
  if (!found) throw std::out_of_range("partner: execute of unknown call " + std::to_string(call_id));
  InFlight& f = *found;
  if (f.executed) throw std::logic_error("partner: call " + std::to_string(call_id) + " executed twice");
  f.executed = true;
  r.clear();
  r.endpoint = f.call.endpoint;
  const FaultPlan& fault = f.plan.fault;
  if (f.door == Door::rate_limited) {
    r.status = 429;
    r.error = Error::rate_limited;
  } else if (fault.before_effect()) {
    if (fault.kind == FaultPlan::Kind::error) {
      r.status = fault.status;
      r.error = Error::injected_fault;
    } else if (fault.kind == FaultPlan::Kind::rate_limit_429) {
      r.status = 429;
      r.error = Error::rate_limited;
    }  // hang, reset, garbage before the effect: no answer (status 0)
  } else {
    switch (f.door) {
      case Door::execute:
        f.late = now >= f.abandoned_at;  // its client had given up: an effect nobody will hear of
        m.run_effect(f, r);
        break;
      case Door::idem_in_use: r.status = 409; r.error = Error::idempotency_key_in_use; break;
      case Door::idem_mismatch: r.status = 400; r.error = Error::idempotency_error; break;
      case Door::idem_too_long: r.status = 400; r.error = Error::idempotency_key_too_long; break;
      case Door::lock_timeout: r.status = 429; r.error = Error::lock_timeout; break;
      case Door::idem_replay:
        r = f.replay;
        r.replayed = true;
        r.applied = false;
        break;
      case Door::rate_limited: break;  // handled above
    }
    // An error after the effect: the change stays, the client sees a failure.
    if (fault.kind == FaultPlan::Kind::error) {
      r.status = fault.status;
      r.error = Error::injected_fault;
    }
    if (!f.idem_slot.empty()) m.pay.store(f.idem_slot, r, now + m.cfg.payments.idem_ttl);
  }
  r.rate_limit = f.rate_limit;
  f.applied = r.applied;
  const int status = delivered_status(fault, r.status);
  ++m.metrics.answers[index_of(r.endpoint)][status >= 0 && status < Metrics::kStatuses ? status : 0];
}

void Partner::complete(std::uint64_t call_id, Duration now, Delivery delivery) {
  auto& m = *impl_;
  InFlight* const found = m.inflight.find(call_id);
  if (!found) throw std::out_of_range("partner: complete of unknown call " + std::to_string(call_id));
  InFlight& f = *found;
  if (!f.executed) throw std::logic_error("partner: call " + std::to_string(call_id) + " completed before execute");
  const auto& fault = f.plan.fault;
  const bool answer_lost = delivery == Delivery::lost || delivered_status(fault, 1) == 0;
  const bool error_after = fault.kind == FaultPlan::Kind::error && fault.phase == Phase::after;
  if (f.applied && (answer_lost || error_after))
    m.record(Kind::ambiguous_commit, std::string(endpoint_name(f.call.endpoint)),
             "call " + std::to_string(call_id) + " changed state but its answer was lost", {f.tags.op_id});
  // Applied, but its answer left after the client had given up: the client never heard of it.
  const bool unheard = f.applied && now > f.abandoned_at;
  for (int p : f.persons)
    if (p >= 0) {
      if (unheard) m.persons[p].abandoned_effect = true;
      m.person_left(p, call_id, now, f.tags.op_id != 0);
    }
  if (f.order_execution) {
    auto& ex = m.orders[f.call.order_id].executing;
    std::erase_if(ex, [&](const auto& c) { return c.first == call_id; });
  }
  m.inflight.close(f);
}

void Partner::set_reply_lists(bool on) { impl_->ids.set_fill_lists(on); }

std::size_t Partner::inflight() const { return impl_->inflight.size(); }

const Config& Partner::config() const { return impl_->cfg; }

void Partner::update_config(const nlohmann::json& partial) { set_config(impl_->cfg.merged(partial)); }

void Partner::set_config(Config cfg) {
  const bool reseed = cfg.seed != impl_->cfg.seed;
  impl_->cfg = std::move(cfg);
  impl_->configured();
  if (reseed) impl_->reseed(impl_->cfg.seed);
}

}  // namespace lockbench::partner
