// The playground's charts, drawn on <canvas> by hand (no library, nothing
// fetched): line charts over virtual time and a bar chart. They draw what the
// results hold (timeline rows, latency quantiles); they compute no model.
'use strict';
const CHART_COLORS = ['#4e79a7', '#e15759', '#59a14f', '#f28e2b', '#b07aa1', '#76b7b2', '#edc948', '#9c755f'];

function chartSetup(canvas) {
  const ratio = window.devicePixelRatio || 1;
  const w = canvas.clientWidth || 480, h = canvas.clientHeight || 220;
  if (canvas.width !== Math.round(w * ratio)) canvas.width = Math.round(w * ratio);
  if (canvas.height !== Math.round(h * ratio)) canvas.height = Math.round(h * ratio);
  const g = canvas.getContext('2d');
  g.setTransform(ratio, 0, 0, ratio, 0, 0);
  g.clearRect(0, 0, w, h);
  g.fillStyle = '#fff';
  g.fillRect(0, 0, w, h);
  g.font = '11px Helvetica, Arial, sans-serif';
  return { g, w, h, left: 48, right: w - 10, top: 22, bottom: h - 24 };
}

function niceMax(v) {
  if (!(v > 0)) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

function shortNumber(v) {
  if (Math.abs(v) >= 1000) return (v / 1000).toFixed(v % 1000 === 0 ? 0 : 1) + 'k';
  return String(Math.round(v * 100) / 100);
}

function drawAxes(c, title, xMax, yMax, xLabel) {
  const { g, left, right, top, bottom } = c;
  g.fillStyle = '#222';
  g.font = 'bold 12px Helvetica, Arial, sans-serif';
  g.fillText(title, left, 14);
  g.font = '11px Helvetica, Arial, sans-serif';
  g.strokeStyle = '#ddd';
  g.lineWidth = 1;
  for (let i = 0; i <= 4; i++) {
    const y = bottom - (bottom - top) * i / 4;
    g.beginPath(); g.moveTo(left, y); g.lineTo(right, y); g.stroke();
    g.fillStyle = '#555';
    g.textAlign = 'right';
    g.fillText(shortNumber(yMax * i / 4), left - 4, y + 4);
  }
  g.textAlign = 'center';
  if (xMax > 0) {  // ticks at round values: 0, step, 2 step, ... up to xMax
    const step = niceMax(xMax / 5);
    for (let v = 0; v <= xMax + 1e-9; v += step) {
      const x = left + (right - left) * v / xMax;
      g.fillText(shortNumber(v), x, bottom + 14);
    }
    g.textAlign = 'right';
    g.fillText(xLabel, right, bottom + 14);
  }
  g.textAlign = 'left';
  g.strokeStyle = '#888';
  g.beginPath(); g.moveTo(left, top); g.lineTo(left, bottom); g.lineTo(right, bottom); g.stroke();
}

// spec: {title, xMax, yMax, xLabel, series: [{label, color, dash, alpha, points: [[x, y], ...]}],
//        marks: [{y, label, color}] (horizontal dashed lines),
//        events: [{x, to, label}] (a run's events on the time axis: a line at x, a band to `to`)}
function drawLineChart(canvas, spec) {
  const c = chartSetup(canvas);
  const { g, left, right, top, bottom } = c;
  let yMax = spec.yMax || 0;
  for (const s of spec.series) for (const p of s.points) yMax = Math.max(yMax, p[1]);
  for (const m of spec.marks || []) yMax = Math.max(yMax, m.y);
  yMax = niceMax(yMax * 1.05);
  const xMax = spec.xMax > 0 ? spec.xMax : 1;
  drawAxes(c, spec.title, xMax, yMax, spec.xLabel || 's');
  const X = (x) => left + (right - left) * Math.min(x, xMax) / xMax;
  const Y = (y) => bottom - (bottom - top) * y / yMax;
  for (const e of spec.events || []) {
    if (!(e.x >= 0) || e.x > xMax) continue;
    if (e.to > e.x) {
      g.fillStyle = 'rgba(242, 142, 43, 0.15)';
      g.fillRect(X(e.x), top, Math.max(1, X(e.to) - X(e.x)), bottom - top);
    }
    g.strokeStyle = '#b85c00';
    g.lineWidth = 1.5;
    g.beginPath(); g.moveTo(X(e.x), top); g.lineTo(X(e.x), bottom); g.stroke();
    g.lineWidth = 1;
    g.fillStyle = '#b85c00';
    g.textAlign = X(e.x) > (left + right) / 2 ? 'right' : 'left';
    g.fillText(e.label + ' ' + shortNumber(e.x) + ' s', X(e.x) + (g.textAlign === 'right' ? -3 : 3), bottom - 4);
    g.textAlign = 'left';
  }
  for (const m of spec.marks || []) {
    g.strokeStyle = m.color || '#333';
    g.setLineDash([5, 4]);
    g.beginPath(); g.moveTo(left, Y(m.y)); g.lineTo(right, Y(m.y)); g.stroke();
    g.setLineDash([]);
    g.fillStyle = m.color || '#333';
    g.fillText(m.label, left + 4, Y(m.y) - 3);
  }
  let legendX = left + 4, legendY = top + 2;
  spec.series.forEach((s, i) => {
    g.globalAlpha = s.alpha || 1;
    g.strokeStyle = s.color || CHART_COLORS[i % CHART_COLORS.length];
    g.lineWidth = 1.6;
    g.setLineDash(s.dash || []);
    g.beginPath();
    s.points.forEach((p, k) => (k === 0 ? g.moveTo(X(p[0]), Y(p[1])) : g.lineTo(X(p[0]), Y(p[1]))));
    g.stroke();
    g.setLineDash([]);
    g.lineWidth = 1;
    g.fillStyle = g.strokeStyle;
    const label = s.label;
    const w = g.measureText(label).width + 26;
    if (legendX > left + 4 && legendX + w > right) { legendX = left + 4; legendY += 12; }  // wrap the legend
    g.fillRect(legendX, legendY, 10, 3);
    g.fillText(label, legendX + 13, legendY + 6);
    legendX += w;
    g.globalAlpha = 1;
  });
}

// spec: {title, unit, bars: [{label, value, color}]}
function drawBarChart(canvas, spec) {
  const c = chartSetup(canvas);
  const { g, left, right, top, bottom } = c;
  const yMax = niceMax(Math.max(1e-9, ...spec.bars.map((b) => b.value || 0)) * 1.1);
  drawAxes(c, spec.title, 0, yMax, '');
  g.clearRect(left - 30, bottom + 2, right, 20);
  g.fillStyle = '#fff';
  g.fillRect(left - 30, bottom + 2, right, 20);
  const n = Math.max(1, spec.bars.length);
  const slot = (right - left) / n;
  spec.bars.forEach((b, i) => {
    const h = (bottom - top) * (b.value || 0) / yMax;
    g.fillStyle = b.color || CHART_COLORS[i % CHART_COLORS.length];
    g.fillRect(left + slot * i + slot * 0.2, bottom - h, slot * 0.6, h);
    g.fillStyle = '#222';
    g.textAlign = 'center';
    g.fillText(shortNumber(b.value || 0) + ' ' + spec.unit, left + slot * (i + 0.5), bottom - h - 4);
    g.fillText(b.label.length > 24 ? b.label.slice(0, 23) + '…' : b.label, left + slot * (i + 0.5), bottom + 14);
    g.textAlign = 'left';
  });
}
