// What it measures: the WebAssembly simulator's wall time in headless
// Chromium against the native build's for the same runs, as a ratio.
//   node bench/playground_bench.mjs [ROUNDS]     (bench/playground_bench.sh sets the environment)
// Runs: the incident (examples/incident.toml, 10 minutes of virtual time) for
// held-tx and for row-lease, all six strategies side by side, and every lesson
// of the page. Each figure is the best of ROUNDS (default 3).
// - wasm: the page's worker, around the binding's call (a run's own time, no
//   page load), summed over the strategies of the run;
// - native: `lockbench run --world sim --jobs 1 --json` as a process (its
//   start and its JSON output included, so the ratio is slightly kind to wasm
//   for short runs), and with --jobs 2 for the side-by-side row (the CLI's
//   default on this 2-core machine; the page's worker is one thread).
// Goals (issue 30): one strategy's 10 minutes under 1 s, all six under 5 s,
// wasm at most 3x native.
// Then what a student waits for (issue 44), each in a fresh browser (a new
// profile: nothing cached), the median of ROUNDS:
// - cold first Run: the page opened and ready, Run pressed, until the page
//   shows the results (body[data-state] = done: charts, verdict, diagram);
// - cold run=1 link: from opening the link to its results shown (the page's
//   load and the module's compile included);
// - warm Run: Run pressed again in the same page, until the results.
// Goals: a cold first Run of one strategy under 0.5 s, a cold link under 1 s.
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LESSONS } from '../playground/tests/support.mjs';

const rounds = Number(process.argv[2] || 3);
const pagePath = process.env.LOCKBENCH_PLAYGROUND;
const bin = process.env.LOCKBENCH_BIN;
const puppeteer = createRequire(path.join(process.env.LOCKBENCH_PUPPETEER_DIR, 'package.json'))('puppeteer-core');

const runs = [
  { name: 'incident, held-tx (10 min)', settings: { preset: 'incident', strategy: 'held-tx', seed: '1' } },
  { name: 'incident, row-lease (10 min)', settings: { preset: 'incident', strategy: 'row-lease', seed: '1' } },
  { name: 'incident, all six side by side', settings: { preset: 'incident', strategy: 'all', seed: '1' }, jobs: 2 },
  ...LESSONS.filter((l) => l.id !== 'incident').map((l) => ({ name: 'lesson: ' + l.title, settings: l.settings })),
];

function nativeMs(settings, jobs) {
  const args = ['run', '--world', 'sim'];
  for (const [k, v] of Object.entries(settings)) args.push('--' + k, v);
  args.push('--json', '--quiet', '--jobs', String(jobs));
  let best = Infinity;
  for (let i = 0; i < rounds; i++) {
    const t = process.hrtime.bigint();
    execFileSync(bin, args, { stdio: ['ignore', 'ignore', 'ignore'], maxBuffer: 1 << 30 });
    best = Math.min(best, Number(process.hrtime.bigint() - t) / 1e6);
  }
  return best;
}

const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'lockbench-playground-bench-'));
const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true, userDataDir: profile,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-dev-shm-usage'],
});
const page = await browser.newPage();
await page.goto('file://' + pagePath);
await page.waitForFunction(() => document.getElementById('status').textContent === 'ready', { timeout: 60000 });

async function wasmMs(settings) {
  let best = Infinity;
  for (let i = 0; i < rounds; i++) {
    const ms = await page.evaluate(async (s) => {
      const { call } = window.lockbenchPlayground;
      const plan = (await call('plan', { settings: s })).answer;
      if (plan.error) throw new Error(plan.error);
      let total = 0;
      for (const strategy of plan.strategies) {
        const { answer, ms } = await call('run', { settings: s, strategy });
        if (answer.error) throw new Error(answer.error);
        total += ms;
      }
      return total;
    }, settings);
    best = Math.min(best, ms);
  }
  return best;
}

const pad = (s, n) => String(s).padEnd(n);
console.log(pad('run', 52) + pad('wasm ms', 10) + pad('native ms', 11) + 'wasm/native');
for (const r of runs) {
  const w = await wasmMs(r.settings);
  const n1 = nativeMs(r.settings, 1);
  let line = pad(r.name, 52) + pad(w.toFixed(0), 10) + pad(n1.toFixed(0), 11) + (w / n1).toFixed(2);
  if (r.jobs > 1) {
    const n2 = nativeMs(r.settings, r.jobs);
    line += `   (native --jobs ${r.jobs}: ${n2.toFixed(0)} ms, ratio ${(w / n2).toFixed(2)})`;
  }
  console.log(line);
}
await browser.close();
fs.rmSync(profile, { recursive: true, force: true });

// ---- cold and warm, as a student meets them ----
const launchFresh = async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lockbench-playground-cold-'));
  const b = await puppeteer.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true, userDataDir: dir,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-dev-shm-usage'],
  });
  return { b, dir };
};
const hashOf = (settings) => '#' + Object.entries(settings).map(([k, v]) => k + '=' + encodeURIComponent(v)).join('&') + '&speed=0';
const done = (p) => p.waitForFunction(() => document.body.dataset.state === 'done' && !window.lockbenchPlayground.page.running,
  { timeout: 120000, polling: 5 });
async function clickRun(p) {
  await p.waitForFunction(() => document.body.dataset.synced === '1', { timeout: 60000, polling: 5 });
  const t = performance.now();
  await p.click('#run');
  await p.waitForFunction(() => document.body.dataset.state === 'running', { timeout: 60000, polling: 5 }).catch(() => {});
  await done(p);
  return performance.now() - t;
}
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
const studentRuns = [
  { name: 'lesson: 6.6 requests/s (one strategy, 10 min)', settings: LESSONS.find((l) => l.id === 'ceiling').settings },
  { name: 'incident, held-tx (one strategy, 10 min)', settings: { preset: 'incident', strategy: 'held-tx', seed: '1' } },
  { name: 'incident, all six side by side', settings: { preset: 'incident', strategy: 'all', seed: '1' } },
];
console.log('\n' + pad('as a student meets it (median of ' + rounds + ')', 52) + pad('cold Run', 10) + pad('cold link', 11) + 'warm Run (ms)');
for (const r of studentRuns) {
  const cold = [], link = [], warm = [];
  for (let i = 0; i < rounds; i++) {
    let { b, dir } = await launchFresh();
    let p = await b.newPage();
    await p.goto('file://' + pagePath + hashOf(r.settings));
    await p.waitForFunction(() => document.getElementById('status').textContent === 'ready' || document.body.dataset.synced === '1', { timeout: 60000 });
    cold.push(await clickRun(p));
    warm.push(await clickRun(p));
    await b.close();
    fs.rmSync(dir, { recursive: true, force: true });
    ({ b, dir } = await launchFresh());
    p = await b.newPage();
    const t = performance.now();
    await p.goto('file://' + pagePath + hashOf(r.settings) + '&run=1');
    await done(p);
    link.push(performance.now() - t);
    await b.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  console.log(pad(r.name, 52) + pad(median(cold).toFixed(0), 10) + pad(median(link).toFixed(0), 11) + median(warm).toFixed(0));
}
