// The inside of Partner (private): the stores, the random streams, the calls
// in flight and the oracle's witness state.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/random.hpp"
#include "fake_partner/model/identity_store.hpp"
#include "fake_partner/model/partner.hpp"
#include "fake_partner/model/payments_store.hpp"
#include "fake_partner/model/rate_limiter.hpp"

namespace lockbench::partner {

// Index of each kind in kCheckKinds, for the counters.
enum class Kind : std::uint8_t {
  user_malformed, person_split, lost_promotion, abandoned_effect, overlap_person, flow_interleaving, db_partner_divergence,
  double_charge, order_overlap, orphan_charge, paid_without_charge, overdrawn, balance_divergence,
  duplicate_reward, claim_divergence, retry_overlap, overlap_abandoned, ambiguous_commit, stale_token_rejected
};
inline constexpr int kKindCount = 19;
static_assert(std::size(kCheckKinds) == kKindCount);

// What the door decided before any effect.
enum class Door : std::uint8_t {
  execute,          // the effect runs at execute()
  rate_limited,     // empty bucket: 429 at once
  idem_in_use,      // 409 idempotency_key_in_use
  idem_mismatch,    // 400 idempotency_error
  idem_replay,      // the stored answer, Idempotent-Replayed: true
  idem_too_long,    // 400 key longer than 255
  lock_timeout,     // 429 after waiting for the order's object lock
};

struct InFlight {
  std::uint64_t id = 0;  // 0 = the slot is free
  // The call and its tags as the later phases (execute, complete) read them. What only
  // arrive() reads is taken from the caller's objects and not copied: an identity call's
  // strings (resolved to `user` and `other` on arrival) and the tags' strings (idempotency
  // key and tenant). So here an auth0 call's strings and both tag strings stay empty.
  Call call;
  Tags tags;
  Plan plan;
  Door door = Door::execute;
  IdentityId user = kNoIdentity;   // auth0: path user
  IdentityId other = kNoIdentity;  // auth0: body / path identity
  bool identity_missing = false;   // auth0 link / unlink without provider or user_id: 400
  std::array<int, 2> persons{-1, -1};  // persons this call mutates (-1 = none)
  bool order_execution = false;        // a charge execution counted for order_overlap
  std::string idem_slot;               // idempotency table key reserved by this call ("" = none)
  Reply replay;                        // idem_replay: the stored answer
  RateLimitHeaders rate_limit;
  bool executed = false;
  bool applied = false;
  Duration abandoned_at = Duration::max();  // arrival + the client's timeout (Tags::client_timeout)
  bool late = false;                        // executed at or after abandoned_at: its client had given up
  bool holds_strings = false;  // call's strings may be non-empty (a payments call used the slot last)

  // Reuses the slot for a new call: assignments keep the strings' capacity.
  void start(std::uint64_t call_id, const CallView& c, const Tags& t) {
    id = call_id;
    call.endpoint = c.endpoint;
    call.amount = c.amount;
    // Field by field: most of a Call's strings are empty for any one endpoint, and
    // skipping empty-to-empty assignments keeps the hot path as cheap as before payouts.
    const bool identity_call = is_identity(c.endpoint);
    if (!identity_call || holds_strings) {  // an identity call after another: all empty already
      const auto set = [&](std::string& to, std::string_view from) {
        if (identity_call) from = {};
        if (!to.empty() || !from.empty()) to.assign(from);
      };
      set(call.user_id, c.user_id);
      set(call.provider, c.provider);
      set(call.identity_user_id, c.identity_user_id);
      set(call.currency, c.currency);
      set(call.order_id, c.order_id);
      set(call.charge_id, c.charge_id);
      set(call.account_id, c.account_id);
      set(call.customer_id, c.customer_id);
      set(call.reward, c.reward);
      holds_strings = !identity_call;
    }
    tags.op_id = t.op_id;
    tags.op_step = t.op_step;
    tags.fencing_token = t.fencing_token;
    tags.client_timeout = t.client_timeout;
    plan = Plan{};
    plan.call_id = call_id;
    door = Door::execute;
    user = other = kNoIdentity;
    identity_missing = false;
    persons = {-1, -1};
    order_execution = false;
    idem_slot.clear();
    rate_limit = {};
    executed = applied = late = false;
    abandoned_at = Duration::max();
  }

