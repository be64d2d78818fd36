// The playground as a class uses it (issue 44): what is shown is what was run,
// Stop, malformed links, compare A/B, predict then run, every lesson's story,
// and access (axe-core, a phone's width). Checks of playground_test.mjs,
// which passes the helpers `h` it shares with its own checks.
import fs from 'node:fs';
import path from 'node:path';

// The controls the page draws from the plan, by the setting each shows.
const MAIN = ['scenario', 'strategy', 'maximum-pool-size', 'connection-timeout', 'rate', 'partner-latency',
  'partner-read-timeout', 'partner-max-attempts', 'lease-ttl', 'pods', 'duplicate-share', 'crash-at', 'pause-at',
  'pause-for', 'duration', 'seed'];

export function classroomChecks(h) {
  const { open, finished, synced, given, pageResults, nativeResults, withoutProvenance, expect, deepDiff, LESSONS } = h;
  check = expect;

  // What the binding's plan says `settings` run with, asked by the test itself.
  const planOf = (page, settings) => page.evaluate(async (s) => (await window.lockbenchPlayground.call('plan', { settings: s })).answer, settings);
  // A slider's text is its number beside it (<output>), a text box's its value.
  const controlValues = (page) => page.evaluate((names) => {
    const out = {};
    for (const n of names) {
      const input = document.getElementById('in-' + n), number = document.getElementById('out-' + n);
      out[n] = input.type === 'range' ? number.textContent : input.value;
    }
    return out;
  }, MAIN);
  const text = (page, sel) => page.$eval(sel, (e) => e.textContent);
  const commandOf = (settings) => 'lockbench run --world sim' + Object.entries(settings).map(([k, v]) =>
    ' --' + k + ' ' + (/^[A-Za-z0-9_.,:=/@%+-]+$/.test(v) ? v : "'" + v.replace(/'/g, "'\\''") + "'")).join('');

  // The controls, the command line, the hash and the plan agree; `what` names the moment.
  async function expectControlsAgree(page, what) {
    await synced(page);
    const g = await given(page);
    const plan = await planOf(page, g);
    expect(!plan.error, `${what}: the settings plan (${plan.error || 'ok'})`);
    if (plan.error) return;
    const shown = await controlValues(page);
    const wrong = MAIN.filter((n) => shown[n] !== plan.values[n]).map((n) => `${n} shows '${shown[n]}', the run uses '${plan.values[n]}'`);
    expect(wrong.length === 0, `${what}: every control shows what the run uses${wrong.length ? ': ' + wrong.join('; ') : ''}`);
    const command = await text(page, '#command');
    expect(command === commandOf(g), `${what}: the command line is the settings: ${command}`);
    const hash = await page.evaluate(() => decodeURIComponent(location.hash));
    const missing = Object.entries(g).filter(([k, v]) => !hash.includes(k + '=' + v));
    expect(missing.length === 0, `${what}: the hash holds the settings (${hash})`);
  }
  // #result is the run of the command line shown, and says so.
  async function expectResultIsTheCommand(page, what) {
    const g = await given(page);
    const plan = await planOf(page, g);
    const results = await pageResults(page);
    expect(Array.isArray(results) && results.length === plan.strategies.length &&
      results.every((r, i) => r.strategy === plan.strategies[i] || r.strategy.startsWith(plan.strategies[i] + ':')),
      `${what}: #result holds the runs of ${plan.strategies.join(',')}`);
    const of = await text(page, '#results-of');
    expect(of === 'Results of: ' + commandOf(g), `${what}: the results say they are this command's: ${of.slice(0, 120)}`);
    expect((await page.evaluate(() => document.body.dataset.stale)) === '0', `${what}: the results are not marked stale`);
  }

  const parts = {
    // A lesson chosen mid-run stops the run: the new lesson's sentence never sits over the old results.
    async ALessonSwitchMidRunStopsTheRun(browser) {
      const { page, problems } = await open(browser, '#speed=0');
      await page.click('#lessons button[data-lesson="checkout"]');
      await synced(page);
      await page.click('#run');
      await page.waitForFunction(() => /running/.test(document.getElementById('status').textContent), { timeout: 30000 });
      await page.click('#lessons button[data-lesson="burst"]');
      const state = await page.evaluate(() => ({ running: !!window.lockbenchPlayground.page.running, result: document.getElementById('result').textContent,
        status: document.getElementById('status').textContent }));
      expect(!state.running && state.result === 'null' && /stopped: another lesson/.test(state.status),
        `the checkout run stopped, no results beside the burst lesson (${state.status})`);
      await expectControlsAgree(page, 'burst after the switch');
      await page.click('#run');
      expect((await finished(page)) === 'done', 'the burst lesson then runs');
      await expectResultIsTheCommand(page, 'burst after the switch');
      expect(problems.length === 0, 'no page error, console error or fetch: ' + problems.join('; '));
    },

    // A refused Run clears the earlier run: the line alone, no old charts, verdict or #result.
    async AnErrorClearsTheEarlierResults(browser) {
      const { page, problems } = await open(browser, '#speed=0');
      expect((await h.runLesson(page, 'ceiling')) === 'done', 'the 6.6/s lesson ran');
      await page.click('#more summary');
      await page.click('#all-rate', { clickCount: 3 });
      await page.keyboard.type('fast');
      await page.keyboard.press('Tab');
      await synced(page);
      await page.click('#run');
      expect((await finished(page)) === 'error', 'the run is refused');
      const shown = await page.evaluate(() => ({
        error: document.getElementById('error').textContent, result: document.getElementById('result').textContent,
        verdict: document.querySelectorAll('#verdict table').length, tables: document.querySelectorAll('#charts table').length,
        of: document.getElementById('results-of').textContent,
      }));
      expect(/^lockbench: --rate: /.test(shown.error) && shown.error.split('\n').length === 1, `one line: ${shown.error}`);
      expect(shown.result === 'null' && shown.verdict === 0 && shown.tables === 0 && shown.of.startsWith('No run'),
        `nothing of the earlier run stays (#result ${shown.result.slice(0, 20)}, ${shown.verdict} verdict tables, ${shown.tables} chart tables)`);
      expect(problems.length === 0, 'no page error, console error or fetch: ' + problems.join('; '));
    },

    // A second link opened in the same tab applies: its settings, its run.
    async AHashChangeAppliesTheNewLink(browser) {
      const { page, problems } = await open(browser, '#speed=0');
      await synced(page);
      const settings = { strategy: 'held-tx,row-lease', duration: '1m', rate: '7', seed: '3' };
      await page.evaluate((hash) => { location.hash = hash; }, '#' + Object.entries(settings).map(([k, v]) => k + '=' + v).join('&') + '&run=1');
      await page.waitForFunction(() => document.body.dataset.state === 'running' || document.body.dataset.state === 'done');
      expect((await finished(page)) === 'done', 'the new link ran');
      expect(JSON.stringify(await given(page)) === JSON.stringify(settings), 'the new link\'s settings are in force');
      await expectControlsAgree(page, 'after the hashchange');
      await expectResultIsTheCommand(page, 'after the hashchange');
      const diff = deepDiff(withoutProvenance(await pageResults(page)), withoutProvenance(nativeResults(settings)));
      expect(diff === null, 'the same JSON as native' + (diff ? ' (first difference: ' + diff + ')' : ''));
      // A lesson's link applies as the lesson.
      await page.evaluate(() => { location.hash = '#' + Object.entries(LESSONS[1].settings).map(([k, v]) => k + '=' + encodeURIComponent(v)).join('&'); });
      await page.waitForFunction(() => document.body.dataset.lesson === 'burst', { timeout: 10000 });
      await expectControlsAgree(page, 'a lesson\'s link');
      expect(problems.length === 0, 'no page error, console error or fetch: ' + problems.join('; '));
    },

    // Malformed links: one line each, and a page whose Run works.
    async AMalformedLinkGivesOneLineAndAWorkingPage(browser) {
      const cases = [
        ['#duplicate-share=20%&run=1', /not valid percent-encoding/],
        ['#rate=%E0%A4%A&run=1', /not valid percent-encoding/],
        ['#speed=fast', /^lockbench playground: speed='fast' \(accepted: 60, 600, 6000, 0\)$/],
        ['#run=yes', /^lockbench playground: run='yes'/],
        ['#duration=99999999999h&run=1', /^lockbench: --duration: /],
        ['#rate=1e400&run=1', /^lockbench: --rate: /],
        ['#' + 'x'.repeat(300) + '=1&run=1', /^lockbench: The following arguments were not expected/],
      ];
      // The first as the page is opened with it (it once left "loading the simulator…" for good), the rest
      // opened in the same tab.
      const { page, problems } = await open(browser, cases[0][0]);
      for (const [hash, pattern] of cases) {
        if (hash !== cases[0][0]) {
          await page.evaluate((hh) => { location.hash = hh; }, hash);
          await page.waitForFunction((hh) => !document.getElementById('error').hidden && !window.lockbenchPlayground.page.running &&
            ['done', 'error', 'idle'].includes(document.body.dataset.state), { timeout: 60000 }, hash);
        }
        await page.waitForFunction(() => ['done', 'error'].includes(document.body.dataset.state) && !window.lockbenchPlayground.page.running, { timeout: 60000 });
        const line = await page.$eval('#error', (e) => (e.hidden ? '' : e.textContent));
        expect(pattern.test(line) && line.split('\n').length === 1 && line.length < 600, `${hash.slice(0, 40)}: one line: '${line.slice(0, 160)}'`);
        await page.click(`#lessons button[data-lesson="burst"]`);
        await synced(page);
        await page.click('#run');
        expect((await finished(page)) === 'done', `${hash.slice(0, 40)}: the page then runs a lesson`);
      }
      expect(problems.length === 0, 'no page error, console error or fetch: ' + problems.join('; '));
    },

    // Stop ends a 24 h run at 45/s (tens of seconds) at once and leaves the page as before it.
    async StopEndsALongRunAndLeavesThePageAsBefore(browser) {
      const { page, problems } = await open(browser, '#speed=0');
      expect((await h.runLesson(page, 'burst')) === 'done', 'a first run (the burst lesson)');
      const before = await page.evaluate(() => ({ result: document.getElementById('result').textContent,
        verdict: document.getElementById('verdict').innerHTML, state: document.body.dataset.state }));
      await page.evaluate(() => { location.hash = '#strategy=held-tx&rate=45&duration=24h&speed=0&run=1'; });
      await page.waitForFunction(() => /running held-tx/.test(document.getElementById('status').textContent), { timeout: 30000 });
      await new Promise((r) => setTimeout(r, 300));
      const ms = await page.evaluate(() => new Promise((resolve) => {
        const t0 = performance.now();
        document.getElementById('stop').click();
        const wait = () => (window.lockbenchPlayground.page.running ? setTimeout(wait, 5) : resolve(performance.now() - t0));
        wait();
      }));
      console.log(`# Stop ended the run in ${ms.toFixed(1)} ms`);
      expect(ms < 2000, `Stop ended the 24 h run in ${ms.toFixed(1)} ms (the run itself takes tens of seconds)`);
      const after = await page.evaluate(() => ({ result: document.getElementById('result').textContent,
        verdict: document.getElementById('verdict').innerHTML, state: document.body.dataset.state,
        run: document.getElementById('run').disabled, stop: document.getElementById('stop').disabled }));
      expect(after.result === before.result && after.verdict === before.verdict && after.state === before.state,
        `the page is as before the run (state ${after.state}, the burst lesson's results)`);
      expect(!after.run && after.stop, 'Run is enabled again, Stop disabled');
      await page.click(`#lessons button[data-lesson="burst"]`);
      await synced(page);
      await page.click('#run');
      expect((await finished(page)) === 'done', 'a new run after Stop works (a new worker)');
      expect(problems.length === 0, 'no page error, console error or fetch: ' + problems.join('; '));
    },

    // Pin A, change one setting, run B: both drawn, the change named, the link holds both.
    async CompareABNamesTheChangeAndTheLinkHoldsBoth(browser) {
      const first = await open(browser, '#speed=0');
      const page = first.page;
      expect((await h.runLesson(page, 'ceiling')) === 'done', 'A: the 6.6/s lesson ran');
      await page.click('#pin');
      await page.click('#more summary');
      await page.click('#all-maximum-pool-size', { clickCount: 3 });
      await page.keyboard.type('20');
      await page.keyboard.press('Tab');
      await synced(page);
      await page.click('#run');
      expect((await finished(page)) === 'done', 'B ran');
      const changed = await text(page, '#compare-changed');
      expect(changed === 'B changed: --maximum-pool-size 10 → 20', `the change is named: ${changed}`);
      const shown = await page.evaluate(() => ({
        a: document.querySelectorAll('#verdict-table-a tr').length, b: document.querySelectorAll('#verdict-table-b tr').length,
        okHeaders: [...document.querySelectorAll('#table-ok th')].map((t) => t.textContent),
        p99: [...document.querySelectorAll('#table-p99 td:first-child')].map((t) => t.textContent),
      }));
      expect(shown.a === 2 && shown.b === 2, `two verdicts side by side (${shown.a - 1} and ${shown.b - 1} rows)`);
      expect(shown.okHeaders.includes('A: held-tx:wait ok/s') && shown.okHeaders.includes('B: held-tx:wait ok/s') &&
        shown.p99.join() === 'A: held-tx:wait,B: held-tx:wait', `every chart holds A and B: ${shown.okHeaders.join(', ')}`);
      const [a, b] = await page.evaluate(() => [window.lockbenchPlayground.page.pinned.results, window.lockbenchPlayground.page.shown.results]);
      expect(b[0].throughput_ok_per_s > 1.5 * a[0].throughput_ok_per_s,
        `pool 10 → 20 lifts held-tx's ok/s: ${a[0].throughput_ok_per_s} → ${b[0].throughput_ok_per_s}`);
      await page.click('#copy-link');
      const link = await page.evaluate(() => document.body.dataset.link);
      expect(link.includes('a.maximum-pool-size=10') && link.includes('&maximum-pool-size=20'), `the link holds both: ${link}`);
      const second = await open(browser, link.slice(link.indexOf('#')));
      await second.page.waitForFunction(() => document.body.dataset.state === 'done' && !window.lockbenchPlayground.page.running, { timeout: 60000 });
      const [a2, b2] = await second.page.evaluate(() => [window.lockbenchPlayground.page.pinned.results, window.lockbenchPlayground.page.shown.results]);
      const da = deepDiff(withoutProvenance(a2), withoutProvenance(a)), db = deepDiff(withoutProvenance(b2), withoutProvenance(b));
      expect(da === null && db === null, `the link reproduces A and B${da || db ? ': ' + (da || db) : ''}`);
      expect((await text(second.page, '#compare-changed')) === changed, 'and names the same change');
      expect(first.problems.length + second.problems.length === 0, 'no page error, console error or fetch: ' + first.problems.concat(second.problems).join('; '));
    },

    // playground/run_link.mjs: the documented way to get a link's results without a window.
    async TheLinkScriptPrintsTheLinksResults() {
      const script = path.join(path.dirname(new URL(import.meta.url).pathname), '..', 'run_link.mjs');
      const env = { ...process.env, LOCKBENCH_PLAYGROUND: h.pagePath, LOCKBENCH_PUPPETEER_DIR: h.puppeteerDir };
      const settings = { strategy: 'held-tx,row-lease', duration: '1m', seed: '5' };
      const out = h.execFileSync('node', [script, '#' + Object.entries(settings).map(([k, v]) => k + '=' + v).join('&')],
        { env, encoding: 'utf8', maxBuffer: 1 << 30 });
      const diff = deepDiff(withoutProvenance(JSON.parse(out)), withoutProvenance(nativeResults(settings)));
      expect(diff === null, 'run_link.mjs prints the native JSON apart from provenance' + (diff ? ' (first difference: ' + diff + ')' : ''));
      let refused = null;
      try {
        h.execFileSync('node', [script, '#maximum-pool-size=0'], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      } catch (e) { refused = e; }
      const line = refused ? String(refused.stderr).trim() : '';
      expect(refused && refused.status === 2 && /^lockbench: --maximum-pool-size: /.test(line) && line.split('\n').length === 1 &&
        String(refused.stdout) === '', `a refused link: exit 2 and its one line (${refused && refused.status}: ${line})`);
    },

  };

  return {
    EachLessonShowsWhatItRanItsStoryAndPassesAxeAtAPhonesWidth: (browser) => walkEveryLesson(browser),
    TheStateStaysTrueThroughASwitchAnErrorAHashchangeAMalformedLinkAndStop: async (browser) => {
      for (const part of ['ALessonSwitchMidRunStopsTheRun', 'AnErrorClearsTheEarlierResults', 'AHashChangeAppliesTheNewLink',
        'AMalformedLinkGivesOneLineAndAWorkingPage', 'StopEndsALongRunAndLeavesThePageAsBefore']) {
        console.log('# ' + part);
        await parts[part](browser);
      }
    },
    CompareABNamesTheChangeAndTheLinkHoldsBoth: parts.CompareABNamesTheChangeAndTheLinkHoldsBoth,
    TheLinkScriptPrintsTheLinksResults: parts.TheLinkScriptPrintsTheLinksResults,
  };

  // One walk through every lesson at a phone's width (390 px): before its run
  // the controls show what the run will use, aria-pressed is on it, axe finds
  // nothing serious; after it #result is the command line's run, the story and
  // the prediction are on screen, axe again, no horizontal scroll. Then a nudge
  // of the incident's preset.
  async function walkEveryLesson(browser) {
    const axeFile = path.join(h.puppeteerDir, 'node_modules', 'axe-core', 'axe.min.js');
    const axe = fs.existsSync(axeFile) ? fs.readFileSync(axeFile, 'utf8') : null;
    if (!axe) console.log('skipped: the axe-core audits (axe-core is not installed; scripts/test installs it with npm into the build folder)');
    const { page, problems } = await open(browser, '#speed=0');
    await page.setViewport({ width: 390, height: 844 });
    if (axe) await page.addScriptTag({ content: axe });
    // axe audits each distinct page state once: the set of elements with an id that are shown
    // (lessons share their layout; a prediction, a race's steps or a chart adds its own).
    const audited = new Set();
    let audits = 0;
    const audit = async (what) => {
      ++audits;
      const state = await page.evaluate(() => [...document.querySelectorAll('[id]')]
        .filter((e) => e.getClientRects().length > 0).map((e) => e.id).join(' '));
      if (axe && !audited.has(state)) {
        audited.add(state);
        const found = await page.evaluate(async () => {
          const r = await window.axe.run(document, { resultTypes: ['violations'] });
          return r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
            .map((v) => v.id + ' (' + v.impact + '): ' + v.nodes.slice(0, 2).map((n) => n.target.join(' ')).join(', '));
        });
        expect(found.length === 0, `${what}: axe finds no serious or critical violation${found.length ? ': ' + found.join('; ') : ''}`);
      }
      const wide = await page.evaluate(() => document.documentElement.scrollWidth);
      expect(wide <= 390, `${what}: ${wide} px wide at 390 px (no horizontal scroll)`);
    };
    const unnamed = await page.$$eval('input, select, button, textarea', (es) => es.filter((e) => {
      const id = e.id && document.querySelector(`label[for="${e.id}"]`);
      return !(id || e.closest('label') || e.getAttribute('aria-label') || (e.tagName === 'BUTTON' && e.textContent.trim()));
    }).map((e) => e.id || e.tagName));
    expect(unnamed.length === 0, `every control has a name${unnamed.length ? ': not ' + unnamed.join(', ') : ''}`);
    const sliders = await page.$$eval('#controls input[type=range]', (es) => es.filter((e) => !document.querySelector(`label[for="${e.id}"]`)).length);
    expect(sliders === 0, `every slider has its label (${sliders} without)`);
    for (const lesson of LESSONS) {
      await page.click(`#lessons button[data-lesson="${lesson.id}"]`);
      await expectControlsAgree(page, lesson.id);
      const pressed = await page.$$eval('#lessons button[aria-pressed="true"]', (bs) => bs.map((b) => b.dataset.lesson));
      expect(pressed.join() === lesson.id, `${lesson.id}: aria-pressed on it alone (${pressed.join()})`);
      if (lesson.predict) {
        const question = await page.$eval('#predict label', (e) => e.textContent);
        expect(question === lesson.predict.question, `${lesson.id}: asks '${question}' before the run`);
        await page.type('#predict-answer', '3');
      }
      await audit(lesson.id + ' before its run');
      await page.click('#run');
      expect((await finished(page)) === 'done', `${lesson.id}: ran`);
      await expectResultIsTheCommand(page, lesson.id);
      const results = await pageResults(page);
      if (lesson.story) {
        const story = await page.$$eval('#story p', (ps) => ps.map((p) => p.textContent));
        const want = lesson.story(results);
        expect(story.length > 0 && story.join('\n') === want.join('\n'), `${lesson.id}: the story on screen: ${story.join(' ').slice(0, 160)}`);
      }
      if (lesson.predict) {
        const outcome = await text(page, '#predict-outcome');
        const measured = lesson.predict.measure(results), explained = lesson.predict.explain(results);
        expect(outcome.includes('You said: 3 ' + lesson.predict.unit) && outcome.includes('Measured: ') &&
          outcome.includes(explained) && explained.length > 40 && Number.isFinite(measured),
          `${lesson.id}: the answer beside the measure (${measured}) and its arithmetic: ${outcome.slice(0, 160)}`);
      }
      await audit(lesson.id + ' after its run');
      if (lessonCheck[lesson.id]) await lessonCheck[lesson.id](page);
    }
    if (axe) console.log(`# axe: ${audited.size} distinct page states audited of ${audits} checked`);
    await nudgeThePreset(page);
    expect(problems.length === 0, 'no page error, console error or fetch: ' + problems.join('; '));
  }
  // The incident's preset in the controls, and one nudge: the one setting moves, the rest of the preset stays.
  async function nudgeThePreset(page) {
    await page.click('#lessons button[data-lesson="incident"]');
    await synced(page);
    const incident = await controlValues(page);
    expect(incident.rate === '20' && incident['partner-latency'] === 'lognormal:p50=1.5s,p99=4s' && incident.duration === '10m',
      `incident: the preset's values in the controls (rate ${incident.rate}, ${incident['partner-latency']}, ${incident.duration})`);
    await page.focus('#in-partner-p50');
    await page.keyboard.press('ArrowRight');
    await expectControlsAgree(page, 'incident, p50 nudged');
    const g = await given(page);
    expect(g.preset === 'incident' && g['partner-latency'] === 'lognormal:p50=1510ms,p99=4s',
      `the nudge changes the one setting and keeps the preset: ${JSON.stringify(g)}`);
    const after = await controlValues(page);
    expect(after.rate === '20' && after.duration === '10m', `the preset's rate and duration stay (${after.rate}, ${after.duration})`);
    const mark = await text(page, '#lesson-mark');
    const pressed = await page.$$eval('#lessons button[aria-pressed="true"]', (bs) => bs.length);
    expect(mark.startsWith('Your settings') && pressed === 0, `the lesson is marked as left: '${mark}', ${pressed} pressed`);
    expect(await page.$eval('#lesson-notice', (e) => e.classList.contains('left')), 'the lesson\'s sentence is dimmed');
    const of = await text(page, '#results-of');
    expect(of.startsWith('Results of an earlier run') && of.endsWith('--preset incident --strategy all --seed 1') &&
      (await page.evaluate(() => document.body.dataset.stale)) === '1', `the results are labelled as the earlier run's: ${of}`);
    await page.click('#run');
    await finished(page);
    await expectResultIsTheCommand(page, 'after the nudge, run');
    const results = await pageResults(page);
    expect(results[0].settings['partner-latency'] === (await planOf(page, g)).values['partner-latency'] &&
      /p50=1\.51s/.test(results[0].settings['partner-latency']) && results[0].settings.rate === 20,
      `the run used the nudged value and the preset's rate: ${results[0].settings['partner-latency']}, ${results[0].settings.rate}/s`);
  }
}

// What each lesson's story shows beyond its sentences, checked after its run.
const lessonCheck = {
  // Burst: 1 ok and 7 denied, request by request, for both locks; the verdict's legend and pass/fail in words.
  async burst(page) {
    const lists = await page.$$eval('#per-request ol', (ols) => ols.map((o) => [...o.querySelectorAll('li')].map((li) => li.className)));
    check(lists.length === 2 && lists.every((l) => l.length === 8 && l.filter((c) => c === 'outcome-ok').length === 1 &&
      l.filter((c) => c === 'outcome-conflict').length === 7), `burst: 8 requests each, 1 ok and 7 conflict (${JSON.stringify(lists)})`);
    const legend = await page.evaluate(() => ({ headers: [...document.querySelectorAll('#verdict-table th')].map((t) => t.textContent),
      terms: [...document.querySelectorAll('#legend dt')].map((t) => t.textContent), dds: [...document.querySelectorAll('#legend dd')].map((d) => d.textContent) }));
    check(legend.headers.length > 5 && legend.headers.join() === legend.terms.join() && !legend.dds.some((d) => d.startsWith('(not explained')),
      `a legend line for every verdict column (${legend.terms.length})`);
    const cells = await page.$$eval('#verdict-table td.pass, #verdict-table td.fail', (tds) => tds.map((t) => t.textContent));
    check(cells.length > 0 && cells.every((c) => /\b(pass|fail)\b/.test(c)), `pass/fail in words: ${cells.slice(0, 3).join(' | ')}`);
  },
  // The race: the user picks row-lease's race, and the title names it.
  async race(page) {
    const rowLease = await page.$$eval('#sequence-strategy option', (os) => (os.find((o) => o.textContent === 'row-lease: a race') || {}).value);
    check(!!rowLease, 'row-lease\'s race can be picked');
    if (!rowLease) return;
    await page.select('#sequence-strategy', rowLease);
    const title = await page.$eval('#sequence-title', (e) => e.textContent);
    check(/^The race under row-lease: /.test(title), `the picked strategy's race, named: ${title}`);
  },
  // Checkout: an orphan charge stepped through: the charge, the failed commit, the oracle's verdict.
  async checkout(page) {
    const options = await page.$$eval('#sequence-strategy option', (os) => os.map((o) => o.textContent));
    const strategies = JSON.parse(await page.$eval('#result', (e) => e.textContent)).map((r) => r.strategy);
    check(strategies.every((st) => options.some((o) => o.startsWith(st + ': '))), `a choice for every strategy: ${options.join(' | ')}`);
    const orphanTitle = await page.$eval('#sequence-title', (e) => e.textContent);
    check(/^An orphan charge under held-tx/.test(orphanTitle), `the orphan charge is the one stepped through: ${orphanTitle}`);
    const total = await page.$$eval('#orphan-steps li', (li) => li.length);
    const stepped = [];
    for (let i = 1; i < total; i++) { await page.click('#step'); stepped.push(await page.$eval('#step-text', (e) => e.textContent)); }
    const all = stepped.join('\n');
    check(/partner\.charge/.test(all) && /db\.commit fault commit_fail|db\.conn_lost/.test(all) && /orphan_charge/.test(stepped[stepped.length - 1] || ''),
      `step by step: the charge, the failed commit, the oracle's orphan (${total} steps): ${stepped.slice(-2).join(' / ')}`);
  },
  // The failover: marked on the time axis, the two holders of one token named.
  async failover(page) {
    const events = await page.$eval('#chart-events', (e) => e.textContent);
    check(events.includes('Redis failover at 10.2 s'), `failover marked on the charts: ${events}`);
    const story = (await page.$$eval('#story p', (ps) => ps.map((p) => p.textContent))).join(' ');
    check(/both holders got the same fencing token, \d+/.test(story), `the two holders with the same token: ${story.slice(0, 300)}`);
  },
};
let check = () => {};
