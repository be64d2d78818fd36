// The playground page: controls named as the command line names its flags, the
// URL hash that holds them, the worker that runs the WebAssembly simulator,
// and the views of its results (charts played over virtual time, the report's
// verdict row, the report's sequence diagrams stepped item by item).
//
// One source of truth: `page.given`, the settings by name -> text that the
// user, the lesson or the link set (everything else is the command line's
// default or the preset's). Everything on screen is drawn from it or from the
// run it produced:
// - the controls show `page.values`, what the binding's plan says the run will
//   use for `given` (a preset's values too), never a guess of their own;
// - the command line and the hash are `given` written out;
// - `page.shown` is the run on screen, with the `given` it ran; when `given`
//   has moved on since, the results say they are an earlier run's; a refused
//   Run clears them;
// - `page.pinned` is run A of a comparison (its `given` in the hash as a.NAME).
// The hash is `given` in order plus the page's own names (run=1 starts a run
// on load, speed=N plays N virtual seconds per second, a.NAME the pinned run).
// The page's last results go into <script id="result"> as the array
// `lockbench run --json` prints; body[data-state] is idle | running | done |
// error, body[data-synced] is 1 once the controls show the plan of `given`.
'use strict';

const PAGE_NAMES = ['run', 'speed'];
const SPEEDS = ['60', '600', '6000', '0'];
const page = {
  table: null,          // the binding's settings table, scenarios, strategies
  given: {},            // name -> text
  values: null,         // name -> text: every setting as the run of `given` uses it (the plan's)
  lesson: null,         // the lesson chosen, while its settings are untouched; else null
  leftLesson: null,     // the lesson the user moved away from by changing a control
  shown: null,          // the run on screen: {given, command, results, views, timings, lesson}
  pinned: null,         // run A of a comparison, the same shape (results null until run)
  running: null,        // the run in progress: {token, before}
  predictions: {},      // lesson id -> the student's answer
  playback: null,
  steps: [], step: 0,
};
// The results the tests and tools read: the last run's, as `lockbench run --json` prints them.
Object.defineProperty(page, 'results', { get: () => (page.shown ? page.shown.results : []) });

// ---- the worker ----------------------------------------------------------
// A run is stopped by terminating its worker; the next call gets a new one.
let worker = null;
const waiting = new Map();
let nextCall = 1;
function newWorker() {
  worker = new Worker(URL.createObjectURL(
    new Blob([document.getElementById('worker-source').textContent], { type: 'text/javascript' })));
  worker.onmessage = (event) => {
    const { id, answer, ms } = event.data;
    const done = waiting.get(id);
    waiting.delete(id);
    if (done) done({ answer, ms });
  };
}
function call(fn, request) {
  if (!worker) newWorker();
  return new Promise((resolve) => {
    const id = nextCall++;
    waiting.set(id, resolve);
    worker.postMessage({ id, fn, request });
  });
}
// Ends every call in flight: they answer {cancelled: true}.
function killWorker() {
  if (worker) worker.terminate();
  worker = null;
  for (const done of waiting.values()) done({ answer: { cancelled: true }, ms: 0 });
  waiting.clear();
}