 private:
  static bool is_identity(Endpoint e) {
    return e == Endpoint::auth0_get || e == Endpoint::auth0_link || e == Endpoint::auth0_unlink;
  }
};

// Calls in flight, in reusable slots. A call id carries its slot in the low
// bits, so finding a call needs no hash map, and ids still grow forever
// (a call forgotten by reset can never be mistaken for a new one).
class CallTable {
 public:
  static constexpr unsigned kSlotBits = 24;  // bound: at most 16M calls in flight
  InFlight& open(const CallView& c, const Tags& t) {
    std::uint32_t slot;
    if (free_.empty()) {
      if (slots_.size() >= (std::size_t{1} << kSlotBits)) throw std::length_error("partner: too many calls in flight");
      slot = static_cast<std::uint32_t>(slots_.size());
      slots_.emplace_back();
    } else {
      slot = free_.back();
      free_.pop_back();
    }
    ++open_;
    InFlight& f = slots_[slot];
    f.start((++seq_ << kSlotBits) | slot, c, t);
    return f;
  }
  InFlight* find(std::uint64_t id) {
    const auto slot = id & ((std::uint64_t{1} << kSlotBits) - 1);
    if (slot >= slots_.size() || slots_[slot].id != id || id == 0) return nullptr;
    return &slots_[slot];
  }
  void close(InFlight& f) {
    free_.push_back(static_cast<std::uint32_t>(f.id & ((std::uint64_t{1} << kSlotBits) - 1)));
    f.id = 0;
    --open_;
  }
  void clear() {
    free_.clear();
    for (std::size_t i = slots_.size(); i-- > 0;) {
      slots_[i].id = 0;
      free_.push_back(static_cast<std::uint32_t>(i));
    }
    open_ = 0;
  }
  std::size_t size() const { return open_; }

 private:
  std::vector<InFlight> slots_;
  std::vector<std::uint32_t> free_;  // free slots, reused last-freed first
  std::uint64_t seq_ = 0;
  std::size_t open_ = 0;
};

// A mutation in flight for a person, as the overlap witness reads it.
struct MutationInFlight {
  std::uint64_t call_id = 0;
  std::uint64_t op = 0;                     // X-Op-Id (0 = untagged)
  Duration abandoned_at = Duration::max();  // arrival + the client's timeout: from then on its client gave up
};

// Per person witness state. Small vectors: a person has a handful of calls in flight.
struct PersonWatch {
  std::vector<MutationInFlight> inflight;  // mutations in flight
  // Promotions between their steps: an applied step-1 unlink whose step-2 link has not applied yet.
  // The person is legitimately split meanwhile, so it is not quiet. Such an op is dropped when a
  // mutation of another operation arrives (it no longer holds the person alone). Bounded by kOpenMax.
  std::vector<std::uint64_t> between_steps;
  // Episode verdicts: what the last quiet point found, so a stretch of corruption counts once.
  bool split_flagged = false;
  // An effect applied after its client gave up, or answered after it (the client never heard of it),
  // has changed the person since it was last found whole: corruption found now is abandoned_effect,
  // not person_split / lost_promotion.
  bool abandoned_effect = false;
  std::uint64_t lost_flagged_op = 0;        // the last promotion found lost (each counts once)
  std::optional<Duration> corrupt_since;    // model time of the quiet point that found it corrupted
  std::optional<std::uint64_t> max_token;                         // highest fencing token seen
  std::uint64_t commit_seq = 0;                                   // applied mutations so far
  static constexpr std::size_t kRecent = 32;
  std::array<std::pair<std::uint64_t, std::uint64_t>, kRecent> recent{};  // ring of (commit seq, op id)
  static constexpr std::size_t kOpenMax = 64;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> open_steps;  // (op id, commit seq at its step 1), bounded
  bool has_promotion = false;  // a step 2 link answered 201
  IdentityId promotion_target = kNoIdentity;
  std::uint64_t promotion_op = 0;
};

struct OrderWatch {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> executing;  // (call id, op id) charge executions in flight
  std::optional<std::uint64_t> max_token;
};

struct Metrics {
  static constexpr int kStatuses = 600;
  std::array<std::array<std::int64_t, kStatuses>, kEndpointCount> answers{};  // [endpoint][status], 0 = no answer
  std::array<std::array<std::int64_t, kFaultKindCount>, kEndpointCount> faults{};  // [endpoint][fault kind]
  std::array<std::int64_t, kEndpointCount> arrivals{};
};

struct Partner::Impl {
  Config cfg;
  IdentityStore ids;
  PaymentsStore pay;
  RateLimiter limiter;
  std::array<Rng, kEndpointCount> latency_rng, fault_rng;  // "latency.<endpoint>", "fault.<endpoint>"
  std::array<DistributionSampler, kEndpointCount> latency;  // cfg.latency[e].dist, prepared by configured()
  std::array<std::uint64_t, kEndpointCount> arrivals_since_reset{};  // the script's "nth"
  std::uint64_t seed_in_use = 1;
  Duration reset_at{0};  // the last reset's `now`: fault windows are measured from it
  CallTable inflight;

