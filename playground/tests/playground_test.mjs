// The playground as a user meets it: build/playground/index.html opened from
// file:// in Debian's headless Chromium, driven through puppeteer-core.
//   node playground_test.mjs CHECK     (one check per ctest test; exit 77 = skipped)
// Environment: LOCKBENCH_PLAYGROUND (the page), LOCKBENCH_BIN (the native
// lockbench), LOCKBENCH_PUPPETEER_DIR (a folder with node_modules/puppeteer-core),
// CHROMIUM (default /usr/bin/chromium).
// Every check also fails on a page error, a console error or a request for
// anything that is not the page itself: the page fetches nothing.
import { createRequire } from 'node:module';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LESSONS, deepDiff } from './support.mjs';
import { classroomChecks } from './classroom_checks.mjs';

const SKIP = 77;
const pagePath = process.env.LOCKBENCH_PLAYGROUND;
const bin = process.env.LOCKBENCH_BIN;
const chromium = process.env.CHROMIUM || '/usr/bin/chromium';
const puppeteerDir = process.env.LOCKBENCH_PUPPETEER_DIR;

function skip(why) {
  console.log('skipped: ' + why);
  process.exit(SKIP);
}
if (!fs.existsSync(chromium)) skip(chromium + ' is not installed');
if (!puppeteerDir || !fs.existsSync(path.join(puppeteerDir, 'node_modules', 'puppeteer-core')))
  skip('puppeteer-core is not installed (scripts/test installs it with npm into the build folder)');
if (!pagePath || !fs.existsSync(pagePath)) skip('the playground page was not built (em++ missing?)');
const puppeteer = createRequire(path.join(puppeteerDir, 'package.json'))('puppeteer-core');

const pageUrl = 'file://' + pagePath;
const failures = [];
function expect(ok, what) {
  if (!ok) failures.push(what);
  console.log((ok ? 'ok - ' : 'FAILED - ') + what);
}

async function withBrowser(body) {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'lockbench-playground-'));
  const browser = await puppeteer.launch({
    executablePath: chromium,
    headless: true,
    userDataDir: profile,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-dev-shm-usage'],
  });
  try {
    return await body(browser);
  } finally {
    await browser.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
}

// A page with every problem recorded: errors, console errors, requests elsewhere.
async function open(browser, hash = '', url = pageUrl) {
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 1800 });
  const problems = [];
  page.on('pageerror', (e) => problems.push('page error: ' + e.message));
  page.on('console', (m) => { if (m.type() === 'error') problems.push('console error: ' + m.text()); });
  await page.setRequestInterception(true);
  page.on('request', (r) => {
    const u = r.url();
    if (u.startsWith(url) || u.startsWith('blob:') || u.startsWith('data:')) r.continue();
    else { problems.push('fetched ' + u); r.abort(); }
  });
  await page.goto(url + hash, { timeout: 120000 });  // over HTTP the 2.6 MB page took 20-40 s to load on the busy test VM
  await page.waitForFunction(() => document.body.dataset.state && document.body.dataset.state !== 'idle' ||
    document.getElementById('status').textContent === 'ready', { timeout: 60000 });
  return { page, problems };
}

async function finished(page) {
  await page.waitForFunction(() => ['done', 'error'].includes(document.body.dataset.state), { timeout: 120000 });
  return page.evaluate(() => document.body.dataset.state);
}

async function runLesson(page, id) {
  await page.click(`#lessons button[data-lesson="${id}"]`);
  await synced(page);
  await page.click('#run');
  await page.waitForFunction(() => document.body.dataset.state === 'running' || document.body.dataset.state === 'done');
  return finished(page);
}

// The controls show the plan of the settings in force (the page sets body[data-synced]).
async function synced(page) {
  await page.waitForFunction(() => document.body.dataset.synced === '1' && !window.lockbenchPlayground.page.running,
    { timeout: 60000 });
}
const given = (page) => page.evaluate(() => ({ ...window.lockbenchPlayground.page.given }));
const pageResults = (page) => page.evaluate(() => JSON.parse(document.getElementById('result').textContent));

