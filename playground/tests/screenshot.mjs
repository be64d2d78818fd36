// The playground's screenshots in the docs: docs/playground.png (the page
// with the 6.6 requests/s lesson run, as the README's front page shows it) and
// docs/playground/LESSON.png, one per lesson, each the parts of the page that
// tell that lesson's story after its run (the rest of the page hidden for the
// picture only).
//   node playground/tests/screenshot.mjs [DOCS_DIR]   (environment as for playground_test.mjs)
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const docs = process.argv[2] || 'docs';
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
const synced = () => page.waitForFunction(() => document.body.dataset.synced === '1' && !window.lockbenchPlayground.page.running, { timeout: 60000 });
async function runLesson(id, answer) {
  await page.click(`#lessons button[data-lesson="${id}"]`);
  await synced();
  if (answer !== undefined && await page.$('#predict-answer')) await page.type('#predict-answer', String(answer));
  await page.click('#run');
  await page.waitForFunction(() => document.body.dataset.state === 'done' && !window.lockbenchPlayground.page.running, { timeout: 120000 });
}
const written = [];
function wrote(file) { written.push(file + ' (' + fs.statSync(file).size + ' bytes)'); }

// The front page's picture: the top of the page down to the charts.
await runLesson('ceiling');
const bottom = await page.$eval('#charts', (e) => e.getBoundingClientRect().bottom + window.scrollY);
await page.screenshot({ path: path.join(docs, 'playground.png'), clip: { x: 0, y: 0, width: 1200, height: Math.ceil(bottom) + 8 } });
wrote(path.join(docs, 'playground.png'));

// Per lesson: what shows its story (ids of the page), and the answer typed before the run.
const shots = {
  ceiling: { answer: 13, show: ['#predict', '#story', '#chart-ok', '#chart-pool'] },
  burst: { answer: 2, show: ['#predict', '#story', '#per-request-section'] },
  race: { answer: 0, show: ['#predict', '#sequence-section'], height: 900 },
  checkout: { answer: 0, show: ['#predict', '#story', '#sequence-section'], steps: 20, height: 1000 },
  pgbouncer: { show: ['#story', '#verdict-section'] },
  failover: { show: ['#story', '#chart-events', '#chart-ok', '#chart-pool'] },
  pinning: { show: ['#story', '#chart-ok', '#chart-pool'] },
  incident: { show: ['#story', '#chart-ok', '#chart-outcomes'] },
};
fs.mkdirSync(path.join(docs, 'playground'), { recursive: true });
await page.setViewport({ width: 900, height: 1000 });
for (const [id, shot] of Object.entries(shots)) {
  await runLesson(id, shot.answer);
  if (shot.steps) for (let i = 0; i < shot.steps; i++) await page.click('#step');
  // Everything hidden but the lesson's mark, its sentence and the parts named.
  await page.evaluate((show) => {
    const keep = new Set(['#lesson-mark', '#lesson-notice', ...show].map((s) => document.querySelector(s)).filter(Boolean));
    const hide = (e) => {
      for (const c of [...e.children]) {
        if (keep.has(c)) continue;
        if ([...keep].some((k) => c.contains(k))) hide(c); else c.dataset.shotHidden = '1';
      }
    };
    hide(document.body);
    const style = document.createElement('style');
    style.id = 'shot-style';
    style.textContent = '[data-shot-hidden] { display: none !important; } #charts { grid-template-columns: 1fr; }';
    document.head.append(style);
  }, shot.show);
  await page.evaluate(() => window.dispatchEvent(new Event('resize')));
  const height = await page.evaluate(() => document.documentElement.scrollHeight);
  const file = path.join(docs, 'playground', id + '.png');
  await page.screenshot({ path: file, clip: { x: 0, y: 0, width: 900, height: Math.min(height, shot.height || 1100) } });
  wrote(file);
  await page.evaluate(() => {
    document.getElementById('shot-style').remove();
    for (const e of document.querySelectorAll('[data-shot-hidden]')) delete e.dataset.shotHidden;
  });
}
await browser.close();
fs.rmSync(profile, { recursive: true, force: true });
console.log('wrote ' + written.join(', '));
