// What the playground's browser tests and bench/playground_bench.mjs share: the
// page's own lessons (playground/lessons.js, read as the page reads it) and a
// JSON comparison that names the first difference.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const LESSONS = new Function(fs.readFileSync(path.join(here, '..', 'lessons.js'), 'utf8') + '\nreturn LESSONS;')();

// null when a and b are the same JSON value, else the path of the first difference.
export function deepDiff(a, b, where = '$') {
  if (typeof a !== typeof b || Array.isArray(a) !== Array.isArray(b) || (a === null) !== (b === null))
    return `${where}: ${JSON.stringify(a)?.slice(0, 80)} vs ${JSON.stringify(b)?.slice(0, 80)}`;
  if (a === null || typeof a !== 'object') return a === b ? null : `${where}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`;
  if (Array.isArray(a)) {
    if (a.length !== b.length) return `${where}: ${a.length} items vs ${b.length}`;
    for (let i = 0; i < a.length; i++) { const d = deepDiff(a[i], b[i], `${where}[${i}]`); if (d) return d; }
    return null;
  }
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of keys) {
    if (!(k in a) || !(k in b)) return `${where}.${k}: only in ${k in a ? 'the first' : 'the second'}`;
    const d = deepDiff(a[k], b[k], `${where}.${k}`);
    if (d) return d;
  }
  return null;
}