// ---- the hash ------------------------------------------------------------
// One line for a link the page cannot read, naming the part and what is accepted.
class LinkError extends Error {}
function decodePart(text, part) {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch (e) {
    throw new LinkError("lockbench playground: the link's '" + part.slice(0, 60) +
      "' is not valid percent-encoding (a % must start %XX, e.g. %25 for %)");
  }
}
function decodeHash(hash) {
  const given = {}, own = {}, pinned = {};
  for (const part of hash.replace(/^#/, '').split('&')) {
    if (!part) continue;
    const eq = part.indexOf('=');
    const name = decodePart(eq < 0 ? part : part.slice(0, eq), part);
    const value = eq < 0 ? '' : decodePart(part.slice(eq + 1), part);
    if (PAGE_NAMES.includes(name)) own[name] = value;
    else if (name.startsWith('a.')) { delete pinned[name.slice(2)]; pinned[name.slice(2)] = value; }
    else { delete given[name]; given[name] = value; }  // the last one wins, in its place
  }
  if ('speed' in own && !SPEEDS.includes(own.speed))
    throw new LinkError("lockbench playground: speed='" + own.speed.slice(0, 20) + "' (accepted: " + SPEEDS.join(', ') + ')');
  if ('run' in own && !['0', '1'].includes(own.run))
    throw new LinkError("lockbench playground: run='" + own.run.slice(0, 20) + "' (accepted: 1 to run on load, 0)");
  return { given, own, pinned: Object.keys(pinned).length ? pinned : null };
}
function encodeValue(v) {
  return encodeURIComponent(v).replace(/%3A/gi, ':').replace(/%2C/gi, ',').replace(/%3D/gi, '=');
}
function encodeHash(given, own, pinned) {
  const parts = Object.entries(given).map(([k, v]) => k + '=' + encodeValue(v));
  for (const [k, v] of Object.entries(pinned || {})) parts.push('a.' + k + '=' + encodeValue(v));
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
  return location.href.replace(/#.*$/, '') + encodeHash(page.given, own, page.pinned && page.pinned.given);
}
let writtenHash = '';
function writeHash() {
  writtenHash = encodeHash(page.given, { speed: String(speed()) }, page.pinned && page.pinned.given);
  history.replaceState(null, '', writtenHash);
}

// ---- the state -----------------------------------------------------------
function sameGiven(a, b) { return JSON.stringify(a) === JSON.stringify(b); }
// After any change of `given`: the hash, the command line, the lesson's mark,
// the results' label, then the controls from the plan.
let planSeq = 0;
async function refresh() {
  writeHash();
  document.getElementById('command').textContent = commandLine(page.given);
  showLessonState();
  showStale();
  document.body.dataset.synced = '0';
  for (const c of controls) c.show();
  const seq = ++planSeq;
  const { answer } = await call('plan', { settings: { ...page.given } });
  if (seq !== planSeq || answer.cancelled) return;
  page.values = answer.error ? null : answer.values;
  const box = document.getElementById('error');
  if (answer.error) { box.textContent = answer.error; box.hidden = false; }
  else if (box.dataset.kind !== 'link') box.hidden = true;
  for (const c of controls) c.show();
  document.body.dataset.synced = '1';
}
// The user changed a setting: the lesson is left, a run in flight stops.
function setGiven(name, value) {
  if (page.running) stopRun('stopped: a setting changed');
  if (value === '' || value === undefined) delete page.given[name];
  else page.given[name] = String(value);
  if (page.lesson) { page.leftLesson = page.lesson; page.lesson = null; }
  clearLinkError();
  refresh();
}
function lessonOf(id) { return LESSONS.find((l) => l.id === id) || null; }
function showLessonState() {
  const lesson = lessonOf(page.lesson), left = lessonOf(page.leftLesson);
  for (const b of document.querySelectorAll('#lessons button')) {
    const on = lesson && b.dataset.lesson === lesson.id;
    b.classList.toggle('active', !!on);
    b.setAttribute('aria-pressed', on ? 'true' : 'false');
  }
  const notice = document.getElementById('lesson-notice');
  const mark = document.getElementById('lesson-mark');
  notice.classList.toggle('left', !lesson);
  if (lesson) { mark.textContent = 'Lesson: ' + lesson.title; notice.textContent = lesson.notice; }
  else if (left) {
    mark.textContent = 'Your settings (you changed the lesson "' + left.title + '"; choose it again to go back)';
    notice.textContent = left.notice;
  } else { mark.textContent = 'Your settings'; notice.textContent = ''; }
  document.body.dataset.lesson = lesson ? lesson.id : '';
  showPredict();
}
// The results on screen say which run they are: this one, or an earlier one.
function showStale() {
  const caption = document.getElementById('results-of');
  const stale = page.shown && !sameGiven(page.shown.given, page.given);
  document.body.dataset.stale = stale ? '1' : '0';
  document.getElementById('results').classList.toggle('stale', !!stale);
  if (!page.shown) { caption.textContent = 'No run yet: press Run.'; return; }
  caption.textContent = (stale ? 'Results of an earlier run (the settings have changed since; press Run for these): '
    : 'Results of: ') + page.shown.command;
}
function chooseLesson(lesson) {
  if (page.running) stopRun('stopped: another lesson was chosen');
  page.given = { ...lesson.settings };
  page.lesson = lesson.id;
  page.leftLesson = null;
  clearLinkError();
  refresh();
}

// ---- controls ------------------------------------------------------------
function defaultOf(name) {
  const row = page.table.settings.find((r) => r.name === name);
  return row ? row.default : '';
}
// What a control shows: the plan's value (the preset's, the given, the default).
function valueOf(name) {
  if (page.values && name in page.values) return page.values[name];
  return name in page.given ? page.given[name] : defaultOf(name);
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
// A control with its visible label; `id` is the input the label names.
function controlBox(name, label, id, input) {
  return el('div', { class: 'control', title: helpOf(name) }, el('label', { for: id }, label), input);
}
// `prefix`: the id's ("in-" for the main controls, "all-" under Every setting).
function textControl(parent, name, label, prefix = 'in-') {
  const input = el('input', { type: 'text', id: prefix + name, name, autocomplete: 'off' });
  input.addEventListener('change', () => setGiven(name, input.value.trim()));
  parent.append(controlBox(name, label || name, input.id, input));
  controls.push({ show() { input.value = valueOf(name); } });
}
function selectControl(parent, name, label, options) {
  const input = el('select', { id: 'in-' + name, name });
  for (const o of options) input.append(el('option', { value: o.value, title: o.title || '' }, o.label || o.value));
  input.addEventListener('change', () => setGiven(name, input.value));
  parent.append(controlBox(name, label, input.id, input));
  controls.push({ show() { input.value = valueOf(name); } });
}
// A slider with its number beside it; `toText`/`fromText` map the slider's
// position to the setting's text (a duration's unit, a share).
function sliderControl(parent, name, label, min, max, step, fromText = Number, toText = String) {
  const input = el('input', { type: 'range', id: 'in-' + name, name, min, max, step });
  const out = el('output', { id: 'out-' + name, for: 'in-' + name });
  input.addEventListener('input', () => {
    out.textContent = toText(Number(input.value));
    input.setAttribute('aria-valuetext', out.textContent);
    setGiven(name, toText(Number(input.value)));
  });
  parent.append(controlBox(name, label, input.id, el('div', { class: 'pair' }, input, out)));
  controls.push({
    show() {
      const text = valueOf(name);
      const v = fromText(text);
      if (Number.isFinite(v)) input.value = v;
      out.textContent = text;
      input.setAttribute('aria-valuetext', text);
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
  const o50 = el('output', { id: 'out-partner-p50', for: 'in-partner-p50' });
  const o99 = el('output', { id: 'out-partner-p99', for: 'in-partner-p99' });
  const update = () => {
    const a = Number(p50.value), b = Math.max(Number(p99.value), Math.ceil(a * 1.02));
    setGiven(name, 'lognormal:p50=' + msText(a) + ',p99=' + msText(b));
  };
  p50.addEventListener('input', update);
  p99.addEventListener('input', update);
  const text = el('input', { type: 'text', id: 'in-' + name, name, autocomplete: 'off' });
  text.addEventListener('change', () => setGiven(name, text.value.trim()));
  parent.append(controlBox(name, 'partner latency p50', p50.id, el('div', { class: 'pair' }, p50, o50)));
  parent.append(controlBox(name, 'partner latency p99', p99.id, el('div', { class: 'pair' }, p99, o99)));
  parent.append(controlBox(name, 'partner-latency', text.id, text));
  controls.push({
    show() {
      const v = valueOf(name);
      const [a, b] = latencyQuantiles(v);
      if (Number.isFinite(a)) { p50.value = a; o50.textContent = msText(a); p50.setAttribute('aria-valuetext', msText(a)); }
      if (Number.isFinite(b)) { p99.value = b; o99.textContent = msText(b); p99.setAttribute('aria-valuetext', msText(b)); }
      text.value = v;
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
    const b = el('button', { type: 'button', 'data-lesson': lesson.id, 'aria-pressed': 'false' }, lesson.title);
    b.addEventListener('click', () => chooseLesson(lesson));
    nav.append(b);
  }
}

// ---- predict, then run ---------------------------------------------------
// A lesson with a question asks it before its run; the answer stays beside
// the measured figure, with the arithmetic that explains it (lessons.js).
function showPredict() {
  const box = document.getElementById('predict');
  const lesson = lessonOf(page.lesson);
  box.textContent = '';
  box.hidden = !(lesson && lesson.predict);
  if (box.hidden) return;
  const p = lesson.predict;
  const input = el('input', { type: 'number', id: 'predict-answer', step: 'any', inputmode: 'decimal' });
  if (page.predictions[lesson.id] !== undefined) input.value = page.predictions[lesson.id];
  input.addEventListener('input', () => { page.predictions[lesson.id] = input.value; });
  box.append(el('h2', {}, 'Predict, then run'),
    el('p', {}, el('label', { for: 'predict-answer' }, p.question), ' ', input, ' ', p.unit));
  const shown = page.shown;
  if (shown && shown.lesson === lesson.id && sameGiven(shown.given, page.given)) {
    const measured = p.measure(shown.results);
    const guess = page.predictions[lesson.id];
    box.append(el('p', { id: 'predict-outcome' },
      el('strong', {}, 'You said: '), guess === undefined || guess === '' ? '(no answer)' : String(guess) + ' ' + p.unit,
      el('br'), el('strong', {}, 'Measured: '), shortNumber(measured) + ' ' + p.unit,
      el('br'), el('strong', {}, 'Why: '), p.explain(shown.results)));
  } else {
    box.append(el('p', { class: 'quiet' }, 'Write your answer, then press Run: the measured figure appears here beside it.'));
  }
}

// ---- a run ---------------------------------------------------------------
function setState(state, text) {
  document.body.dataset.state = state;
  document.getElementById('status').textContent = text;
}
function clearLinkError() {
  const box = document.getElementById('error');
  if (box.dataset.kind === 'link') { box.hidden = true; box.dataset.kind = ''; }
}
function showError(line, kind = 'run') {
  const box = document.getElementById('error');
  box.textContent = line;
  box.dataset.kind = kind;
  box.hidden = false;
}
// A refused Run: the line, and nothing of an earlier run beside it.
function refuse(line) {
  showError(line);
  page.shown = null;
  document.getElementById('result').textContent = 'null';
  render();
  setState('error', 'refused');
}
function stopRun(why) {
  const r = page.running;
  if (!r) return;
  page.running = null;
  killWorker();
  planSeq++;  // a plan in flight died with the worker
  document.getElementById('run').disabled = false;
  document.getElementById('stop').disabled = true;
  setState(r.before.state, why + ' after ' + Math.round(performance.now() - r.started) + ' ms');
  document.body.dataset.synced = '1';
}
// Runs `given` strategy by strategy; null when stopped, {error} when refused.
async function runGiven(given, token, label) {
  const plan = (await call('plan', { settings: given })).answer;
  if (page.running !== token || plan.cancelled) return null;
  if (plan.error) return { error: plan.error };
  const results = [], timings = [];
  for (let i = 0; i < plan.strategies.length; i++) {
    const strategy = plan.strategies[i];
    setState('running', label + 'running ' + strategy + ' (' + (i + 1) + ' of ' + plan.strategies.length + ')…');
    const { answer, ms } = await call('run', { settings: given, strategy });
    if (page.running !== token || answer.cancelled) return null;
    if (answer.error) return { error: answer.error };
    results.push(answer.result);
    timings.push({ strategy, ms });
  }
  const views = (await call('views', { results })).answer;
  if (page.running !== token || views.cancelled) return null;
  return { given, command: commandLine(given), results, views, timings, values: plan.values };
}
async function run() {
  if (page.running) return;
  const token = { started: performance.now(), before: { state: document.body.dataset.state } };
  page.running = token;
  document.getElementById('run').disabled = true;
  document.getElementById('stop').disabled = false;
  document.getElementById('error').hidden = true;
  if (page.playback) cancelAnimationFrame(page.playback);
  setState('running', 'checking the settings…');
  const lesson = page.lesson;
  if (page.pinned && !page.pinned.results) {  // a link with both runs: A first
    const a = await runGiven({ ...page.pinned.given }, token, 'A: ');
    if (!a) return;
    if (a.error) { page.running = null; finishButtons(); return refuse('A: ' + a.error); }
    page.pinned = { ...a, lesson: null };
  }
  const b = await runGiven({ ...page.given }, token, page.pinned ? 'B: ' : '');
  if (!b) return;
  page.running = null;
  finishButtons();
  if (b.error) return refuse(b.error);
  page.shown = { ...b, lesson };
  document.getElementById('result').textContent = JSON.stringify(b.results).replace(/</g, '\\u003c');
  const total = b.timings.reduce((a, t) => a + t.ms, 0);
  render();
  setState('done', b.results.length + ' run' + (b.results.length > 1 ? 's' : '') + ' in ' + Math.round(total) +
    ' ms of simulator time in this browser');
}
function finishButtons() {
  document.getElementById('run').disabled = false;
  document.getElementById('stop').disabled = true;
}

// ---- compare A/B ---------------------------------------------------------
function pinA() {
  if (!page.shown) return;
  page.pinned = { ...page.shown, lesson: null };
  writeHash();
  render();
}
function unpin() {
  page.pinned = null;
  writeHash();
  render();
}
// The settings B changed from A, by the plan's values (so a preset and its
// spelled-out values are the same).
function changedSettings(a, b) {
  const out = [];
  const va = a.values || a.given, vb = b.values || b.given;
  for (const name of new Set([...Object.keys(va), ...Object.keys(vb)]))
    if (va[name] !== vb[name]) out.push({ name, a: va[name] === undefined ? '(default)' : va[name], b: vb[name] === undefined ? '(default)' : vb[name] });
  return out;
}
function showCompare() {
  const box = document.getElementById('compare');
  box.textContent = '';
  const pinned = page.pinned, shown = page.shown;
  document.getElementById('pin').disabled = !shown;
  document.getElementById('unpin').hidden = !pinned;
  if (!pinned) { box.hidden = true; return; }
  box.hidden = false;
  if (!pinned.results) { box.append(el('p', {}, 'A (pinned, not run yet): ' + commandLine(pinned.given))); return; }
  box.append(el('p', {}, el('strong', {}, 'A: '), pinned.command));
  if (!shown || shown === pinned || sameGiven(shown.given, pinned.given)) {
    box.append(el('p', { id: 'compare-changed' }, 'Now change one setting and press Run: that run is B, drawn beside A.'));
    return;
  }
  box.append(el('p', {}, el('strong', {}, 'B: '), shown.command));
  const changed = changedSettings(pinned, shown);
  box.append(el('p', { id: 'compare-changed' }, el('strong', {}, 'B changed: '),
    changed.length ? changed.map((c) => '--' + c.name + ' ' + c.a + ' → ' + c.b).join('; ') : 'nothing'));
}

// ---- views ---------------------------------------------------------------
// The runs the charts draw: B over A when a comparison is pinned.
function runSets() {
  const shown = page.shown, pinned = page.pinned;
  if (!shown) return [];
  if (pinned && pinned.results && !sameGiven(pinned.given, shown.given))
    return [{ tag: 'A', run: pinned, alpha: 0.45 }, { tag: 'B', run: shown, alpha: 1 }];
  return [{ tag: '', run: shown, alpha: 1 }];
}
function render() {
  showStale();
  showCompare();
  showVerdict();
  showPerRequest();
  showStory();
  showSequenceChoices();
  showPredict();
  play();
}
function label(tag, r) { return (tag ? tag + ': ' : '') + r.strategy; }
function rowsUpTo(r, t) { return (r.timeline || []).filter((row) => row.t_s <= t); }
function endOf(sets) {
  let end = 0;
  for (const s of sets) for (const r of s.run.results) for (const row of r.timeline || []) end = Math.max(end, row.t_s + row.dt_s);
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
// The events of a run, from its settings and what it recorded: vertical marks
// and spans on every chart over time. [{x, to?, label}] in seconds.
function runEvents(results) {
  const r = results[0];
  if (!r) return [];
  const s = r.settings || {}, out = [];
  const at = (text) => { const m = /^([^:]+)(?::(\d+))?$/.exec(String(text || 'none')); return m && m[1] !== 'none' && m[1] !== 'off' ? durationMs(m[1]) / 1000 : NaN; };
  const crash = at(s['crash-at']);
  if (Number.isFinite(crash)) out.push({ x: crash, label: 'crash' });
  const pause = at(s['pause-at']);
  if (Number.isFinite(pause)) out.push({ x: pause, to: pause + durationMs(String(s['pause-for'])) / 1000, label: 'pause' });
  const failover = at(s['redis-failover-at']);
  if (Number.isFinite(failover)) out.push({ x: failover, label: 'Redis failover' });
  const leader = at(s['etcd-leader-change-at']);
  if (Number.isFinite(leader)) out.push({ x: leader, to: leader + (durationMs(String(s['etcd-election'])) / 1000 || 0), label: 'etcd election' });
  let faults = s['partner-faults'];
  if (typeof faults === 'string') { try { faults = JSON.parse(faults); } catch (e) { faults = null; } }
  for (const [endpoint, list] of Object.entries(faults && typeof faults === 'object' ? faults : {}))
    for (const f of Array.isArray(list) ? list : [])
      if (f && (f.from_ms !== undefined || f.until_ms !== undefined))
        out.push({ x: (f.from_ms || 0) / 1000, to: f.until_ms !== undefined ? f.until_ms / 1000 : undefined,
          label: endpoint + ' ' + (f.kind || 'fault') });
  for (const u of (r.pods && r.pods.unavailable) || []) out.push({ x: u.from_s, to: u.until_s, label: 'no pod ready' });
  return out;
}
function chartSeries(sets, t) {
  const ok = [], pool = [], refused = [], marks = [];
  const first = sets.length ? sets[sets.length - 1].run.results[0] : null;
  if (first && first.offered_per_s > 0)
    marks.push({ y: first.offered_per_s, label: 'offered ' + shortNumber(first.offered_per_s) + '/s', color: '#666' });
  let n = 0;
  for (const { tag, run, alpha } of sets) {
    run.results.forEach((r) => {
      const color = CHART_COLORS[n++ % CHART_COLORS.length];
      const c = r.prediction && r.prediction.littles_law_ceiling_per_s;
      if (c && r.strategy_info && r.strategy_info.holds_connection_during_call && !(r.settings && r.settings.arrival === 'burst'))
        marks.push({ y: c, label: "Little's-law ceiling " + shortNumber(c) + '/s (' + label(tag, r) + ')', color });
      const rows = rowsUpTo(r, t);
      ok.push({ label: label(tag, r), color, alpha, points: perSecondMean(rows, 'ok', 10) });
      pool.push({ label: label(tag, r) + ' active', color, alpha, points: rows.map((row) => [row.t_s, row.active]) },
        { label: 'waiting', color, alpha, dash: [4, 3], points: rows.map((row) => [row.t_s, row.pending]) });
      refused.push({ label: label(tag, r) + ' pool timeouts', color, alpha, points: rows.map((row) => [row.t_s, row.pool_timeout / row.dt_s]) },
        { label: 'rejected', color, alpha, dash: [1, 3], points: rows.map((row) => [row.t_s, row.rejected / row.dt_s]) },
        { label: 'conflicts', color, alpha, dash: [6, 3], points: rows.map((row) => [row.t_s, row.conflict / row.dt_s]) });
    });
  }
  return { ok, pool, refused, marks };
}
function drawCharts(t) {
  const sets = runSets();
  const xMax = endOf(sets);
  const events = sets.length ? runEvents(sets[sets.length - 1].run.results) : [];
  const { ok, pool, refused, marks } = chartSeries(sets, t);
  drawLineChart(document.getElementById('chart-ok'), {
    title: 'ok/s (mean of the last 10 s) against offered and the Little\'s-law ceiling', xMax, marks, events, series: ok,
  });
  // Each run's pool size; A's too when B changed it.
  const sizes = [];
  for (const { tag, run } of sets) {
    const size = run.results[0].pool.size;
    if (size && !sizes.some((m) => m.y === size)) sizes.push({ y: size, label: 'pool size ' + size + (tag ? ' (' + tag + ')' : ''), color: '#333' });
  }
  drawLineChart(document.getElementById('chart-pool'), {
    title: 'pool: active (solid) and waiting (dashed) against its size', xMax, events, marks: sizes, series: pool,
  });
  drawLineChart(document.getElementById('chart-outcomes'), {
    title: 'refused per second: pool timeouts (solid), rejected (dotted), conflicts (dashed)', xMax, events, series: refused,
  });
  const finished = t >= xMax;
  drawBarChart(document.getElementById('chart-p99'), {
    title: 'latency p99 of every request, from its intended start' + (finished ? '' : ' (at the end of the run)'),
    unit: 'ms', bars: sets.flatMap(({ tag, run }) => run.results.map((r) => ({ label: label(tag, r), value: finished ? r.latency_ms.p99 : 0 }))),
  });
}
// The numbers of every chart, in a <details> table beside it (at most 60 rows).
function showChartTables() {
  const sets = runSets();
  const results = sets.flatMap(({ tag, run }) => run.results.map((r) => ({ tag, r })));
  const fill = (id, headers, rows) => {
    const box = document.getElementById(id);
    box.textContent = '';
    if (!results.length) { box.append(el('p', { class: 'quiet' }, 'No run yet.')); return; }
    const table = el('table', {});
    table.append(el('tr', {}, ...headers.map((h) => el('th', { scope: 'col' }, h))));
    for (const row of rows) table.append(el('tr', {}, ...row.map((c) => el('td', {}, String(c)))));
    box.append(el('div', { class: 'scroll', tabindex: '0' }, table));
  };
  const timeRows = (pick) => {
    const longest = results.reduce((a, { r }) => Math.max(a, (r.timeline || []).length), 0);
    const every = Math.max(1, Math.ceil(longest / 60));
    const rows = [];
    for (let i = 0; i < longest; i += every) {
      const any = results.find(({ r }) => r.timeline && r.timeline[i]);
      rows.push([shortNumber(any.r.timeline[i].t_s), ...results.flatMap(({ r }) => pick(r, i))]);
    }
    return rows;
  };
  const mean = (r, i, field) => {
    const rows = (r.timeline || []).slice(0, i + 1), m = perSecondMean(rows, field, 10);
    return m.length ? shortNumber(m[m.length - 1][1]) : '–';
  };
  const cell = (r, i, f) => (r.timeline && r.timeline[i] ? shortNumber(f(r.timeline[i])) : '–');
  fill('table-ok', ['t (s)', ...results.map(({ tag, r }) => label(tag, r) + ' ok/s')], timeRows((r, i) => [mean(r, i, 'ok')]));
  fill('table-pool', ['t (s)', ...results.flatMap(({ tag, r }) => [label(tag, r) + ' active', 'waiting'])],
    timeRows((r, i) => [cell(r, i, (x) => x.active), cell(r, i, (x) => x.pending)]));
  fill('table-outcomes', ['t (s)', ...results.flatMap(({ tag, r }) => [label(tag, r) + ' pool timeouts/s', 'rejected/s', 'conflicts/s'])],
    timeRows((r, i) => [cell(r, i, (x) => x.pool_timeout / x.dt_s), cell(r, i, (x) => x.rejected / x.dt_s), cell(r, i, (x) => x.conflict / x.dt_s)]));
  fill('table-p99', ['strategy', 'p50 ms', 'p99 ms', 'max ms'],
    results.map(({ tag, r }) => [label(tag, r), shortNumber(r.latency_ms.p50), shortNumber(r.latency_ms.p99), shortNumber(r.latency_ms.max)]));
  const events = sets.length ? runEvents(sets[sets.length - 1].run.results) : [];
  document.getElementById('chart-events').textContent = events.length
    ? 'Marked on the charts: ' + events.map((e) => e.label + ' at ' + shortNumber(e.x) + ' s' + (e.to !== undefined ? ' to ' + shortNumber(e.to) + ' s' : '')).join('; ')
    : '';
}
function play() {
  if (page.playback) cancelAnimationFrame(page.playback);
  page.playback = null;
  showChartTables();
  const sets = runSets();
  const xMax = endOf(sets);
  const perSecond = speed();
  if (!sets.length || !(perSecond > 0)) { drawCharts(xMax); return; }
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
// A verdict cell's ✅/❌ as text too: the symbol is decoration, "pass"/"fail" says it.
function verdictCell(text) {
  const m = /^(✅|❌)\s*(.*)$/.exec(text);
  if (!m) return el('td', {}, text);
  const pass = m[1] === '✅';
  return el('td', { class: pass ? 'pass' : 'fail' }, el('span', { 'aria-hidden': 'true' }, m[1] + ' '),
    el('strong', {}, pass ? 'pass' : 'fail'), ' ' + m[2]);
}
function verdictTable(views, id) {
  const table = el('table', { id });
  table.append(el('tr', {}, ...views.verdict.headers.map((h) => el('th', { scope: 'col' }, h))));
  for (const row of views.verdict.rows) table.append(el('tr', {}, ...row.map(verdictCell)));
  return el('div', { class: 'scroll', tabindex: '0' }, table);
}
function countsTable(results, id) {
  const kinds = ['total', 'ok', 'conflict', 'pool_timeout', 'rejected', 'error'];
  const counts = el('table', { id });
  counts.append(el('tr', {}, el('th', { scope: 'col' }, 'strategy'), ...kinds.map((k) => el('th', { scope: 'col' }, 'requests.' + k)),
    el('th', { scope: 'col' }, 'violations')));
  for (const r of results) {
    const v = r.partner && r.partner.violations ? Object.values(r.partner.violations).reduce((a, n) => a + (n || 0), 0) : '–';
    counts.append(el('tr', {}, el('td', {}, r.strategy), ...kinds.map((k) => el('td', {}, String(r.requests[k]))),
      el('td', {}, String(v))));
  }
  return el('div', { class: 'scroll', tabindex: '0' }, counts);
}
function showVerdict() {
  const box = document.getElementById('verdict');
  box.textContent = '';
  const sets = runSets();
  if (!sets.length) { box.append(el('p', { class: 'quiet' }, 'No run yet.')); showLegend([]); return; }
  const grid = el('div', { class: sets.length > 1 ? 'side-by-side' : '' });
  for (const { tag, run } of sets) {
    const part = el('div', {});
    if (tag) part.append(el('h3', {}, 'Run ' + tag));
    if (run.views.error) part.append(el('p', {}, run.views.error));
    else part.append(verdictTable(run.views, tag ? 'verdict-table-' + tag.toLowerCase() : 'verdict-table'));
    if (run.results.some((r) => r.settings && r.settings.arrival === 'burst'))
      part.append(el('p', { class: 'note' }, 'A burst: its requests arrive at one instant, so the columns per second divide by ' +
        'the run\'s short length; read the counts below and the requests one by one.'));
    part.append(el('h3', {}, 'Requests' + (tag ? ' (' + tag + ')' : '')), countsTable(run.results, tag ? 'counts-table-' + tag.toLowerCase() : 'counts-table'));
    grid.append(part);
  }
  box.append(grid);
  showLegend(sets[sets.length - 1].run.views.verdict ? sets[sets.length - 1].run.views.verdict.headers : []);
}
function showLegend(headers) {
  const box = document.getElementById('legend');
  box.textContent = '';
  for (const h of headers) box.append(el('dt', {}, h), el('dd', {}, VERDICT_LEGEND[h] || '(not explained yet)'));
  box.parentElement.hidden = !headers.length;
}
// Per-request outcomes of a short run (a burst): one line per request of the trace.
function showPerRequest() {
  const box = document.getElementById('per-request');
  box.textContent = '';
  const shown = page.shown;
  const small = shown && shown.results.filter((r) => r.requests.total <= 64);
  box.parentElement.hidden = !(small && small.length);
  if (box.parentElement.hidden) return;
  for (const r of small) {
    const outcomes = (r.trace && r.trace.events || []).filter((e) => e.step === 'outcome');
    const counts = {};
    for (const e of outcomes) { const k = String(e.detail).split(' ')[0]; counts[k] = (counts[k] || 0) + 1; }
    const list = el('ol', { class: 'requests', 'aria-label': r.strategy + ': each request\'s outcome' });
    for (const e of outcomes) {
      const kind = String(e.detail).split(' ')[0];
      list.append(el('li', { class: 'outcome-' + kind },
        'request ' + e.request_id + ': ' + kind + ' after ' + shortNumber(e.end_ms - e.start_ms) + ' ms'));
    }
    box.append(el('h3', {}, r.strategy + ': ' + Object.entries(counts).map(([k, n]) => n + ' ' + k).join(', ') +
      ' of ' + r.requests.total), list);
  }
}
// The lesson's story in sentences, from the run's own numbers (lessons.js).
function showStory() {
  const box = document.getElementById('story');
  box.textContent = '';
  const shown = page.shown, lesson = shown && lessonOf(shown.lesson);
  box.hidden = !(lesson && lesson.story);
  if (box.hidden) return;
  box.append(el('h2', {}, 'What this run shows'));
  for (const line of lesson.story(shown.results)) box.append(el('p', {}, line));
}
// The sequence diagrams: the user picks the strategy, and which of its stories
// to step through: its captured race, an orphan charge of its trace (a
// request the partner's oracle flagged), or its pool exhaustion.
function sequenceChoices() {
  const shown = page.shown, out = [];
  if (!shown) return out;
  (shown.views.sequences || []).forEach((s, i) => {
    const r = shown.results[i];
    const before = out.length;
    if (s.race_svg) out.push({ value: 'race:' + i, label: s.strategy + ': a race', kind: 'race', i });
    const orphan = orphanOf(r);
    if (orphan) out.push({ value: 'orphan:' + i, label: s.strategy + ': an orphan charge (request ' + orphan.id + ')', kind: 'orphan', i });
    if (s.pool_svg) out.push({ value: 'pool:' + i, label: s.strategy + ': pool exhaustion', kind: 'pool', i });
    if (out.length === before) out.push({ value: 'none:' + i, label: s.strategy + ': nothing captured', kind: 'none', i });
  });
  return out;
}
// The first orphan charge whose request the trace holds: {id, detail, events}.
function orphanOf(r) {
  const events = (r && r.trace && r.trace.events) || [];
  for (const d of (r && r.partner && r.partner.details) || []) {
    if (d.kind !== 'orphan_charge' || !d.request_ids || !d.request_ids.length) continue;
    const id = d.request_ids[0];
    const mine = events.filter((e) => e.request_id === id).sort((a, b) => a.start_ms - b.start_ms);
    if (mine.some((e) => e.step.startsWith('partner.'))) return { id, detail: d.detail, subject: d.subject, events: mine };
  }
  return null;
}
function showSequenceChoices() {
  const select = document.getElementById('sequence-strategy');
  select.textContent = '';
  const choices = sequenceChoices();
  for (const c of choices) select.append(el('option', { value: c.value }, c.label));
  const pick = choices.find((c) => c.kind === 'race') || choices.find((c) => c.kind === 'orphan') ||
    choices.find((c) => c.kind === 'pool') || choices[0];
  select.disabled = !choices.length;
  if (pick) select.value = pick.value;
  showSequence();
}
function ms1(v) { return (Math.round(v * 10) / 10).toFixed(1) + ' ms'; }
// One request's orphan charge, step by step: its trace, then what the partner's oracle found.
function orphanSteps(r, orphan) {
  const list = el('ol', { id: 'orphan-steps', class: 'steps' });
  for (const e of orphan.events) {
    if (e.step === 'queue' && e.end_ms - e.start_ms < 0.05) continue;
    const at = e.step === 'outcome' ? e.end_ms : e.start_ms;
    const took = e.end_ms - e.start_ms >= 0.05 && e.step !== 'outcome' ? ' (' + ms1(e.end_ms - e.start_ms) + ')' : '';
    const conn = e.conn !== null && e.conn !== undefined ? ' on conn ' + e.conn : '';
    list.append(el('li', { 'data-at': String(at) }, 't=' + ms1(at) + ' ' + e.step + (e.detail ? ' ' + e.detail : '') + conn + took));
  }
  const items = [...list.children].sort((a, b) => Number(a.dataset.at) - Number(b.dataset.at));
  list.textContent = '';
  for (const li of items) list.append(li);
  list.append(el('li', { class: 'oracle' }, 'the partner\'s oracle, at the end of the run: ' + orphan.detail +
    ' (orphan_charge, order ' + orphan.subject + '): the money is taken and the order is not paid by it.'));
  return list;
}
function showSequence() {
  const box = document.getElementById('sequence');
  const choice = sequenceChoices().find((c) => c.value === document.getElementById('sequence-strategy').value);
  const title = document.getElementById('sequence-title');
  const s = choice && page.shown.views.sequences[choice.i];
  const r = choice && page.shown.results[choice.i];
  box.innerHTML = '';
  page.steps = [];
  if (!choice || choice.kind === 'none') {
    title.textContent = '';
    box.append(el('p', { class: 'quiet' }, choice ? s.strategy + ': no race, orphan charge or pool timeout captured in this run.' : 'No run yet.'));
    showStep(0);
    return;
  }
  if (choice.kind === 'orphan') {
    const orphan = orphanOf(r);
    title.textContent = 'An orphan charge under ' + r.strategy + ': request ' + orphan.id + ', order ' + orphan.subject;
    const list = orphanSteps(r, orphan);
    box.append(list);
    page.steps = [...list.children].map((li) => ({ elements: [li] }));
    showStep(1);
    return;
  }
  box.innerHTML = choice.kind === 'race' ? s.race_svg : s.pool_svg;
  const svgTitle = box.querySelector('svg title');
  title.textContent = svgTitle ? svgTitle.textContent : s.strategy;
  box.querySelector('svg').setAttribute('aria-label', title.textContent);
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
  const shownText = page.steps.slice(0, page.step).map((s) => s.elements.filter((e) => e.tagName === 'text' || e.tagName === 'LI').map((e) => e.textContent).join(' '));
  document.getElementById('step-count').textContent = page.steps.length ? page.step + ' of ' + page.steps.length : '';
  document.getElementById('step-text').textContent = shownText.length ? shownText[shownText.length - 1] : '';
}

// ---- a link --------------------------------------------------------------
// Applies a link: its settings, its pinned run, its speed; run=1 runs it.
// A link the page cannot read gives one line and leaves the first lesson.
function applyHash(hash) {
  if (page.running) stopRun('stopped: a new link was opened');
  let decoded;
  try {
    decoded = decodeHash(hash);
  } catch (e) {
    if (!(e instanceof LinkError)) throw e;
    chooseLesson(LESSONS[0]);
    showError(e.message, 'link');
    setState('error', 'the link was refused; the first lesson is loaded');
    return;
  }
  const { given, own, pinned } = decoded;
  if (own.speed) document.getElementById('speed').value = own.speed;
  page.pinned = pinned ? { given: pinned, results: null } : null;
  const lesson = Object.keys(given).length ? LESSONS.find((l) => sameGiven(l.settings, given)) : LESSONS[0];
  if (lesson) chooseLesson(lesson);
  else { page.given = given; page.lesson = null; page.leftLesson = null; clearLinkError(); refresh(); }
  showCompare();
  if (own.run === '1') run();
}

// ---- start ---------------------------------------------------------------
async function start() {
  setState('idle', 'loading the simulator…');
  const table = (await call('settings', {})).answer;
  page.table = table;
  buildLessons();
  buildControls();
  document.getElementById('run').addEventListener('click', run);
  document.getElementById('stop').addEventListener('click', () => stopRun('stopped'));
  document.getElementById('pin').addEventListener('click', pinA);
  document.getElementById('unpin').addEventListener('click', unpin);
  document.getElementById('speed').addEventListener('change', () => { writeHash(); play(); });
  document.getElementById('step').addEventListener('click', () => showStep(page.step + 1));
  document.getElementById('step-back').addEventListener('click', () => showStep(page.step - 1));
  document.getElementById('step-all').addEventListener('click', () => showStep(page.steps.length));
  document.getElementById('sequence-strategy').addEventListener('change', showSequence);
  document.getElementById('copy-link').addEventListener('click', async () => {
    const link = linkOf(true);
    document.body.dataset.link = link;
    try { await navigator.clipboard.writeText(link); setState(document.body.dataset.state, 'link copied'); }
    catch (e) { setState(document.body.dataset.state, 'link: ' + link); }
  });
  window.addEventListener('resize', () => page.shown && drawCharts(endOf(runSets())));
  window.addEventListener('hashchange', () => { if (location.hash !== writtenHash) applyHash(location.hash); });
  setState('idle', 'ready');
  render();
  applyHash(location.hash);
}
window.lockbenchPlayground = { page, call, commandLine, linkOf };
start();