  // Oracle.
  std::vector<PersonWatch> persons;  // one per touched person (IdentityStore's person index)
  std::unordered_map<std::string, OrderWatch, StringHash, std::equal_to<>> orders;
  std::array<std::int64_t, kKindCount> counts{};       // accumulated since reset
  std::array<std::int64_t, kKindCount> last_fresh{};   // state-based counts of the last check()
  std::vector<Violation> violations;                   // accumulated, at most CheckReport::kMaxViolations
  std::vector<Violation> notes;                        // retry_overlap, overlap_abandoned, at most CheckReport::kMaxViolations
  std::int64_t max_inflight_per_person = 0;
  std::int64_t episodes = 0;               // quiet points judged
  Duration corrupted_max{0}, corrupted_total{0};  // closed stretches of corruption
  std::vector<std::uint64_t> charge_op, payout_op, credit_op;  // op id behind charges()[i], payouts()[i], credits()[i]

  Metrics metrics;

  void reseed(std::uint64_t seed);
  void configured();  // after cfg changed: what is derived from it
  void clear_run_state();
  void record(Kind k, std::string subject, std::string detail, std::vector<std::uint64_t> ops);
  // Whether record(k, ...) would list the violation (not only count it): hot
  // callers build the subject and detail strings only then, and else count().
  bool listed(Kind k) const {
    if (k == Kind::ambiguous_commit || k == Kind::stale_token_rejected) return false;
    return (is_note(k) ? notes : violations).size() < CheckReport::kMaxViolations;
  }
  void count(Kind k) { ++counts[static_cast<int>(k)]; }
  // Listed apart from violations, in CheckReport::notes.
  static bool is_note(Kind k) { return k == Kind::retry_overlap || k == Kind::overlap_abandoned; }
  std::string person_name(int p) const { return ids.key(ids.person_identities(p).front()); }
  void grow_persons() {
    if (persons.size() < ids.person_count()) persons.resize(ids.person_count());
  }
  std::vector<std::uint64_t> recent_ops(int p) const;  // the operations that last changed the person

  // arrive() helpers
  // `now` decides which windowed faults strike (since reset_at).
  FaultPlan draw_fault(Endpoint e, Duration now);
  void resolve(InFlight& f, const CallView& call);
  void decide_door(InFlight& f, const Tags& tags, Duration now);
  void witness_arrival(InFlight& f, Duration now);
  // execute() helpers
  void run_effect(InFlight& f, Reply& r);
  bool stale(const InFlight& f) const;
  void witness_effect(InFlight& f, const Reply& r);
  // complete() helpers
  void person_left(int p, std::uint64_t call_id, Duration now, bool tagged);
  // The episode verdict at a quiet point: person_split and lost_promotion, once per stretch.
  void judge_quiet(int p, Duration now);
  // check() helpers
  void check_service(const ServiceView& view, const std::vector<std::pair<std::string, std::vector<std::string>>>& live,
                     const std::function<void(Kind, std::string, std::string, std::vector<std::uint64_t>)>& add) const;
};

}  // namespace lockbench::partner
