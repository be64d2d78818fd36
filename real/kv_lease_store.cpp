#include "real/kv_lease_store.hpp"

#include <cstdio>
#include <exception>

#include "real/etcd_store.hpp"
#include "real/redis_store.hpp"

namespace lockbench::real {

std::unique_ptr<KvLeaseStore> open_kv_lease_store(const Settings& s, const StrategyProps& props, const std::string& run_id,
                                                  Duration timeout) {
  if (props.lease_store == LeaseStoreKind::etcd) return open_etcd_store(s.etcd_url, run_id, timeout);
  return open_lease_store(s.redis_url, run_id, timeout);
}

DropRunKeysAtExit::~DropRunKeysAtExit() {
  try {
    if (store_) store_->drop_run_keys();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lockbench: could not remove this run's keys from %s: %s\n",
                 store_->name() == "etcd" ? "etcd" : "Redis", e.what());
  }
}

}  // namespace lockbench::real
