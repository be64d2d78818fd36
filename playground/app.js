// The playground page: controls named as the command line names its flags, the
// URL hash that holds them, the worker that runs the WebAssembly simulator,
// and the views of its results (charts played over virtual time, the report's
// verdict row, the report's sequence diagram stepped item by item).
//
// State is the `given` settings: name -> text, only what the user (or the
// lesson, or the link) set; everything else is the command line's default.
// The hash is `given` in order plus the page's own names (run=1 starts a run
// on load, speed=N plays N virtual seconds per second). The page's last
// results go into <script id="result"> as the array `lockbench run --json`
// prints; body[data-state] is idle | running | done | error.
'use strict';

const PAGE_NAMES = ['run', 'speed'];
const page = {
  table: null,          // the binding's settings table, scenarios, strategies
  given: {},            // name -> text
  results: [],
  timings: [],          // [{strategy, ms}] wall time of each run in the worker
  playback: null,
  steps: [], step: 0,
};

// ---- the worker ----------------------------------------------------------
const worker = new Worker(URL.createObjectURL(
  new Blob([document.getElementById('worker-source').textContent], { type: 'text/javascript' })));
const waiting = new Map();
let nextCall = 1;
worker.onmessage = (event) => {
  const { id, answer, ms } = event.data;
  const done = waiting.get(id);
  waiting.delete(id);
  if (done) done({ answer, ms });
};
function call(fn, request) {
  return new Promise((resolve) => {
    const id = nextCall++;
    waiting.set(id, resolve);
    worker.postMessage({ id, fn, request });
  });
}

