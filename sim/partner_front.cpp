#include "sim/partner_front.hpp"

#include <algorithm>

#include "core/scenario.hpp"

namespace lockbench::sim {

namespace {

using partner::FaultPlan;

partner::Config config_of(const Settings& s) {
  nlohmann::json lat = s.partner_latency.to_json();
  lat["apply_at"] = s.apply_at;
  nlohmann::json doc = {{"seed", s.seed}, {"latency", {{"*", lat}}}, {"fencing", s.fencing}};
  if (!s.partner_faults.is_null() && !s.partner_faults.empty()) doc["faults"] = s.partner_faults;
  return partner::Config::from_json(doc);
}

// The model's typed call, viewing the request's own strings: no copy per attempt
// (the model reads them during arrive() only, while `c` is alive).
partner::CallView view_of(const PartnerCall& c) {
  using partner::Endpoint;
  partner::CallView out;
  // Splits "provider|user_id" at the first '|', as Call::link does.
  const auto identity_key = [&] {
    const std::string_view key = c.identity;
    const auto bar = key.find('|');
    out.user_id = c.subject;
    out.provider = key.substr(0, bar);
    if (bar == std::string_view::npos) return;
    out.identity_user_id = key.substr(bar + 1);
    out.identity_key = key;  // the model looks it up as is
  };
  switch (c.kind) {
    case PartnerCall::Kind::get_user:
      out.endpoint = Endpoint::auth0_get;
      out.user_id = c.subject;
      return out;
    case PartnerCall::Kind::unlink:
      out.endpoint = Endpoint::auth0_unlink;
      identity_key();
      return out;
    case PartnerCall::Kind::link:
      out.endpoint = Endpoint::auth0_link;
      identity_key();
      return out;
    case PartnerCall::Kind::charge:
      out.endpoint = Endpoint::stripe_charge;
      out.order_id = c.subject;
      out.amount = c.amount;
      out.currency = c.currency;
      return out;
    case PartnerCall::Kind::payout:
      out.endpoint = Endpoint::stripe_payout;
      out.account_id = c.subject;
      out.amount = c.amount;
      out.currency = c.currency;
      return out;
    case PartnerCall::Kind::credit:
      out.endpoint = Endpoint::stripe_credit;
      out.customer_id = c.subject;
      out.amount = c.amount;
      out.currency = "eur";
      out.reward = c.identity;
      return out;
  }
  out.endpoint = Endpoint::auth0_get;
  out.user_id = c.subject;
  return out;
}

// The size a slow body is assumed to have: an identity list is a few hundred bytes.
constexpr double kSlowBodyBytes = 512;

}  // namespace

PartnerFront::PartnerFront(EventLoop& loop, const Settings& s, const nlohmann::json& reset)
    // The client's keep-alive connection is open already (as the real client's
    // per-thread connection is), so an answer is waited for up to the read
    // timeout; the connect timeout only bounds opening a connection, which
    // the simulated loopback does at once.
    : loop_(loop), model_(config_of(s)), client_timeout_(s.partner_read_timeout) {
  model_.reset(partner::ResetSpec::from_json(reset), Duration::zero());
  model_.set_reply_lists(false);  // await_resume reads no identity list: none is built per call
}

std::size_t PartnerFront::new_flight() {
  if (!free_.empty()) {
    const auto i = free_.back();
    free_.pop_back();
    // As Flight{}, field by field: assigning a fresh one would move a string in and destroy another.
    Flight& fl = flights_[i];
    fl.call_id = 0;
    fl.owner = kGlobal;
    fl.status = 0;
    fl.error = partner::Error::none;
    fl.object_id.clear();
    fl.replayed = fl.client_gave_up = false;
    fl.fault = FaultPlan::Kind::none;
    fl.client = {};
    fl.refs = 0;
    return i;
  }
  flights_.emplace_back();
  return flights_.size() - 1;
}

void PartnerFront::drop_ref(std::size_t i) {
  if (--flights_[i].refs == 0) free_.push_back(i);
}

void PartnerFront::Attempt::await_suspend(std::coroutine_handle<> h) {
  PartnerFront& f = front;
  EventLoop& loop = f.loop_;
  const Duration t = loop.now();
  ++f.calls_;
  partner::Tags& tags = f.tags_;
  tags.op_id = call->op_id;
  tags.op_step = call->op_step;
  tags.fencing_token = call->fencing_token;
  tags.client_timeout = f.client_timeout_;  // as the real client's X-Client-Timeout-Ms
  tags.idempotency_key.assign(call->idempotency_key);
  const partner::Plan plan = f.model_.arrive(view_of(*call), tags, t);

  flight = f.new_flight();
  Flight& fl = f.flights_[flight];
  fl.call_id = plan.call_id;
  fl.owner = owner;
  fl.refs = 2;
  fl.fault = plan.fault.kind;

  // When the connection's story ends at the partner, and when the client learns of it.
  Duration answer_at = t + plan.delay;
  Duration partner_done_at = answer_at;
  const auto kind = plan.fault.kind;
  if (plan.rate_limited) {
    answer_at = partner_done_at = t;
  } else if (kind == FaultPlan::Kind::hang) {
    // Never answers; the connection closes after hang_for, or when the client gives up.
    answer_at = Duration::max();
    partner_done_at = plan.fault.hang_for ? t + plan.delay + *plan.fault.hang_for : t + f.client_timeout_;
  } else if (kind == FaultPlan::Kind::slow_body && plan.fault.bytes_per_s > 0) {
    answer_at = partner_done_at = t + plan.delay + from_s(kSlowBodyBytes / plan.fault.bytes_per_s);
  }
  const Duration deadline = t + f.client_timeout_;
  const Duration client_at = std::min(answer_at, deadline);
  fl.client_gave_up = answer_at > deadline;
  partner_done_at = std::max({partner_done_at, t + plan.apply_after, client_at});

  // Partner-side events never stop: the partner is not part of any pod.
  loop.at(t + plan.apply_after, kGlobal, &PartnerFront::on_execute, &f, flight);
  if (partner_done_at == client_at) {
    // The usual case: the answer leaves and arrives at once. One event does
    // both, and hands the client on as its own event would have (dropped with
    // a crashed pod, held until a paused one wakes).
    fl.client = h;
    loop.at(partner_done_at, kGlobal, &PartnerFront::on_answer, &f, flight);
    return;
  }
  loop.at(partner_done_at, kGlobal, &PartnerFront::on_complete, &f, flight);
  loop.resume_at(client_at, owner, h);
}

void PartnerFront::on_answer(void* self, std::uint64_t i) {
  auto& f = *static_cast<PartnerFront*>(self);
  const int owner = f.flights_[i].owner;
  std::coroutine_handle<> client = f.flights_[i].client;  // not const: libc++ 13's resume() is not const
  on_complete(self, i);
  if (!f.loop_.alive(owner)) return;
  if (const Duration until = f.loop_.paused_until(owner); until > Duration::zero()) {
    f.loop_.resume_at(until, owner, client);
    return;
  }
  client.resume();
}

PartnerReply PartnerFront::Attempt::await_resume() {
  PartnerFront& f = front;
  Flight& fl = f.flights_[flight];
  PartnerReply r;
  if (fl.client_gave_up) {
    r.failure = CallFailure::timeout;
  } else if (fl.fault == FaultPlan::Kind::reset) {
    r.failure = CallFailure::reset;
  } else if (fl.fault == FaultPlan::Kind::truncate || fl.fault == FaultPlan::Kind::garbage) {
    r.failure = CallFailure::bad_response;
  } else if (fl.fault == FaultPlan::Kind::hang) {
    r.failure = CallFailure::timeout;
  } else {
    r.status = fl.status;
    if (r.status == 0) r.failure = CallFailure::bad_response;
    if (fl.error != partner::Error::none) r.error_code = std::string(partner::error_code_name(fl.error));
    r.object_id = std::move(fl.object_id);  // the partner's completion reads no object id
    r.replayed = fl.replayed;
  }
  f.drop_ref(flight);  // last: the slot may be reused from here on
  return r;
}

void PartnerFront::on_execute(void* self, std::uint64_t i) {
  auto& f = *static_cast<PartnerFront*>(self);
  Flight& fl = f.flights_[i];
  partner::Reply& reply = f.reply_;
  f.model_.execute(fl.call_id, f.loop_.now(), reply);
  fl.status = reply.status;
  fl.error = reply.error;
  fl.object_id.assign(reply.charge.id);  // a copy: both strings keep their capacity
  fl.replayed = reply.replayed;
}

void PartnerFront::on_complete(void* self, std::uint64_t i) {
  auto& f = *static_cast<PartnerFront*>(self);
  Flight& fl = f.flights_[i];
  const bool lost = fl.client_gave_up || !f.loop_.alive(fl.owner);
  f.model_.complete(fl.call_id, f.loop_.now(), lost ? partner::Delivery::lost : partner::Delivery::as_planned);
  f.drop_ref(i);
}

nlohmann::json PartnerFront::report(const nlohmann::json& service) {
  const partner::CheckReport rep = model_.check(loop_.now(), partner::ServiceView::from_json(service));
  nlohmann::json violations = nlohmann::json::object();
  for (const auto& [kind, n] : rep.counts) violations[kind] = n;
  nlohmann::json details = nlohmann::json::array();
  constexpr std::size_t kDetailsMax = 200;  // the first ones; counts keep counting
  for (const auto& v : rep.violations) {
    if (details.size() >= kDetailsMax) break;
    details.push_back({{"kind", v.kind}, {"subject", v.subject}, {"detail", v.detail}, {"request_ids", v.request_ids}});
  }
  nlohmann::json notes = nlohmann::json::array();
  for (const auto& v : rep.notes) {
    if (notes.size() >= kDetailsMax) break;
    notes.push_back({{"kind", v.kind}, {"subject", v.subject}, {"detail", v.detail}, {"request_ids", v.request_ids}});
  }
  return {{"calls", calls_},
          {"violations", violations},
          {"max_inflight_per_person", rep.max_inflight_per_person},
          {"episodes", rep.episodes},
          {"corrupted_ms_max", rep.corrupted_ms_max},
          {"corrupted_ms_total", rep.corrupted_ms_total},
          {"details", details},
          {"details_total", rep.violations.size()},
          {"notes", notes}};
}

}  // namespace lockbench::sim
