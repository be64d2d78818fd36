// The playground's Web Worker: the WebAssembly simulator (createLockbench, the
// emscripten module placed before this text by page.cmake) behind messages, so
// the page stays responsive while a run takes the worker's thread.
//   page -> worker: {id, fn: "plan" | "run" | "views" | "settings", request}
//   worker -> page: {id, answer (the binding's JSON, parsed), ms (wall time of the call)}
// The binding (binding.cpp) holds the logic; this file only carries messages.
'use strict';
let lockbenchReady = createLockbench();
self.onmessage = async (event) => {
  const { id, fn, request } = event.data;
  const m = await lockbenchReady;
  const started = performance.now();
  let text;
  try {
    // The request on the heap, not ccall's stack: a views request carries whole results (megabytes).
    const json = JSON.stringify(request || {});
    const size = m.lengthBytesUTF8(json) + 1;
    const at = m._malloc(size);
    m.stringToUTF8(json, at, size);
    try {
      text = m.UTF8ToString(m['_lockbench_' + fn](at));
    } finally {
      m._free(at);
    }
  } catch (e) {
    // An abort leaves the module unusable: the next call gets a fresh one.
    text = JSON.stringify({ error: 'lockbench: the simulator stopped: ' + e });
    lockbenchReady = createLockbench();
  }
  const ms = performance.now() - started;
  self.postMessage({ id, answer: JSON.parse(text), ms });
};