// ---- the hash ------------------------------------------------------------
function decodeHash(hash) {
  const given = {}, own = {};
  for (const part of hash.replace(/^#/, '').split('&')) {
    if (!part) continue;
    const eq = part.indexOf('=');
    const name = decodeURIComponent(eq < 0 ? part : part.slice(0, eq));
    const value = eq < 0 ? '' : decodeURIComponent(part.slice(eq + 1).replace(/\+/g, ' '));
    if (PAGE_NAMES.includes(name)) own[name] = value;
    else { delete given[name]; given[name] = value; }  // the last one wins, in its place
  }
  return { given, own };
}
function encodeValue(v) {
  return encodeURIComponent(v).replace(/%3A/gi, ':').replace(/%2C/gi, ',').replace(/%3D/gi, '=');
}
function encodeHash(given, own) {
  const parts = Object.entries(given).map(([k, v]) => k + '=' + encodeValue(v));
  for (const [k, v] of Object.entries(own || {})) parts.push(k + '=' + encodeValue(v));
  return '#' + parts.join('&');
}
function shellWord(v) {
  return /^[A-Za-z0-9_.,:=/@%+-]+$/.test(v) ? v : "'" + v.replace(/'/g, "'\\''") + "'";
}
function commandLine(given) {
  let line = 'lockbench run --world sim';
  for (const [k, v] of Object.entries(given)) line += ' --' + k + ' ' + shellWord(v);
  return line;
}
function speed() { return Number(document.getElementById('speed').value); }
function linkOf(withRun) {
  const own = { speed: String(speed()) };
  if (withRun) own.run = '1';
  return location.href.replace(/#.*$/, '') + encodeHash(page.given, own);
}
function showGiven() {
  history.replaceState(null, '', encodeHash(page.given, { speed: String(speed()) }));
  document.getElementById('command').textContent = commandLine(page.given);
  for (const c of controls) c.show();
}

// ---- controls ------------------------------------------------------------
function defaultOf(name) {
  const row = page.table.settings.find((r) => r.name === name);
  return row ? row.default : '';
}
function valueOf(name) { return name in page.given ? page.given[name] : defaultOf(name); }
function setGiven(name, value) {
  if (value === '' || value === undefined) delete page.given[name];
  else page.given[name] = String(value);
  showGiven();
}
function helpOf(name) {
  const row = page.table.settings.find((r) => r.name === name);
  return row ? row.help : '';
}
const controls = [];
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const c of children) e.append(c);
  return e;
}
function controlBox(name, label, input) {
  return el('div', { class: 'control', title: helpOf(name) }, el('label', { for: input.id || '' }, label), input);
}
// `prefix`: the id's ("in-" for the main controls, "all-" under Every setting).
function textControl(parent, name, label, prefix = 'in-') {
  const input = el('input', { type: 'text', id: prefix + name, name });
  input.addEventListener('change', () => setGiven(name, input.value.trim()));
  parent.append(controlBox(name, label || name, input));
  controls.push({ show() { input.value = name in page.given ? page.given[name] : ''; input.placeholder = defaultOf(name); } });
}
function selectControl(parent, name, label, options) {
  const input = el('select', { id: 'in-' + name, name });
  for (const o of options) input.append(el('option', { value: o.value, title: o.title || '' }, o.label || o.value));
  input.addEventListener('change', () => setGiven(name, input.value));
  parent.append(controlBox(name, label, input));
  controls.push({ show() { input.value = valueOf(name); } });
}
// A slider with its number beside it; `toText`/`fromText` map the slider's
// position to the setting's text (a duration's unit, a share).
function sliderControl(parent, name, label, min, max, step, fromText = Number, toText = String) {
  const input = el('input', { type: 'range', id: 'in-' + name, name, min, max, step });
  const out = el('output', { id: 'out-' + name, for: 'in-' + name });
  input.addEventListener('input', () => {
    out.textContent = toText(Number(input.value));
    setGiven(name, toText(Number(input.value)));
  });
  parent.append(controlBox(name, label, el('div', { class: 'pair' }, input, out)));
  controls.push({
    show() {
      const text = valueOf(name);
      const v = fromText(text);
      if (Number.isFinite(v)) input.value = v;
      out.textContent = text;
    },
  });
}
// Durations in the command line's units, for sliders in milliseconds.
function durationMs(text) {
  const m = /^\s*([0-9.]+)\s*(us|ms|s|m|min|h)?\s*$/.exec(text || '');
  if (!m) return NaN;
  const unit = { us: 0.001, ms: 1, s: 1000, m: 60000, min: 60000, h: 3600000 }[m[2] || 's'];
  return Number(m[1]) * unit;
}
function msText(ms) { return ms >= 1000 && ms % 100 === 0 ? ms / 1000 + 's' : ms + 'ms'; }
// partner-latency as p50 and p99 sliders: lognormal:p50=..,p99=.. (fixed:D reads as p50 = p99 = D).
function latencyQuantiles(text) {
  let m = /^fixed:(.+)$/.exec(text);
  if (m) return [durationMs(m[1]), durationMs(m[1])];
  m = /^lognormal:p50=([^,]+),p99=([^,]+)/.exec(text);
  if (m) return [durationMs(m[1]), durationMs(m[2])];
  return [NaN, NaN];
}
function latencyControl(parent) {
  const name = 'partner-latency';
  const p50 = el('input', { type: 'range', id: 'in-partner-p50', min: 10, max: 5000, step: 10 });
  const p99 = el('input', { type: 'range', id: 'in-partner-p99', min: 10, max: 10000, step: 10 });
  const o50 = el('output', { id: 'out-partner-p50' }), o99 = el('output', { id: 'out-partner-p99' });
  const update = () => {
    const a = Number(p50.value), b = Math.max(Number(p99.value), Math.ceil(a * 1.02));
    setGiven(name, 'lognormal:p50=' + msText(a) + ',p99=' + msText(b));
  };
  p50.addEventListener('input', update);
  p99.addEventListener('input', update);
  const text = el('input', { type: 'text', id: 'in-' + name, name });
  text.addEventListener('change', () => setGiven(name, text.value.trim()));
  parent.append(controlBox(name, 'partner latency p50', el('div', { class: 'pair' }, p50, o50)));
  parent.append(controlBox(name, 'partner latency p99', el('div', { class: 'pair' }, p99, o99)));
  parent.append(controlBox(name, 'partner-latency', text));
  controls.push({
    show() {
      const v = valueOf(name);
      const [a, b] = latencyQuantiles(v);
      if (Number.isFinite(a)) { p50.value = a; o50.textContent = msText(a); }
      if (Number.isFinite(b)) { p99.value = b; o99.textContent = msText(b); }
      text.value = name in page.given ? page.given[name] : '';
      text.placeholder = defaultOf(name);
    },
  });
}
function buildControls() {
  const box = document.getElementById('controls');
  selectControl(box, 'scenario', 'scenario', page.table.scenarios.map((s) => ({ value: s.name, title: s.summary })));
  const strategies = el('datalist', { id: 'strategy-specs' });
  for (const s of ['all', ...page.table.strategies]) strategies.append(el('option', { value: s }));
  document.body.append(strategies);
  textControl(box, 'strategy', 'strategy (one, a,b,c or all)');
  document.getElementById('in-strategy').setAttribute('list', 'strategy-specs');
  sliderControl(box, 'maximum-pool-size', 'maximumPoolSize', 1, 50, 1);
  sliderControl(box, 'connection-timeout', 'connectionTimeout', 250, 60000, 250, durationMs, msText);
  sliderControl(box, 'rate', 'rate (requests/s)', 0.5, 100, 0.5);
  latencyControl(box);
  sliderControl(box, 'partner-read-timeout', 'read timeout', 100, 30000, 100, durationMs, msText);
  sliderControl(box, 'partner-max-attempts', 'attempts', 1, 6, 1);
  sliderControl(box, 'lease-ttl', 'lease TTL', 100, 60000, 100, durationMs, msText);
  sliderControl(box, 'pods', 'pods', 1, 8, 1);
  sliderControl(box, 'duplicate-share', 'duplicate share', 0, 1, 0.05);
  textControl(box, 'crash-at', 'crash at (T or none)');
  textControl(box, 'pause-at', 'pause at (T or none)');
  textControl(box, 'pause-for', 'pause for');
  textControl(box, 'duration', 'duration');
  textControl(box, 'seed', 'seed');
  const all = document.getElementById('all-settings');
  for (const row of page.table.settings) textControl(all, row.name, row.name, 'all-');
}
function buildLessons() {
  const nav = document.getElementById('lessons');
  for (const lesson of LESSONS) {
    const b = el('button', { type: 'button', 'data-lesson': lesson.id }, lesson.title);
    b.addEventListener('click', () => chooseLesson(lesson));
    nav.append(b);
  }
}
function chooseLesson(lesson) {
  page.given = { ...lesson.settings };
  for (const b of document.querySelectorAll('#lessons button')) b.classList.toggle('active', b.dataset.lesson === lesson.id);
  document.getElementById('lesson-notice').textContent = lesson.notice;
  showGiven();
}

// ---- a run ---------------------------------------------------------------
function setState(state, text) {
  document.body.dataset.state = state;
  document.getElementById('status').textContent = text;
}
function showError(line) {
  const box = document.getElementById('error');
  box.textContent = line;
  box.hidden = false;
  setState('error', 'refused');
}
async function run() {
  const button = document.getElementById('run');
  button.disabled = true;
  document.getElementById('error').hidden = true;
  if (page.playback) cancelAnimationFrame(page.playback);
  try {
    const settings = { ...page.given };
    setState('running', 'checking the settings…');
    const plan = (await call('plan', { settings })).answer;
    if (plan.error) return showError(plan.error);
    const results = [], timings = [];
    for (let i = 0; i < plan.strategies.length; i++) {
      const strategy = plan.strategies[i];
      setState('running', 'running ' + strategy + ' (' + (i + 1) + ' of ' + plan.strategies.length + ')…');
      const { answer, ms } = await call('run', { settings, strategy });
      if (answer.error) return showError(answer.error);
      results.push(answer.result);
      timings.push({ strategy, ms });
    }
    page.results = results;
    page.timings = timings;
    document.getElementById('result').textContent = JSON.stringify(results).replace(/</g, '\\u003c');
    const views = (await call('views', { results })).answer;
    showVerdict(views);
    showSequence(views);
    const total = timings.reduce((a, t) => a + t.ms, 0);
    setState('done', results.length + ' run' + (results.length > 1 ? 's' : '') + ' in ' + Math.round(total) +
      ' ms of simulator time in this browser');
    play();
  } finally {
    button.disabled = false;
  }
}

// ---- views ---------------------------------------------------------------
function label(r) { return r.strategy; }
function rowsUpTo(r, t) { return (r.timeline || []).filter((row) => row.t_s <= t); }
function endOf(results) {
  let end = 0;
  for (const r of results) for (const row of r.timeline || []) end = Math.max(end, row.t_s + row.dt_s);
  return end || 1;
}
// [t, count per second] over the rows of the last `window_s` seconds at each row:
// a 1.5 s call seen in 1 s rows alternates 6 and 7 ok/s; the mean shows 6.6.
function perSecondMean(rows, field, window_s) {
  const out = [];
  let from = 0, sum = 0, span = 0;
  for (let i = 0; i < rows.length; i++) {
    sum += rows[i][field];
    span += rows[i].dt_s;
    while (from < i && span - rows[from].dt_s >= window_s) { sum -= rows[from][field]; span -= rows[from].dt_s; from++; }
    out.push([rows[i].t_s + rows[i].dt_s, span > 0 ? sum / span : 0]);
  }
  return out;
}
function drawCharts(t) {
  const results = page.results;
  const xMax = endOf(results);
  const marks = [];
  const offered = results.length ? results[0].offered_per_s : 0;
  if (offered > 0) marks.push({ y: offered, label: 'offered ' + shortNumber(offered) + '/s', color: '#999' });
  results.forEach((r, i) => {
    const c = r.prediction && r.prediction.littles_law_ceiling_per_s;
    if (c && r.strategy_info && r.strategy_info.holds_connection_during_call)
      marks.push({ y: c, label: "Little's-law ceiling " + shortNumber(c) + '/s (' + label(r) + ')', color: CHART_COLORS[i % 8] });
  });
  drawLineChart(document.getElementById('chart-ok'), {
    title: 'ok/s (mean of the last 10 s) against offered and the Little\'s-law ceiling', xMax, marks,
    series: results.map((r) => ({ label: label(r), points: perSecondMean(rowsUpTo(r, t), 'ok', 10) })),
  });
  const size = results.length ? results[0].pool.size : 0;
  drawLineChart(document.getElementById('chart-pool'), {
    title: 'pool: active (solid) and waiting (dashed) against its size', xMax,
    marks: size ? [{ y: size, label: 'pool size ' + size, color: '#333' }] : [],
    series: results.flatMap((r, i) => [
      { label: label(r), color: CHART_COLORS[i % 8], points: rowsUpTo(r, t).map((row) => [row.t_s, row.active]) },
      { label: 'waiting', color: CHART_COLORS[i % 8], dash: [4, 3], points: rowsUpTo(r, t).map((row) => [row.t_s, row.pending]) },
    ]),
  });
  drawLineChart(document.getElementById('chart-outcomes'), {
    title: 'refused per second: pool timeouts + rejected (solid), conflicts (dashed)', xMax,
    series: results.flatMap((r, i) => [
      { label: label(r), color: CHART_COLORS[i % 8],
        points: rowsUpTo(r, t).map((row) => [row.t_s, (row.pool_timeout + row.rejected) / row.dt_s]) },
      { label: 'conflict', color: CHART_COLORS[i % 8], dash: [4, 3],
        points: rowsUpTo(r, t).map((row) => [row.t_s, row.conflict / row.dt_s]) },
    ]),
  });
  const finished = t >= xMax;
  drawBarChart(document.getElementById('chart-p99'), {
    title: 'latency p99 of every request, from its intended start' + (finished ? '' : ' (at the end of the run)'),
    unit: 'ms', bars: results.map((r) => ({ label: label(r), value: finished ? r.latency_ms.p99 : 0 })),
  });
}
function play() {
  const xMax = endOf(page.results);
  const perSecond = speed();
  if (!(perSecond > 0)) { drawCharts(xMax); return; }
  let t = 0, last = performance.now();
  const frame = (now) => {
    t += (now - last) / 1000 * perSecond;
    last = now;
    drawCharts(Math.min(t, xMax));
    page.playback = t < xMax ? requestAnimationFrame(frame) : null;
  };
  drawCharts(0);
  page.playback = requestAnimationFrame(frame);
}
function showVerdict(views) {
  const box = document.getElementById('verdict');
  box.textContent = '';
  if (views.error) { box.textContent = views.error; return; }
  const table = el('table', { id: 'verdict-table' });
  table.append(el('tr', {}, ...views.verdict.headers.map((h) => el('th', {}, h))));
  for (const row of views.verdict.rows) table.append(el('tr', {}, ...row.map((c) => el('td', {}, c))));
  box.append(table);
  // The counts beside it, as the result holds them.
  const kinds = ['total', 'ok', 'conflict', 'pool_timeout', 'rejected', 'error'];
  const counts = el('table', { id: 'counts-table' });
  counts.append(el('tr', {}, el('th', {}, 'strategy'), ...kinds.map((k) => el('th', {}, 'requests.' + k)),
    el('th', {}, 'violations')));
  for (const r of page.results) {
    const v = r.partner && r.partner.violations ? Object.values(r.partner.violations).reduce((a, n) => a + (n || 0), 0) : '–';
    counts.append(el('tr', {}, el('td', {}, r.strategy), ...kinds.map((k) => el('td', {}, String(r.requests[k]))),
      el('td', {}, String(v))));
  }
  box.append(el('h3', {}, 'Requests'), counts);
}
// The report's SVG, one item (a call, an answer, a note) per step.
function showSequence(views) {
  const box = document.getElementById('sequence');
  const svg = views.race_svg || views.pool_svg;
  document.getElementById('sequence-title').textContent = views.race_svg
    ? '(the first captured race: ' + views.race_strategy + ')'
    : views.pool_svg ? '(no race captured; pool exhaustion: ' + views.pool_strategy + ')' : '';
  if (!svg) { box.innerHTML = '<p class="quiet">No race and no pool timeout captured in these runs.</p>'; page.steps = []; showStep(0); return; }
  box.innerHTML = svg;
  const items = box.querySelectorAll("rect[fill='#fff5c2'], text[font-size='11'], line[marker-end]");
  const steps = [];
  let open = null;
  for (const e of items) {
    const isNote = e.tagName === 'rect';
    if (isNote || !open || (open.note && e.getAttribute('text-anchor') === 'middle')) {
      open = { note: isNote, elements: [] };
      steps.push(open);
    }
    open.elements.push(e);
    if (e.tagName === 'line') open = null;
  }
  page.steps = steps;
  showStep(1);
}
function showStep(n) {
  page.step = Math.max(0, Math.min(n, page.steps.length));
  page.steps.forEach((s, i) => s.elements.forEach((e) => { e.style.visibility = i < page.step ? 'visible' : 'hidden'; }));
  document.getElementById('step-count').textContent = page.steps.length ? page.step + ' of ' + page.steps.length : '';
}

// ---- start ---------------------------------------------------------------
async function start() {
  setState('idle', 'loading the simulator…');
  const table = (await call('settings', {})).answer;
  page.table = table;
  buildLessons();
  buildControls();
  const { given, own } = decodeHash(location.hash);
  if (own.speed) document.getElementById('speed').value = own.speed;
  page.given = Object.keys(given).length ? given : { ...LESSONS[0].settings };
  const lesson = LESSONS.find((l) => JSON.stringify(l.settings) === JSON.stringify(page.given));
  if (lesson) chooseLesson(lesson); else showGiven();
  document.getElementById('run').addEventListener('click', run);
  document.getElementById('speed').addEventListener('change', showGiven);
  document.getElementById('step').addEventListener('click', () => showStep(page.step + 1));
  document.getElementById('step-back').addEventListener('click', () => showStep(page.step - 1));
  document.getElementById('step-all').addEventListener('click', () => showStep(page.steps.length));
  document.getElementById('copy-link').addEventListener('click', async () => {
    const link = linkOf(true);
    document.body.dataset.link = link;
    try { await navigator.clipboard.writeText(link); setState(document.body.dataset.state, 'link copied'); }
    catch (e) { setState(document.body.dataset.state, 'link: ' + link); }
  });
  window.addEventListener('resize', () => page.results.length && drawCharts(endOf(page.results)));
  setState('idle', 'ready');
  if (own.run === '1') run();
}
window.lockbenchPlayground = { page, call, commandLine, linkOf };
start();
