// The playground's screenshots in the docs: docs/playground.png (the page
// with the 6.6 requests/s lesson run, as the README's front page shows it) and
// docs/playground/LESSON.png, one per lesson, each the parts of the page that
// tell that lesson's story after its run (the rest of the page hidden for the
// picture only). Each is written as an indexed PNG (a palette of 256: 40
// greys and a 6×6×6 colour cube), a third or less of Chromium's RGB PNG, so the
// docs stay small.
//   node playground/tests/screenshot.mjs [DOCS_DIR]   (environment as for playground_test.mjs)
import { createRequire } from 'node:module';
import zlib from 'node:zlib';
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

// ---- an indexed PNG of the page's pixels ----
const PALETTE = [];
for (let i = 0; i < 40; i++) { const v = Math.round(i * 255 / 39); PALETTE.push([v, v, v]); }
for (let r = 0; r < 6; r++) for (let g = 0; g < 6; g++) for (let b = 0; b < 6; b++) PALETTE.push([r * 51, g * 51, b * 51]);
function indexOf(r, g, b) {
  if (Math.max(r, g, b) - Math.min(r, g, b) < 14) return Math.round((r + g + b) / 3 * 39 / 255);
  return 40 + Math.round(r / 51) * 36 + Math.round(g / 51) * 6 + Math.round(b / 51);
}
const CRC = Array.from({ length: 256 }, (_, n) => { let c = n; for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1; return c >>> 0; });
function chunk(type, data) {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'ascii');
  let c = 0xffffffff;
  for (const byte of Buffer.concat([head.subarray(4), data])) c = CRC[(c ^ byte) & 0xff] ^ (c >>> 8);
  const tail = Buffer.alloc(4);
  tail.writeUInt32BE((c ^ 0xffffffff) >>> 0, 0);
  return Buffer.concat([head, data, tail]);
}
async function shoot(file, clip) {
  const png = await page.screenshot({ clip, encoding: 'base64' });
  const { w, h, rgba } = await page.evaluate(async (data) => {
    const img = new Image();
    img.src = 'data:image/png;base64,' + data;
    await img.decode();
    const c = document.createElement('canvas');
    c.width = img.width; c.height = img.height;
    const g = c.getContext('2d');
    g.drawImage(img, 0, 0);
    const d = g.getImageData(0, 0, c.width, c.height).data;
    let bin = '';
    for (let i = 0; i < d.length; i += 0x8000) bin += String.fromCharCode.apply(null, d.subarray(i, i + 0x8000));
    return { w: c.width, h: c.height, rgba: btoa(bin) };
  }, png);
  const px = Buffer.from(rgba, 'base64');
  const raw = Buffer.alloc((w + 1) * h);
  for (let y = 0; y < h; y++) {
    raw[y * (w + 1)] = 0;
    for (let x = 0; x < w; x++) { const i = (y * w + x) * 4; raw[y * (w + 1) + 1 + x] = indexOf(px[i], px[i + 1], px[i + 2]); }
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0); ihdr.writeUInt32BE(h, 4);
  ihdr[8] = 8; ihdr[9] = 3; ihdr[10] = 0; ihdr[11] = 0; ihdr[12] = 0;  // 8-bit indexed
  fs.writeFileSync(file, Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr),
    chunk('PLTE', Buffer.from(PALETTE.flat())), chunk('IDAT', zlib.deflateSync(raw, { level: 9 })), chunk('IEND', Buffer.alloc(0))]));
  wrote(file);
}

// The front page's picture: the top of the page down to the charts.
await runLesson('ceiling');
const bottom = await page.$eval('#charts', (e) => e.getBoundingClientRect().bottom + window.scrollY);
await shoot(path.join(docs, 'playground.png'), { x: 0, y: 0, width: 1200, height: Math.ceil(bottom) + 8 });

// Per lesson: what shows its story (ids of the page), and the answer typed before the run.
const shots = {
  ceiling: { answer: 13, show: ['#predict', '#story', '#chart-ok', '#chart-pool'] },
  burst: { answer: 2, show: ['#predict', '#story', '#per-request-section'] },
  race: { answer: 0, show: ['#predict', '#sequence-section'], steps: 12, height: 1000 },
  checkout: { answer: 0, show: ['#predict', '#story', '#sequence-section'], steps: 20, height: 1000 },
  pgbouncer: { show: ['#story', '#verdict-section'] },
  failover: { show: ['#story', '#chart-events', '#chart-ok', '#chart-pool'] },
  pinning: { show: ['#story', '#chart-ok', '#chart-pool'] },
  incident: { show: ['#story', '#chart-ok', '#chart-outcomes'] },
};
fs.mkdirSync(path.join(docs, 'playground'), { recursive: true });
await page.setViewport({ width: 860, height: 1000 });
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
  await shoot(file, { x: 0, y: 0, width: 860, height: Math.min(height, shot.height || 1000) });
  await page.evaluate(() => {
    document.getElementById('shot-style').remove();
    for (const e of document.querySelectorAll('[data-shot-hidden]')) delete e.dataset.shotHidden;
  });
}
// Compare A/B: the 6.6/s lesson pinned as A, the pool raised to 20 for B.
await runLesson('ceiling');
await page.click('#pin');
await page.evaluate(() => { document.getElementById('more').open = true; });
await page.click('#all-maximum-pool-size', { clickCount: 3 });
await page.keyboard.type('20');
await page.keyboard.press('Tab');
await synced();
await page.click('#run');
await page.waitForFunction(() => document.body.dataset.state === 'done' && !window.lockbenchPlayground.page.running, { timeout: 120000 });
await page.evaluate(() => { document.getElementById('more').open = false; });
await page.evaluate(() => {
  const keep = new Set(['#compare', '#chart-ok', '#chart-pool', '#verdict'].map((s) => document.querySelector(s)));
  const hide = (e) => { for (const c of [...e.children]) { if (keep.has(c)) continue; if ([...keep].some((k) => c.contains(k))) hide(c); else c.dataset.shotHidden = '1'; } };
  hide(document.body);
  const style = document.createElement('style');
  style.id = 'shot-style';
  style.textContent = '[data-shot-hidden] { display: none !important; } #charts { grid-template-columns: 1fr; } #verdict h3 { margin: 4px 0; }';
  document.head.append(style);
  window.dispatchEvent(new Event('resize'));
});
await shoot(path.join(docs, 'playground', 'compare.png'), { x: 0, y: 0, width: 860, height: Math.min(1000, await page.evaluate(() => document.documentElement.scrollHeight)) });
await page.evaluate(() => {
  document.getElementById('shot-style').remove();
  for (const e of document.querySelectorAll('[data-shot-hidden]')) delete e.dataset.shotHidden;
});
await page.click('#unpin');

// A phone's width (390 px): the 6.6/s lesson after its run, the top of the page down to the first chart.
await page.setViewport({ width: 390, height: 844 });
await runLesson('ceiling');
const phoneBottom = await page.$eval('#chart-ok', (e) => e.getBoundingClientRect().bottom + window.scrollY);
await shoot(path.join(docs, 'playground', 'phone.png'), { x: 0, y: 0, width: 390, height: Math.ceil(phoneBottom) + 40 });
await browser.close();
fs.rmSync(profile, { recursive: true, force: true });
console.log('wrote ' + written.join(', '));
