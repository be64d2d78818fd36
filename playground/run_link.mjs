// A playground link run in headless Chromium, its results printed: what
// `chromium --headless --dump-dom` cannot do (it dumps the page before the
// worker has run). Prints the array `lockbench run --json` prints (the page's
// <script id="result">) on stdout; a refused link prints the page's one line
// on stderr and exits 2.
//   node playground/run_link.mjs 'LINK'
// LINK: a page with a hash (file:///…/index.html#strategy=held-tx&…), or only
// the hash ('#strategy=held-tx&duration=1m'), run on build/playground/index.html
// (LOCKBENCH_PLAYGROUND to name another page). run=1 is added when missing.
// Environment: LOCKBENCH_PUPPETEER_DIR (a folder whose node_modules holds
// puppeteer-core; default build/.puppeteer, where scripts/test installs it),
// CHROMIUM (default /usr/bin/chromium), LOCKBENCH_RUN_TIMEOUT_S (default 600).
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
function fail(line, code = 2) {
  process.stderr.write('run_link: ' + line + '\n');
  process.exit(code);
}
const link = process.argv[2];
if (!link || process.argv.length > 3) fail("usage: node playground/run_link.mjs 'LINK' (a page URL with a #hash, or a #hash)");
const puppeteerDir = process.env.LOCKBENCH_PUPPETEER_DIR || path.join(root, 'build', '.puppeteer');
if (!fs.existsSync(path.join(puppeteerDir, 'node_modules', 'puppeteer-core')))
  fail(puppeteerDir + ' has no node_modules/puppeteer-core (npm install puppeteer-core there, or set LOCKBENCH_PUPPETEER_DIR)');
const chromium = process.env.CHROMIUM || '/usr/bin/chromium';
if (!fs.existsSync(chromium)) fail(chromium + ' is not installed (Debian 12: apt-get install chromium, or set CHROMIUM)');
let url = link;
if (link.startsWith('#')) {
  const pagePath = process.env.LOCKBENCH_PLAYGROUND || path.join(root, 'build', 'playground', 'index.html');
  if (!fs.existsSync(pagePath)) fail(pagePath + ' was not built (cmake --build build --target playground; needs em++)');
  url = 'file://' + path.resolve(pagePath) + link;
}
if (!/#/.test(url)) fail("the link has no #hash of settings: '" + link + "'");
if (!/[#&]run=1(&|$)/.test(url)) url += (url.endsWith('#') ? '' : '&') + 'run=1';
const timeoutMs = 1000 * Number(process.env.LOCKBENCH_RUN_TIMEOUT_S || 600);

const puppeteer = createRequire(path.join(puppeteerDir, 'package.json'))('puppeteer-core');
const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'lockbench-run-link-'));
const browser = await puppeteer.launch({
  executablePath: chromium, headless: true, userDataDir: profile,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-dev-shm-usage'],
});
let code = 0;
try {
  const page = await browser.newPage();
  await page.goto(url);
  await page.waitForFunction(() => ['done', 'error'].includes(document.body.dataset.state) &&
    !(window.lockbenchPlayground && window.lockbenchPlayground.page.running), { timeout: timeoutMs });
  const { state, error, result } = await page.evaluate(() => ({
    state: document.body.dataset.state,
    error: document.getElementById('error').hidden ? '' : document.getElementById('error').textContent,
    result: document.getElementById('result').textContent,
  }));
  if (state !== 'done') {
    process.stderr.write((error || 'the page refused the link') + '\n');
    code = 2;
  } else {
    process.stdout.write(result + '\n');
  }
} catch (e) {
  process.stderr.write('run_link: ' + (e && e.message || e) + '\n');
  code = 1;
} finally {
  await browser.close();
  fs.rmSync(profile, { recursive: true, force: true });
}
process.exit(code);
