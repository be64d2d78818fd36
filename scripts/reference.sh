# The reference runs' settings, and every simulator run of the reference.
# Sourced by scripts/demo (which also runs the real-world half) and by the
# reference-results test (tests/reference), which runs reference_sim again and
# checks that it gives, byte for byte apart from provenance, what results/ holds.
# Defines variables and functions only.

# The seeds' incident, as flags both worlds read the same way.
incident=(--scenario switch-primary --maximum-pool-size 10 --connection-timeout 30s --max-threads 200
  --accept-count 100 --partner-latency lognormal:p50=1.5s,p99=4s --rate 20 --keys 200
  --key-dist uniform --lease-ttl 30s --lock-timeout 5s --probe-interval 1s --probe-timeout 1s --seed 1)

# The @Transactional article's checkout: 10 connections, a ~1.8 s charge, 8
# checkouts/s offered (the pool's ceiling is 10 / 1.8 s = 5.6/s), one in ten
# submitted twice (a double click), and a read timeout the slowest charges
# outlive (their effect happens, the client hears nothing). The outbox's and
# split-tx's background pollers: 16 per pod.
checkout=(--scenario checkout --maximum-pool-size 10 --connection-timeout 30s --max-threads 200 --accept-count 100
  --partner-latency lognormal:p50=1.8s,p99=3s --partner-read-timeout 2.5s --partner-max-attempts 3
  --rate 8 --duplicate-share 0.1 --duplicate-gap 500ms --probe-interval 1s --probe-timeout 1s --seed 1
  --outbox-pollers 16)  # the outbox needs 8/s x 1.8 s = 14.4 deliveries in flight

# The advisory-lock article's incidents: a webhook or a claim delivered twice.
twice=(--duplicate-share 1 --duplicate-gap 5ms --rate 2 --duration 60s --keys 1000 --partner-latency fixed:300ms --seed 1)

# PgBouncer in pool_mode transaction (4 server connections for 10 pooled ones).
pgbouncer=(--scenario switch-primary --maximum-pool-size 10 --pgbouncer transaction --pgbouncer-pool-size 4
  --rate 20 --keys 20 --partner-latency lognormal:p50=300ms,p99=1s --lock-timeout 2s --duration 5s --seed 1
  --strategy advisory-session:pinned,advisory-session:pooled,advisory-xact:try,row-lease)

# Redis lease and lease renewal: a 300 ms TTL against 600 ms of calls, one hot key.
leases=(--scenario switch-primary --rate 8 --duration 20s --keys 1 --key-dist hot --partner-latency fixed:300ms
  --fencing enforce --seed 1)
lease_strategies=row-lease,row-lease:renew,redis-lease,redis-lease:fenced,redis-lease:renew

# etcd lease: the same point at etcd's scale. Its TTLs are whole seconds (at
# least 1, and etcd revokes an expired lease up to 500 ms late), so a 1 s TTL
# against 2 s of calls: the same 1:2 as the Redis runs' 300 ms against 600 ms.
etcd_leases=(--scenario switch-primary --rate 8 --duration 20s --keys 1 --key-dist hot --partner-latency fixed:1s
  --fencing enforce --lease-ttl 1s --seed 1)
etcd_strategies=etcd-lease,etcd-lease:fenced,etcd-lease:renew

# The row-lease article's "not mapped as an entity field": a second code path
# (a profile edit) loads the lock row's entity and saves it 200 ms later, 4 per
# second; row-lease:orm-mapped writes the stale lock columns back, row-lease
# leaves them alone. Two hot users, a TTL the calls never outlive.
writers=(--scenario switch-primary --rate 8 --keys 2 --duration 60s --partner-latency fixed:500ms --probe-interval 0
  --lease-ttl 60s --orm-writer-rate 4 --orm-writer-gap 200ms --seed 33 --strategy row-lease,row-lease:orm-mapped)

# The restart cascade (simulator): the incident on 3 pods with Spring's default
# probes acting (readiness and liveness both on /actuator/health, db indicator
# included; Kubernetes' defaults), every strategy; then the recommended
# liveness, which does not check the database. And a 2-minute partner slowdown
# to 10 s at 6 requests/s (below held-tx's ceiling, so there is a "before" to
# recover to), with and without a circuit breaker that opens on slow calls.
cascade=(--pods 3 --readiness on --duration 10m)
slowdown=(--scenario switch-primary --maximum-pool-size 10 --connection-timeout 30s --max-threads 200
  --accept-count 100 --partner-latency lognormal:p50=1.5s,p99=4s --rate 6 --keys 200 --key-dist uniform
  --lease-ttl 30s --lock-timeout 5s --seed 1 --pods 3 --readiness on --liveness on --duration 10m
  --partner-faults '{"*":[{"kind":"slow","p":1,"ms":10000,"from_ms":120000,"until_ms":240000}]}'
  --strategy held-tx:wait,advisory-xact:try,advisory-session:pooled,row-lease,optimistic,none)