// The native simulator's results for the same settings: `lockbench run --world sim --json`.
function nativeResults(settings) {
  const args = ['run', '--world', 'sim'];
  for (const [k, v] of Object.entries(settings)) args.push('--' + k, v);
  args.push('--json', '--quiet');
  return JSON.parse(execFileSync(bin, args, { encoding: 'utf8', maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'ignore'] }));
}
function withoutProvenance(results) {
  return results.map((r) => { const c = { ...r }; delete c.provenance; return c; });
}

const checks = {
  // Every lesson, Run pressed: #result equals the native run of the command
  // line the page prints (counts exactly, the whole JSON apart from provenance).
  async EveryLessonEqualsTheNativeRunOfItsCommandLine(browser) {
    const { page, problems } = await open(browser);
    for (const lesson of LESSONS) {
      const state = await runLesson(page, lesson.id);
      expect(state === 'done', `${lesson.id}: the run finished (state ${state})`);
      const settings = await given(page);
      const command = await page.$eval('#command', (e) => e.textContent);
      expect(command.startsWith('lockbench run --world sim --'), `${lesson.id}: the page shows ${command}`);
      const mine = await pageResults(page);
      const native = nativeResults(settings);
      expect(mine.length === native.length && mine.length > 0, `${lesson.id}: ${mine.length} results, native ${native.length}`);
      for (let i = 0; i < Math.min(mine.length, native.length); i++) {
        expect(JSON.stringify(mine[i].requests) === JSON.stringify(native[i].requests),
          `${lesson.id} ${native[i].strategy}: requests ${JSON.stringify(mine[i].requests)}`);
        expect(mine[i].provenance && mine[i].provenance.lockbench_version === native[i].provenance.lockbench_version,
          `${lesson.id} ${native[i].strategy}: the same lockbench version in provenance`);
      }
      const diff = deepDiff(withoutProvenance(mine), withoutProvenance(native));
      expect(diff === null, `${lesson.id}: the same JSON as native apart from provenance${diff ? ' (first difference: ' + diff + ')' : ''}`);
    }
    expect(problems.length === 0, 'no page error, console error or fetch: ' + problems.join('; '));
  },

  // The charts are drawn: a screenshot of each canvas has many colours, a blank one has one.
  async ChartsAreDrawnAfterARun(browser) {
    const { page, problems } = await open(browser, '#' + new URLSearchParams({ speed: '0' }));
    await page.evaluate(() => window.scrollTo(0, 0));
    const blank = await page.$eval('#chart-ok', (c) => c.toDataURL().length);
    expect((await runLesson(page, 'ceiling')) === 'done', 'the 6.6 requests/s lesson ran');
    await page.waitForFunction(() => !window.lockbenchPlayground.page.playback, { timeout: 30000 });
    for (const id of ['chart-ok', 'chart-pool', 'chart-outcomes', 'chart-p99']) {
      const png = await (await page.$('#' + id)).screenshot();
      const colours = await page.evaluate((cid) => {
        const c = document.getElementById(cid), g = c.getContext('2d');
        const d = g.getImageData(0, 0, c.width, c.height).data, seen = new Set();
        for (let i = 0; i < d.length; i += 16) seen.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
        return seen.size;
      }, id);
      expect(png.length > 3000 && colours > 20, `${id}: drawn (${png.length} bytes of PNG, ${colours} colours)`);
    }
    const drawn = await page.$eval('#chart-ok', (c) => c.toDataURL().length);
    expect(drawn > 2 * blank, `chart-ok grew from ${blank} to ${drawn} bytes once drawn`);
    const ceiling = await page.evaluate(() => window.lockbenchPlayground.page.results[0].prediction.littles_law_ceiling_per_s);
    const ok = await page.evaluate(() => window.lockbenchPlayground.page.results[0].throughput_ok_per_s);
    expect(ceiling > 6 && ceiling < 7 && ok > 0.9 * ceiling && ok <= ceiling * 1.01,
      `the lesson shows the ceiling: ${ok} ok/s against ${ceiling} (10 connections / 1.5 s)`);
    expect(problems.length === 0, 'no page error, console error or fetch: ' + problems.join('; '));
  },

  // A slider moves its number, the hash and the command line; the next run uses it.
  async MovingASliderMovesItsNumberTheLinkAndTheRun(browser) {
    const { page, problems } = await open(browser, '#' + new URLSearchParams({ speed: '0' }));
    await page.click('#lessons button[data-lesson="ceiling"]');
    const before = await page.$eval('#out-maximum-pool-size', (e) => e.textContent);
    const slider = await page.$('#in-maximum-pool-size');
    const box = await slider.boundingBox();
    await page.mouse.click(box.x + box.width * 0.9, box.y + box.height / 2);
    const after = await page.$eval('#out-maximum-pool-size', (e) => e.textContent);
    expect(before === '10' && Number(after) > 30, `the pool size's number moved from ${before} to ${after}`);
    const hash = await page.evaluate(() => location.hash);
    expect(hash.includes('maximum-pool-size=' + after), `the hash holds it: ${hash}`);
    const command = await page.$eval('#command', (e) => e.textContent);
    expect(command.includes('--maximum-pool-size ' + after), `the command line holds it: ${command}`);
    await page.click('#run');
    await finished(page);
    const results = await pageResults(page);
    expect(results[0].settings['maximum-pool-size'] === Number(after) && results[0].pool.size === Number(after),
      `the run used it: pool size ${results[0].pool.size}`);
    expect(problems.length === 0, 'no page error, console error or fetch: ' + problems.join('; '));
  },

  // "Copy link", opened in a fresh page (run=1 in it), gives the same settings and the same result.
  async ACopiedLinkReproducesTheSettingsAndTheResult(browser) {
    const first = await open(browser);
    await first.page.click('#lessons button[data-lesson="race"]');
    await first.page.click('#in-seed', { clickCount: 3 });  // select what is there, then type over it
    await first.page.keyboard.type('7');
    await first.page.keyboard.press('Tab');  // the change event
    await first.page.click('#run');
    await finished(first.page);
    await first.page.click('#copy-link');
    const link = await first.page.evaluate(() => document.body.dataset.link);
    const settings = await given(first.page);
    const results = await pageResults(first.page);
    expect(settings.seed === '7' && link.includes('seed=7') && link.includes('run=1'), `the link carries the settings: ${link}`);
    const second = await open(browser, link.slice(link.indexOf('#')));
    await finished(second.page);
    const settings2 = await given(second.page);
    expect(JSON.stringify(settings2) === JSON.stringify(settings), `the same settings back: ${JSON.stringify(settings2)}`);
    const diff = deepDiff(withoutProvenance(await pageResults(second.page)), withoutProvenance(results));
    expect(diff === null, 'the same results' + (diff ? ' (first difference: ' + diff + ')' : ''));
    expect(first.problems.length + second.problems.length === 0,
      'no page error, console error or fetch: ' + first.problems.concat(second.problems).join('; '));
  },

  // A link with a bad setting shows the command line's one line, never a blank page.
  async ABadUrlSettingShowsTheCommandLinesMessage(browser) {
    const cases = [
      { 'maximum-pool-size': '0', strategy: 'held-tx' },
      { rate: 'fast' },
      { strategy: 'no-such-strategy' },
      { 'no-such-setting': '1' },
      { rate: '5', burst: '8' },
    ];
    for (const settings of cases) {
      const hash = '#' + Object.entries(settings).map(([k, v]) => k + '=' + encodeURIComponent(v)).join('&') + '&run=1';
      const { page, problems } = await open(browser, hash);
      const state = await finished(page);
      const shown = await page.$eval('#error', (e) => (e.hidden ? '' : e.textContent));
      const args = ['run', '--world', 'sim'];
      for (const [k, v] of Object.entries(settings)) args.push('--' + k, v);
      let native = '';
      try {
        execFileSync(bin, args.concat(['--quiet']), { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      } catch (e) {
        native = String(e.stderr).trim();
        expect(e.status === 2, `${hash}: native exits 2 (got ${e.status})`);
      }
      expect(state === 'error' && shown === native && shown.split('\n').length === 1 && shown.length > 10,
        `${hash}: the page shows '${shown}', the command line '${native}'`);
      const controls = await page.$$eval('#controls .control', (c) => c.length);
      expect(controls > 10, `${hash}: the page is not blank (${controls} controls)`);
      expect(problems.length === 0, 'no page error, console error or fetch: ' + problems.join('; '));
      await page.close();
    }
  },

  // The race's sequence diagram steps one item at a time.
  async TheFirstRaceIsSteppedItemByItem(browser) {
    const { page, problems } = await open(browser, '#' + new URLSearchParams({ speed: '0' }));
    expect((await runLesson(page, 'race')) === 'done', 'the race lesson ran');
    const title = await page.$eval('#sequence-title', (e) => e.textContent);
    expect(/^The race under none: [a-z_]+ on /.test(title), `a race was captured, and the title names it: ${title}`);
    const visible = () => page.$$eval('#sequence svg text, #sequence svg line[marker-end]',
      (es) => es.filter((e) => getComputedStyle(e).visibility !== 'hidden').length);
    const count = () => page.$eval('#step-count', (e) => e.textContent);
    const one = await visible();
    await page.click('#step');
    const two = await visible();
    await page.click('#step');
    const three = await visible();
    const c = await count();
    expect(one < two && two < three && /^3 of [0-9]+$/.test(c), `each step shows more: ${one}, ${two}, ${three} (${c})`);
    await page.click('#step-back');
    expect((await visible()) === two, 'a step back hides the last item again');
    await page.click('#step-all');
    const total = Number((await count()).split(' of ')[1]);
    expect(total > 5 && (await count()) === total + ' of ' + total, `all ${total} steps shown`);
    expect(problems.length === 0, 'no page error, console error or fetch: ' + problems.join('; '));
  },
};

// `lockbench playground --port 0` serves the same page on 127.0.0.1, and a link runs there as from file://.
async function servedPage(body) {
  const server = spawn(bin, ['playground', '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const url = await new Promise((resolve, reject) => {
      let seen = '';
      server.stdout.on('data', (d) => {
        seen += d;
        const m = /playground: (http:\/\/127\.0\.0\.1:[0-9]+\/)/.exec(seen);
        if (m) resolve(m[1]);
      });
      server.on('exit', (code) => reject(new Error('lockbench playground exited with ' + code + ': ' + seen)));
    });
    return await body(url);
  } finally {
    server.kill();
  }
}
checks.TheServedPageRunsALinkAsTheFileDoes = (browser) => servedPage(async (url) => {
  const settings = { strategy: 'held-tx,row-lease', duration: '1m', seed: '3' };
  const hash = '#' + Object.entries(settings).map(([k, v]) => k + '=' + v).join('&') + '&run=1';
  const { page, problems } = await open(browser, hash, url);
  expect((await finished(page)) === 'done', `${url}${hash} ran`);
  const diff = deepDiff(withoutProvenance(await pageResults(page)), withoutProvenance(nativeResults(settings)));
  expect(diff === null, 'the same JSON as native apart from provenance' + (diff ? ' (first difference: ' + diff + ')' : ''));
  // Sent as it is, whatever the client accepts: Debian's cpp-httplib brotli-compressed the 2.6 MB page
  // for a browser's Accept-Encoding, about 14 s of CPU a load (cli/playground.cpp).
  const asked = await fetch(url, { headers: { 'accept-encoding': 'br, gzip' } });
  expect(!asked.headers.get('content-encoding'), `the page is not compressed (got ${asked.headers.get('content-encoding')})`);
  const missing = await fetch(url + 'no-such-file').then((r) => r.status);
  expect(missing === 404, `any other path is 404 (got ${missing})`);
  expect(problems.length === 0, 'no page error, console error or fetch: ' + problems.join('; '));
});

Object.assign(checks, classroomChecks({
  open, finished, synced, runLesson, given, pageResults, nativeResults, withoutProvenance, expect, deepDiff, LESSONS,
  skip, puppeteerDir, pagePath, execFileSync,
}));

const name = process.argv[2];
if (!checks[name]) {
  console.error('playground_test: no check ' + name + ' (checks: ' + Object.keys(checks).join(', ') + ')');
  process.exit(2);
}
try {
  await withBrowser(checks[name]);
} catch (e) {
  failures.push(String(e && e.stack || e));
  console.log('FAILED - ' + (e && e.stack || e));
}
console.log(failures.length ? `${failures.length} failed` : 'all passed');
process.exit(failures.length ? 1 : 0);
