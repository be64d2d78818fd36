// Scenarios: the business operation whose critical section calls the partner.
// A scenario is one file in scenarios/ and one row in scenarios/registry.cpp:
//   - its tables (TableSpec): which rows exist before the run, which are unique;
//   - its statements, in the world interface's words (Conn::read, insert, update);
//   - its partner calls (core/partner_client.hpp);
//   - what the service's database must agree on with the partner at the end
//     (service_view, judged by the partner's oracle).
// A strategy arranges exclusion and transactions around the three parts:
// read (decide, inside exclusion), external (the partner calls), store.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/context.hpp"
#include "core/world.hpp"

namespace lockbench {

// One table of a scenario. Both worlds keep every scenario table the same way
// (the real world in lockbench.rows, keyed by run, table, key; the simulator in
// its lock manager), so a new table needs no code in either world.
struct TableSpec {
  std::string name;    // "users", "orders", ...: for traces, explain and the SQL a service would write
  bool unique = true;  // a unique key on `key`: a second insert of a key finds the first (ON CONFLICT)
  // Rows for keys 1..settings.keys before the run starts (nullopt: the table starts empty).
  struct Seed {
    std::string text_prefix;  // text = text_prefix + key ("auth0|u" -> "auth0|u7")
    std::int64_t num = 0;
  };
  std::optional<Seed> seed;
};

// What read() decided; what external() and store() act on.
struct Plan {
  Key key = 0;
  Row before;          // the row as read
  Row after;           // what store() writes (text, ref, num)
  std::string target;  // payout: its idempotency key (switch-primary promotes after.text)
  std::int64_t amount = 0;  // payments
  bool noop = false;   // nothing to do (already done, or declined): ok without a partner call
};

// What the partner calls did, as far as the service can tell.
enum class Effect {
  done,     // every call succeeded (or answered "already done")
  refused,  // the partner answered that nothing happened (a 4xx): safe to record as failed
  unknown,  // no answer, a timeout, a 5xx, or a partial effect: it may have happened
};

// How a strategy wants the partner calls made.
struct CallOptions {
  std::optional<std::uint64_t> fencing_token;  // sent as X-Fencing-Token
  bool idempotency_key = false;                 // send the scenario's Idempotency-Key
};

// A row as the service's database holds it at the end of a run.
struct StoredRow {
  Table table = 0;
  Key key = 0;
  Row row;
};

class Scenario {
 public:
  virtual ~Scenario() = default;
  virtual std::string_view name() const = 0;
  virtual const std::vector<TableSpec>& tables() const = 0;
  // The table whose row (table, request key) row locks and leases use.
  virtual Table lock_table() const { return 0; }
  // The advisory-lock key of a request (default: the request's key).
  virtual Key lock_key(const RequestCtx& cx) const;
  // The business string a service would lock on for business id `id`
  // (default "user:<id>"), what --key-hash sha256-64 and hashtext-32 hash.
  virtual std::string lock_string(std::int64_t id) const;
  // The advisory lock's number under --key-hash (base/key_hash.hpp): lock_key()
  // for `scenario`, else the hashed business id. What advisory strategies lock.
  Key hashed_lock_key(const RequestCtx& cx) const;
  // Partner calls in the critical section (for predictions).
  virtual int partner_calls() const = 0;
  // Each request is a new record (an order), so keys come from request ids
  // (duplicate submissions reuse one), not from --keys/--key-dist.
  virtual bool fresh_key_per_request() const { return false; }

  // Reads (and, where the operation creates its record, inserts) and decides
  // what the operation will do: fills `p`, which the caller made fresh
  // (Plan{}). An out-parameter, not a Task<Plan>: a coroutine's result is
  // moved into its promise and out again, and a Plan holds five strings.
  virtual Task<void> read(RequestCtx& cx, Conn& c, Plan& p) = 0;
  // The partner calls; may record what the partner answered in p.after (a charge id).
  virtual Task<Effect> external(RequestCtx& cx, Plan& p, const CallOptions& opt) = 0;
  // Stores the new state under the guard. false when the guard failed (the
  // version changed, the lease is no longer ours): nothing was written.
  virtual Task<bool> store(RequestCtx& cx, Conn& c, const Plan& p, const Guard& guard) = 0;
  // The external effect was refused for certain: record that (an order FAILED).
  // Default: nothing to record.
  virtual Task<void> compensate(RequestCtx& cx, Conn& c, const Plan& p);

  // The partner's reset document for this run (docs/reference/partner-api.md E).
  virtual nlohmann::json partner_reset(const Settings& s) const = 0;
  // What the service's database holds, in the shape the partner's
  // POST /admin/check takes as {"service": ...}: rows that the run changed or
  // inserted (untouched seeded rows agree with the partner by construction).
  virtual nlohmann::json service_view(const std::vector<StoredRow>& rows) const = 0;
};

// The seeded identities of user `key`: "auth0|u<key>" (the initial primary),
// "google-oauth2|u<key>", "github|u<key>", ... (`n` of them).
std::vector<std::string> identities_of(Key key, int n);
// identities_of(key, n) without `current`, entry `choice` modulo their count
// (the identity a promotion targets), built without making the list.
std::string other_identity(Key key, int n, std::string_view current, std::uint64_t choice);

}  // namespace lockbench
