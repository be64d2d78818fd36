// The one list of scenarios. A new scenario is one file plus one row here.
#include "scenarios/registry.hpp"

#include "scenarios/scenarios.hpp"

namespace lockbench {

const std::vector<ScenarioInfo>& scenario_registry() {
  static const std::vector<ScenarioInfo> rows = {
      {.name = "switch-primary",
       .summary = "promote an identity at the identity provider: unlink, then link (two calls)",
       .lock_row_exists = true,
       .takes_idempotency_key = false,
       .make = &make_switch_primary,
       .story =
           "The first article's double-link race. User u<k> has identities auth0|u<k> (the primary), "
           "google-oauth2|u<k>, github|u<k>, ...; a request makes another one primary. The identity provider has "
           "no single call for it: DELETE /users/{primary}/identities/{target}, then POST /users/{target}/identities "
           "{old primary}, then UPDATE users SET primary_identity = $target. Two promotions of one user that "
           "interleave leave the person split over two accounts or with the wrong primary, and the service's row "
           "no longer matches the provider. The partner counts overlap_person (two requests' calls in flight at "
           "once: the lock did not exclude), flow_interleaving, person_split and lost_promotion at every quiet "
           "point, and db_partner_divergence against the stored primaries. A request overlapping its own retry is "
           "retry_overlap, a note, not a violation.",
       .route = "/users/{key}/primary"},
      {.name = "single-call",
       .summary = "one partner call in the critical section: the M/G/c queue of Little's law",
       .lock_row_exists = true,
       .takes_idempotency_key = false,
       .make = &make_single_call,
       .story =
           "One GET /users/{id} inside the critical section and an UPDATE of the user's row: the simplest shape. "
           "With a strategy that holds a pooled connection through the call (held-tx, advisory-xact), the pool is "
           "an M/G/c queue: throughput stops at pool size / mean hold (Little's law; 10 connections and 1.5 s give "
           "6.6 requests/s) and the wait for a connection follows Erlang C below it. The result prints both "
           "predictions beside the measurement; lockbench validate compares both worlds on it.",
       .route = "/calls/{key}"},
      {.name = "checkout",
       .summary = "create the order PAYMENT_PENDING, charge it at the payment provider, mark it PAID",
       .lock_row_exists = false,
       .takes_idempotency_key = true,
       .make = &make_checkout,
       .story =
           "The @Transactional article's CheckoutService. Each request is a new order (o<k>): INSERT it as "
           "PAYMENT_PENDING (ON CONFLICT DO NOTHING: a double click's second submission finds the first one's "
           "order), POST /v1/charges (about 1.8 s in the article), then UPDATE the order to PAID with the charge id. "
           "--duplicate-share resubmits some orders within --duplicate-gap. The partner compares its charges with "
           "the service's orders: double_charge (two live charges for one order), orphan_charge (money taken, no "
           "PAID order holding that charge: a rolled-back transaction after the charge, a lost commit, a retry "
           "without an Idempotency-Key), paid_without_charge, order_overlap. held-tx runs the pool dry at "
           "pool / 1.8 s and leaves orphans under timeouts and --db-faults; split-tx, after-commit and outbox use "
           "the key checkout-order-<id> and stay at 0.",
       .route = "/checkout/{key}"},
      {.name = "payout",
       .summary = "a payout webhook delivered twice to two pods: read the balance, pay out, store the rest (overdrawn)",
       .lock_row_exists = true,
       .takes_idempotency_key = true,
       .make = &make_payout,
       .story =
           "The advisory-lock article's opening incident. Account a<k> opens with 100.00 EUR; a webhook pays out "
           "100.00. Run it with --duplicate-share 1 --duplicate-gap 5ms --pods 2: each webhook is delivered twice, "
           "5 ms apart, and the twin lands on the other pod (requests alternate pods by number). Each delivery reads "
           "the balance, validates it (balance >= amount, else 'already paid out'), calls POST /v1/payouts and "
           "stores balance - amount. Without exclusion both deliveries read 100.00 and both pay out: the partner "
           "counts overdrawn (payouts beyond the opening balance) and balance_divergence (the stored balance is not "
           "opening - paid out). held-tx, advisory-xact and row-lease keep it at 0; synchronized only on one pod. "
           "With an Idempotency-Key (split-tx) the webhook's event id makes the second delivery a replay."},
      {.name = "reward-claim",
       .summary = "the first-time welcome reward: count the claims, credit at the partner, insert the claim (no row before it)",
       .lock_row_exists = false,
       .takes_idempotency_key = false,
       .make = &make_reward_claim,
       .story =
           "The article's 'first-time welcome reward'. SELECT count(*) FROM claims WHERE customer = $1; if 0, credit "
           "25.00 at the partner (POST /v1/customers/c<k>/balance_transactions) and INSERT the claim. No row exists "
           "before the first claim, so held-tx's SELECT ... FOR UPDATE locks nothing (locks.nothing_locked) and two "
           "concurrent claims both credit: duplicate_reward. The claims table has no unique key here, so the "
           "service's own database holds both rows too. advisory-xact locks the business string "
           "'welcome-reward:customer-<k>' hashed to 64 bits with FNV-1a (a collision only makes two customers "
           "share a lock: they serialize, or one gets a spurious 409 with try): 0 duplicates. row-lease is refused: "
           "its lease would live in the row that does not exist."},
      {.name = "reward-claim:unique",
       .summary = "reward-claim with a unique key on the claim: it refuses the second insert, not the second credit",
       .lock_row_exists = false,
       .takes_idempotency_key = false,
       .make = &make_reward_claim_unique,
       .story =
           "reward-claim with the database's own baseline: a unique key on the claim. The second concurrent claim's "
           "INSERT fails with unique_violation (23505, counted as an error: its transaction rolls back), so the "
           "service's database holds one claim. But that request's credit was already granted at the partner: "
           "duplicate_reward stays above 0 and claim_divergence shows 1 claim row against 2 credits. A constraint "
           "protects the table, not the side effect; the lock (or an idempotency key the partner honours) must come "
           "before the call."},
  };
  return rows;
}

const ScenarioInfo& scenario_info(std::string_view name) {
  for (const auto& info : scenario_registry())
    if (info.name == name) return info;
  std::string accepted;
  for (const auto& info : scenario_registry()) accepted += (accepted.empty() ? "" : ", ") + std::string(info.name);
  throw SettingError("--scenario: '" + std::string(name) + "' is unknown (accepted: " + accepted + ")");
}

std::unique_ptr<Scenario> make_scenario(std::string_view name) { return scenario_info(name).make(); }

Effect refused_or_unknown(const PartnerReply& r) {
  if (!r.answered()) return Effect::unknown;
  if (r.status >= 400 && r.status < 500 && r.status != 429 && r.error_code != "idempotency_key_in_use")
    return Effect::refused;
  return Effect::unknown;
}

}  // namespace lockbench
