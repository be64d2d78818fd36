// EtcdStore: etcd-lease's lease store on a real etcd (Debian's etcd-server
// 3.4), through its v3 JSON gateway over HTTP (cpp-httplib; keys and values
// base64, 64-bit numbers as JSON strings). Every key of a run starts with its
// prefix ("lockbench/<run-id>/"), so a run touches only its own keys, and
// deletes them at its end. The operations, in etcd's words:
//   acquire  POST /v3/lease/grant {TTL: whole seconds, at least 1}, then ONE
//            POST /v3/kv/txn: IF create_revision(lease/K) == 0 THEN range
//            holder/K, put lease/K = owner with the lease, put holder/K = owner;
//            the txn's revision is lease/K's mod_revision: the fencing token.
//            Refused: the unused lease is revoked (POST /v3/lease/revoke).
//   release  POST /v3/kv/txn: IF value(lease/K) == owner THEN delete lease/K,
//            delete holder/K; then POST /v3/lease/revoke of the request's lease
//   extend   POST /v3/lease/keepalive of the request's lease: false once its TTL is gone
// The holder mark (no lease) names the last acquirer that has not released: an
// acquire that finds one took over an expired lease (a steal when it still works).
// A request's lease ID stays in this process between its acquire and its
// release (a guarded map: the same pod does both). Connections: a small guarded
// pool of httplib clients with connect and read timeouts. Errors become DbError
// here, at the edge.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "real/kv_lease_store.hpp"

namespace httplib {
class Client;
}

namespace lockbench::real {

struct EtcdUrl {
  std::string host;
  int port = 2379;
};
// http://HOST:PORT; throws SettingError naming --etcd and the accepted form.
EtcdUrl parse_etcd_url(const std::string& url);

// The etcd store of a run keyed `run_id`. Throws SettingError (one line naming
// --etcd) when the URL is missing, malformed, or no etcd v3 answers there.
std::unique_ptr<KvLeaseStore> open_etcd_store(const std::string& url, const std::string& run_id, Duration timeout);

class EtcdStore final : public KvLeaseStore {
 public:
  // Asks GET /version once (throws DbError with the reason when it cannot).
  EtcdStore(const std::string& url, std::string prefix, Duration timeout);
  ~EtcdStore() override;
  EtcdStore(const EtcdStore&) = delete;
  EtcdStore& operator=(const EtcdStore&) = delete;

  std::string_view name() const override { return "etcd"; }
  LeaseResult acquire(Key key, std::string_view owner, Duration ttl) override;
  bool release(Key key, std::string_view owner) override;
  bool extend(Key key, std::string_view owner, Duration ttl) override;
  std::int64_t held() override;
  // Leases held by `owners`; the time left is their lease's TTL (POST /v3/lease/timetolive).
  Held held_by(const std::vector<std::string>& owners) override;
  std::int64_t keys() override;
  // DELETE RANGE over the prefix, and revokes the leases this process still knows.
  std::int64_t drop_run_keys() override;
  const std::string& prefix() const { return prefix_; }
  // The TTL etcd is asked for: whole seconds, rounded up, at least 1.
  static std::int64_t ttl_seconds(Duration ttl);

 private:
  // One POST of a JSON body to a gateway path on a pooled client; throws DbError.
  nlohmann::json post(const char* path, const nlohmann::json& body);
  std::unique_ptr<httplib::Client> borrow();
  void give_back(std::unique_ptr<httplib::Client> c);
  std::string key(std::string_view kind, Key k) const;
  void revoke(std::int64_t lease);

  const EtcdUrl url_;
  const std::string prefix_;
  const Duration timeout_;
  std::mutex mu_;
  std::vector<std::unique_ptr<httplib::Client>> idle_;     // GUARDED_BY(mu_)
  std::map<std::pair<Key, std::string>, std::int64_t> leases_;  // GUARDED_BY(mu_): (key, owner) -> lease ID
  static constexpr std::size_t kIdleMax = 64;
  static constexpr int kReleaseAttempts = 3;  // each bounded by the timeout
};

}  // namespace lockbench::real
