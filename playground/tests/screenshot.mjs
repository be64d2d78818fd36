// docs/playground.png: the page with the 6.6 requests/s lesson run (charts,
// verdict), as the README's front page shows it.
//   node playground/tests/screenshot.mjs OUT.png   (environment as for playground_test.mjs)
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const out = process.argv[2] || 'docs/playground.png';
const puppeteer = createRequire(path.join(process.env.LOCKBENCH_PUPPETEER_DIR, 'package.json'))('puppeteer-core');
const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'lockbench-playground-shot-'));
const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true, userDataDir: profile,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-dev-shm-usage'],
});
const page = await browser.newPage();
await page.setViewport({ width: 1200, height: 1000 });
await page.goto('file://' + process.env.LOCKBENCH_PLAYGROUND + '#speed=0');
await page.waitForFunction(() => document.getElementById('status').textContent === 'ready', { timeout: 60000 });
await page.click('#lessons button[data-lesson="ceiling"]');
await page.click('#run');
await page.waitForFunction(() => document.body.dataset.state === 'done', { timeout: 60000 });
const bottom = await page.$eval('#charts', (e) => e.getBoundingClientRect().bottom + window.scrollY);
await page.screenshot({ path: out, clip: { x: 0, y: 0, width: 1200, height: Math.ceil(bottom) + 8 } });
await browser.close();
fs.rmSync(profile, { recursive: true, force: true });
console.log('wrote ' + out + ' (' + fs.statSync(out).size + ' bytes)');