slowdown_breaker=slow-call-duration-threshold=5s,slow-call-rate-threshold=50,sliding-window-size=20,minimum-number-of-calls=10,wait-in-open=10s

# reference_incidents LOCKBENCH OUT WORLD_FLAGS...: the advisory-lock article's
# incidents in one world, into OUT (and OUT-1pod).
reference_incidents() {
  local lockbench=$1 out=$2
  shift 2
  "$lockbench" run "$@" --quiet --scenario payout --pods 2 "${twice[@]}" \
    --strategy none,held-tx,advisory-xact:try,row-lease,synchronized --out "$out" >/dev/null
  "$lockbench" run "$@" --quiet --scenario reward-claim --pods 2 "${twice[@]}" \
    --strategy none,held-tx,advisory-xact:try,advisory-xact:wait,synchronized --out "$out" >/dev/null
  "$lockbench" run "$@" --quiet --scenario reward-claim:unique --pods 2 "${twice[@]}" \
    --strategy none,held-tx --out "$out" >/dev/null
  "$lockbench" run "$@" --quiet --scenario payout --pods 1 "${twice[@]}" \
    --strategy none,synchronized --out "$out-1pod" >/dev/null
}

# reference_sim LOCKBENCH OUT: every simulator run of the reference, full
# detail, into OUT with results/'s layout (sim, sim-crash, sweep, checkout-sim,
# incidents/sim, incidents/sim-1pod, pgbouncer-sim, redis-sim, redis-sim/failover, etcd-sim,
# etcd-sim/leader-change, writers-sim, cascade-sim and its liveness-without-db, slowdown and
# slowdown-breaker).
reference_sim() {
  local lockbench=$1 out=$2
  echo "== simulator: the incident at full scale, 10 minutes of virtual time"
  "$lockbench" run --world sim --strategy all "${incident[@]}" --duration 10m --out "$out/sim"
  echo "== simulator: the pod crashes at 5 minutes (transaction locks die with it, leases wait for their TTL)"
  "$lockbench" run --world sim --strategy advisory-xact,row-lease "${incident[@]}" --duration 10m --crash-at 5m \
    --quiet --out "$out/sim-crash" >/dev/null
  echo "== simulator: offered load sweep (ok-throughput against the Little's-law ceiling)"
  "$lockbench" sweep --world sim --quiet "${incident[@]}" --duration 5m \
    --vary rate=2,4,6,8,12,16,20 --vary strategy=all --out "$out/sweep" >/dev/null
  echo "== simulator: the checkout, 10 minutes of virtual time"
  "$lockbench" run --world sim --strategy all "${checkout[@]}" --duration 10m --out "$out/checkout-sim"
  echo "== simulator: the advisory-lock article's incidents"
  reference_incidents "$lockbench" "$out/incidents/sim" --world sim
  echo "== simulator: PgBouncer in pool_mode transaction"
  "$lockbench" run --world sim "${pgbouncer[@]}" --out "$out/pgbouncer-sim"
  echo "== simulator: Redis lease and lease renewal, and a Redis failover"
  "$lockbench" run --world sim --strategy "$lease_strategies" "${leases[@]}" --lease-ttl 300ms --quiet \
    --out "$out/redis-sim" >/dev/null
  "$lockbench" run --world sim --strategy redis-lease:fenced "${leases[@]}" --lease-ttl 30s --redis-failover-at 10.2s \
    --redis-replication-lag 200ms --quiet --out "$out/redis-sim/failover" >/dev/null
  echo "== simulator: etcd lease and lease renewal, and an etcd leader change (the Redis failover's settings)"
  "$lockbench" run --world sim --strategy "$etcd_strategies" "${etcd_leases[@]}" --quiet \
    --out "$out/etcd-sim" >/dev/null
  "$lockbench" run --world sim --strategy etcd-lease:fenced "${leases[@]}" --lease-ttl 30s --etcd-leader-change-at 10.2s \
    --etcd-election 1s --quiet --out "$out/etcd-sim/leader-change" >/dev/null
  echo "== simulator: a save() that maps the row lease (row-lease:orm-mapped) against row-lease, the same writer"
  "$lockbench" run --world sim "${writers[@]}" --quiet --out "$out/writers-sim" >/dev/null
  echo "== simulator: the restart cascade (3 pods, probes acting), and a partner slowdown with and without a breaker"
  "$lockbench" run --world sim --strategy all "${incident[@]}" "${cascade[@]}" --liveness on --quiet \
    --out "$out/cascade-sim" >/dev/null
  "$lockbench" run --world sim --strategy all "${incident[@]}" "${cascade[@]}" --liveness db=off --quiet \
    --out "$out/cascade-sim/liveness-without-db" >/dev/null
  "$lockbench" run --world sim "${slowdown[@]}" --quiet --out "$out/cascade-sim/slowdown" >/dev/null
  "$lockbench" run --world sim "${slowdown[@]}" --circuit-breaker "$slowdown_breaker" --quiet \
    --out "$out/cascade-sim/slowdown-breaker" >/dev/null
}
