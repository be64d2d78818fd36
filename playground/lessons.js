// The playground's lessons: one per story of the two articles, each a preset
// (settings by their command-line names, as the URL hash carries them) and two
// sentences on what to notice. The page runs them through the simulator like
// any other settings; the tests check each against `lockbench run --world sim`.
'use strict';
const LESSONS = [
  {
    id: 'ceiling',
    title: '6.6 requests/s',
    settings: { scenario: 'single-call', strategy: 'held-tx', 'maximum-pool-size': '10',
      'partner-latency': 'fixed:1.5s', rate: '13', duration: '10m', seed: '1' },
    notice: 'held-tx keeps its pooled connection through the 1.5 s partner call, so 10 connections serve at most ' +
      '10 / 1.5 s = 6.6 requests/s (Little\'s law), whatever arrives. Watch ok/s flatten at the dashed ceiling ' +
      'while the pool stays full and the waiters pile up until connectionTimeout.',
  },
  {
    id: 'burst',
    title: '8 at once: 1 ok, 7 denied',
    settings: { scenario: 'switch-primary', strategy: 'advisory-xact:try,row-lease', burst: '8', 'key-dist': 'hot',
      seed: '1' },
    notice: 'Eight requests for one user arrive at the same instant. Both locks let exactly one through and answer ' +
      'the other seven with a conflict (the 409 a service returns): the counts are 1 ok, 7 conflict.',
  },
  {
    id: 'race',
    title: 'The double-link race',
    settings: { scenario: 'switch-primary', strategy: 'none,row-lease', rate: '20', keys: '20',
      'partner-latency': 'lognormal:p50=1.5s,p99=4s', 'lease-ttl': '1s', duration: '2m', seed: '1' },
    notice: 'Without a lock (none) two switches of one user interleave their unlink and link calls at the partner; ' +
      'a row lease whose TTL (1 s) is shorter than the call is stolen mid-call and races too. Step through the ' +
      'first captured overlap below.',
  },
  {
    id: 'checkout',
    title: 'The orphan charge and its three fixes',
    settings: { scenario: 'checkout', strategy: 'held-tx,split-tx,after-commit,outbox', rate: '8', duration: '5m',
      'partner-latency': 'fixed:1.8s', 'duplicate-share': '0.2', 'db-faults': 'commit_fail:p=0.05,conn_lost:p=0.02',
      'outbox-pollers': '16', seed: '1' },
    notice: 'held-tx charges the card inside its transaction: when the COMMIT fails or the connection dies after ' +
      'the charge, the money is taken and the order is not paid (orphan_charge). split-tx, after-commit and the ' +
      'outbox keep the charge out of the transaction and stay at 0 orphans.',
  },
  {
    id: 'pgbouncer',
    title: 'Session locks behind PgBouncer',
    settings: { scenario: 'switch-primary', strategy: 'advisory-session:pinned,advisory-session:pooled,advisory-xact:try,row-lease',
      pgbouncer: 'transaction', 'pgbouncer-pool-size': '4', 'maximum-pool-size': '10', rate: '20', keys: '20',
      'partner-latency': 'lognormal:p50=300ms,p99=1s', 'lock-timeout': '2s', duration: '1m', seed: '1' },
    notice: 'In transaction pooling PgBouncer lends a server backend per transaction, so a session advisory lock ' +
      'stays on a backend the next client is handed: even pinned races. advisory-xact stays correct but holds one ' +
      'of the 4 backends through every partner call.',
  },
  {
    id: 'failover',
    title: 'A Redis failover',
    settings: { scenario: 'switch-primary', strategy: 'redis-lease:fenced', fencing: 'enforce', keys: '1',
      'key-dist': 'hot', rate: '8', duration: '20s', 'partner-latency': 'fixed:300ms', 'lease-ttl': '30s',
      'redis-failover-at': '10.2s', 'redis-replication-lag': '200ms', seed: '1' },
    notice: 'At 10.2 s the Redis primary fails over to a replica 200 ms behind: the lease held at that moment is ' +
      'lost, and a second holder gets in while the first is still calling: 1 overlap_person, not refused even with ' +
      'fencing enforced, because the INCR counter went back too and the second holder got the same token.',
  },
  {
    id: 'pinning',
    title: 'Virtual threads pinned by synchronized',
    settings: { scenario: 'switch-primary', strategy: 'synchronized,synchronized:try', 'virtual-threads': 'on',
      jdk: '21', carriers: '2', rate: '10', keys: '1000', 'partner-latency': 'lognormal:p50=1.5s,p99=4s',
      duration: '1m', seed: '1' },
    notice: 'On virtual threads (JDK 21) a request inside synchronized keeps its carrier thread through the partner ' +
      'call, and the pod has 2: synchronized serves about 2 requests per call time (0.6 ok/s of the 10 offered) ' +
      'and its backlog drains for minutes. A ReentrantLock (synchronized:try) does not pin: the offered load is ' +
      'served. On JDK 24 (jdk 24) neither pins.',
  },
  {
    id: 'incident',
    title: 'The incident, six strategies',
    settings: { preset: 'incident', strategy: 'all', seed: '1' },
    notice: 'The seeds\' incident (examples/incident.toml: pool 10, partner p50 1.5 s / p99 4 s, 20 requests/s, ' +
      '10 minutes) for every strategy side by side. Those that hold a connection through the call stop at their ' +
      'Little\'s-law ceiling; those that do not exclude race.',
  },
];
