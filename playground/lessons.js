// The playground's lessons: one per story of the two articles, each a preset
// (settings by their command-line names, as the URL hash carries them) and two
// sentences on what to notice. The page runs them through the simulator like
// any other settings; the tests check each against `lockbench run --world sim`.
// A lesson may also carry
// - predict: {question, unit, measure(results) -> number, explain(results) -> text}:
//   asked before the run, the answer kept beside the measured figure;
// - story(results) -> [sentences]: what the run shows, from its own numbers.
// Both read only the results (the JSON `lockbench run --json` prints).
'use strict';
const LESSONS = [
  {
    id: 'ceiling',
    title: '6.6 requests/s',
    settings: { scenario: 'single-call', strategy: 'held-tx', 'maximum-pool-size': '10',
      'partner-latency': 'fixed:1.5s', rate: '13', duration: '10m', seed: '1' },
    notice: 'held-tx keeps its pooled connection through the 1.5 s partner call, so 10 connections serve at most ' +
      '10 / 1.5 s = 6.6 requests/s (Little\'s law), whatever arrives. Watch ok/s flatten at the dashed ceiling ' +
      'while the pool stays full: the requests Tomcat cannot start are queued (max-threads + accept-count) and the ' +
      'rest are rejected; only a few wait out connectionTimeout.',
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

// ---- what the lessons say of a run, from its own numbers ---------------------
// A number as the page prints it: at most 2 decimals, no trailing zeros.
function lessonNumber(v) {
  if (typeof v !== 'number' || !Number.isFinite(v)) return String(v);
  return String(Math.round(v * 100) / 100);
}
function lessonSeconds(ms) { return lessonNumber(ms / 1000) + ' s'; }
function resultOf(results, strategy) {
  return results.find((r) => r.strategy === strategy || r.strategy.startsWith(strategy + ':')) || results[0];
}
function violationsOf(r, kind) { return (r.partner && r.partner.violations && r.partner.violations[kind]) || 0; }
function violationTotal(r) {
  return Object.values((r.partner && r.partner.violations) || {}).reduce((a, n) => a + (n || 0), 0);
}
function lessonOf(id) { return LESSONS.find((l) => l.id === id); }

lessonOf('ceiling').predict = {
  question: 'With 10 connections each held 1.5 s, how many requests a second can held-tx answer ok when 13 arrive each second?',
  unit: 'ok/s',
  measure: (results) => results[0].throughput_ok_per_s,
  explain: (results) => {
    const r = results[0], hold = r.prediction.configured_hold_ms;
    return `Little's law: ${r.pool.size} connections ÷ ${lessonSeconds(hold)} held per request = ` +
      `${lessonNumber(r.pool.size / (hold / 1000))} requests/s, whatever arrives (the measured mean hold, ` +
      `${lessonSeconds(r.prediction.mean_hold_ms)}, gives ${lessonNumber(r.prediction.littles_law_ceiling_per_s)}/s). ` +
      `The other ${lessonNumber(r.offered_per_s - r.throughput_ok_per_s)}/s of the ${lessonNumber(r.offered_per_s)}/s ` +
      'offered cannot be served: they are rejected, or wait and time out.';
  },
};
lessonOf('ceiling').story = (results) => results.map((r) => {
  const s = r.settings, threads = s['max-threads'] * (s.pods || 1), accept = s['accept-count'] * (s.pods || 1);
  return `${r.strategy}: ${lessonNumber(r.throughput_ok_per_s)} ok/s of ${lessonNumber(r.offered_per_s)} offered, at its ` +
    `ceiling of ${lessonNumber(r.prediction.littles_law_ceiling_per_s)}/s. The waiters for a connection level off at ` +
    `${r.pool.pending_max}: Tomcat runs at most ${threads} requests (max-threads), ${r.pool.size} of them holding the ` +
    `connections; ${accept} more queue for a thread (accept-count) and the rest are turned away at once: ` +
    `${r.requests.rejected} rejected. A waiter gets a connection after ${lessonSeconds(r.pool.wait_ms.p50)} at the ` +
    `median, just inside connectionTimeout (${s['connection-timeout']}), so only ${r.requests.pool_timeout} time out.`;
});

lessonOf('burst').predict = {
  question: 'Eight requests for one user arrive at the same instant. How many of them are answered ok?',
  unit: 'ok of 8',
  measure: (results) => results[0].requests.ok,
  explain: (results) => {
    const r = results[0];
    return `All ${r.requests.total} ask for the same lock at once. The first takes it and keeps it through its partner ` +
      `calls (${lessonSeconds(r.latency_ok_ms.p50)}); the other ${r.requests.conflict} find it taken and get a conflict ` +
      `(409) at once: ${r.requests.total} − ${r.requests.ok} = ${r.requests.conflict}. ` +
      results.slice(1).map((o) => `${o.strategy}: the same, ${o.requests.ok} ok and ${o.requests.conflict} conflict.`).join(' ');
  },
};
lessonOf('burst').story = (results) => [
  ...results.map((r) => `${r.strategy}: ${r.requests.ok} ok, ${r.requests.conflict} conflict (denied) of the ` +
    `${r.requests.total} that arrived at once; the one that got in held the lock ${lessonSeconds(r.latency_ok_ms.p50)}.`),
  `The run lasts ${lessonSeconds(results[0].duration_s * 1000)}: the verdict's columns per second divide by that ` +
    `(${results[0].requests.ok} ok in ${lessonSeconds(results[0].duration_s * 1000)} is ` +
    `${lessonNumber(results[0].throughput_ok_per_s)}/s), so read the counts and the requests one by one.`,
];

lessonOf('race').predict = {
  question: 'row-lease\'s lease lives 1 s and a switch\'s partner calls take 1.5 s at the median. How many leases are taken over mid-call in the 2 minutes?',
  unit: 'steals',
  measure: (results) => resultOf(results, 'row-lease').locks.lease_steals,
  explain: (results) => {
    const r = resultOf(results, 'row-lease'), none = resultOf(results, 'none'), s = r.settings;
    return `${r.requests.total} requests arrive for ${s.keys} users. A lease lives ${s['lease-ttl']}, and a switch's ` +
      `calls (${s['partner-latency']}) mostly outlast it: the next request for the same user finds the lease expired and ` +
      `takes it over (${r.locks.lease_steals} steals), and both call the partner at once: ` +
      `${violationsOf(r, 'overlap_person')} overlaps for row-lease, ${violationsOf(none, 'overlap_person')} for none, which excludes nothing.`;
  },
};
lessonOf('race').story = (results) => results.map((r) => `${r.strategy}: ${violationsOf(r, 'overlap_person')} ` +
  `overlapping mutations of one person at the partner, ${violationTotal(r)} violations in all, ` +
  `${r.locks.lease_steals} leases taken over mid-call; ${r.requests.ok} ok of ${r.requests.total}.` +
  (r.trace && r.trace.race ? ` Its first captured race: requests ${r.trace.race.request_ids.join(' and ')} for ${r.trace.race.person}.` : ''));

lessonOf('checkout').predict = {
  question: 'held-tx charges the card inside its transaction. How many charges take money for an order the service does not hold as paid (orphan charges)?',
  unit: 'orphan charges',
  measure: (results) => violationsOf(resultOf(results, 'held-tx'), 'orphan_charge'),
  explain: (results) => {
    const r = resultOf(results, 'held-tx'), f = r.db_faults || {};
    const fixes = results.filter((o) => o !== r);
    return `Of held-tx's ${r.requests.total} requests, ${f.commit_fail || 0} COMMITs failed and ${f.conn_lost || 0} ` +
      `connections were lost (--db-faults); a transaction rolled back after the charge leaves the money taken and no ` +
      `paid order: ${violationsOf(r, 'orphan_charge')} orphan charges, and ${violationsOf(r, 'double_charge')} orders charged twice. ` +
      fixes.map((o) => `${o.strategy}: ${violationsOf(o, 'orphan_charge')}`).join(', ') + ': the charge is outside the transaction.';
  },
};
lessonOf('checkout').story = (results) => results.map((r) => {
  const f = r.db_faults || {};
  return `${r.strategy}: ${violationsOf(r, 'orphan_charge')} orphan charges, ${violationsOf(r, 'double_charge')} double ` +
    `charges; ${r.requests.error} requests answered error (the faults over all its transactions: ${f.commit_fail || 0} ` +
    `failed COMMITs, ${f.conn_lost || 0} lost connections)` + (r.requests.pool_timeout + r.requests.rejected ? `, ${r.requests.pool_timeout} pool timeouts ` +
    `and ${r.requests.rejected} rejected (it holds a connection through the 1.8 s charge)` : '') +
    (violationsOf(r, 'orphan_charge') === 0 ? (r.requests.error ? ': each error charged nothing unrecorded, so a retry is safe.' : '.')
      : ': each orphan is a customer charged for an order that failed.');
});

lessonOf('pgbouncer').story = (results) => results.map((r) => `${r.strategy}: ${violationsOf(r, 'overlap_person')} ` +
  `overlaps, ${violationTotal(r)} violations, ${r.requests.ok} ok, ${r.requests.conflict} conflict, ` +
  `${r.requests.pool_timeout} pool timeouts of ${r.requests.total}; ${r.locks.handed_to_stranger} locks found on a ` +
  'backend another client was handed.');

lessonOf('failover').story = (results) => {
  const r = results[0], store = (r.sim && r.sim.lease_store) || {};
  const lines = [`At ${store.failover_at_s} s the Redis primary failed over to a replica ${store.replication_lag_ms} ms ` +
    `behind: ${store.leases_lost_on_failover} lease held then was lost (marked on the charts' time axis).`];
  const race = r.trace && r.trace.race;
  if (!race) return lines.concat([`No two holders overlapped in this run (${violationTotal(r)} violations).`]);
  const acquired = (id) => (r.trace.events || []).find((e) => e.request_id === id && e.step === 'lock.acquire');
  const [a, b] = race.request_ids.map(acquired).sort((x, y) => x.start_ms - y.start_ms);
  const token = (e) => (/token (\d+)/.exec(e.detail) || [])[1];
  const end = (id) => Math.max(...(r.trace.events || []).filter((e) => e.request_id === id && e.step.startsWith('partner.')).map((e) => e.end_ms));
  lines.push(`Request ${a.request_id} took the lease at ${lessonSeconds(a.end_ms)} (fencing token ${token(a)}), inside the ` +
    `${store.replication_lag_ms} ms the replica never got; request ${b.request_id} took it again after the failover, at ` +
    `${lessonSeconds(b.end_ms)}, while ${a.request_id} was still calling the partner (until ${lessonSeconds(end(a.request_id))}).`);
  if (token(a) === undefined || token(b) === undefined)
    return lines.concat([`The trace does not name their fencing tokens: ${violationsOf(r, 'overlap_person')} overlap_person, ` +
      `${violationsOf(r, 'stale_token_rejected')} stale tokens rejected.`]);
  lines.push(token(a) === token(b)
    ? `The INCR counter went back with the failover: both holders got the same fencing token, ${token(b)}, so the ` +
      `partner's fence (--fencing ${r.settings.fencing}) refused neither: ${violationsOf(r, 'overlap_person')} ` +
      `overlap_person, ${violationsOf(r, 'stale_token_rejected')} stale tokens rejected.`
    : `The two holders got fencing tokens ${token(a)} and ${token(b)}: ${violationsOf(r, 'stale_token_rejected')} stale tokens rejected.`);
  return lines;
};

lessonOf('pinning').story = (results) => results.map((r) => `${r.strategy}: ${lessonNumber(r.throughput_ok_per_s)} ` +
  `ok/s of ${lessonNumber(r.offered_per_s)} offered, ok p99 ${lessonSeconds(r.latency_ok_ms.p99)}, ` +
  `${r.requests.ok} ok of ${r.requests.total}.`);

lessonOf('incident').story = (results) => results.map((r) => `${r.strategy}: ${lessonNumber(r.throughput_ok_per_s)} ok/s ` +
  `of ${lessonNumber(r.offered_per_s)}` + (r.strategy_info && r.strategy_info.holds_connection_during_call
  ? ` (holds a connection through the call: ceiling ${lessonNumber(r.prediction.littles_law_ceiling_per_s)}/s)` : '') +
  `, ${violationTotal(r)} violations, ${r.requests.pool_timeout} pool timeouts, ${r.requests.rejected} rejected.`);

// The verdict's columns (report/sections.cpp verdict_table), one line each.
const VERDICT_LEGEND = {
  'strategy': 'the lock strategy (and its variant) the run used.',
  'world': 'sim: the simulator (this page); real: PostgreSQL and a partner service.',
  'scenario': 'the request flow (switch-primary, checkout, ...).',
  'offered /s': 'requests that arrived per second.',
  'exclusion held?': 'pass when the partner saw no two mutations of one person (or order) at once; fail counts the overlaps the partner\'s oracle caught.',
  'pool-safe?': 'pass when no request gave up waiting for a connection (pool timeouts) and the health probes got one.',
  'ok /s of offered': 'requests answered ok per second, and the share of what arrived.',
  'ok /s of Little\'s-law ceiling': 'for a strategy that holds a connection through the partner call: ok/s against pool size ÷ mean hold, the most it can serve.',
  'ok p99': 'the time 99 % of the ok requests took, from their intended start.',
  'lease steals': 'leases that expired during their holder\'s call and were taken by another request.',
  'leaked locks': 'locks never released (a session lock left on a pooled connection).',
  'orphan effects': 'effects at the partner the service does not hold: a charge for an order that is not paid (orphan_charge), a charge made twice.',
  'pods (probes acting)': 'restarts and requests lost when Kubernetes\' probes pulled or killed pods.',
  'recovery': 'time from the end of a partner fault window until ok/s and p99 are back.',
};
