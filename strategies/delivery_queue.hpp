// The delivery queue that the outbox and split-tx's reconciliation keep beside
// the scenario's tables: one row per order (key = the order's key) in the
// strategy's own table kDeliveryTable, and the pollers that work it. A row:
//   text = PENDING | SENT | FAILED, ref = when it was written (ms since the run's
//   start), num = when it is due (ms; negative = done), version = +1 per claim
//   and per result (version / 2 = attempts so far).
// A poller (Strategy::background, --outbox-pollers per pod):
//   BEGIN; claim_due (SELECT ... FOR UPDATE SKIP LOCKED LIMIT 1); read the order;
//   UPDATE the row's due time past the claim lease; COMMIT
//   the scenario's partner call under its Idempotency-Key (no connection held)
//   BEGIN; store (PAID) or compensate (FAILED); the row done; COMMIT
//   (unknown outcome: the row due again after exponential backoff with full jitter)
// A poller that dies leaves its row claimed until the lease ends; then another
// one redelivers it: at least once, and the key makes it charge once. Pollers
// stop when requests are over and no row is left (claimed ones included), or
// --outbox-drain-limit after --duration; what is left counts as undelivered.
#pragma once

#include <string>

#include "core/strategy.hpp"

namespace lockbench {

inline constexpr Table kDeliveryTable = 64;  // beyond any scenario's tables

// A claimed row is due again after this: longer than any one delivery can
// take, so a live poller's row is not taken over; a dead poller's row is redone.
Duration claim_lease(const Settings& s);
// A new row, due `due_in` from now.
Row pending_delivery(World& w, Duration due_in);
// In the caller's transaction: marks the order's row done unless someone
// (another submission, a poller) did; true when this call did it.
Task<bool> settle_delivery(Conn& c, Key order);
// One pod's poller; `queue` names its figures in the result ("outbox",
// "reconcile"): pass an object that outlives the coroutine (it is lazy).
Task<void> deliver_due_rows(RequestCtx& cx, Scenario& sc, const std::string& queue);

}  // namespace lockbench
