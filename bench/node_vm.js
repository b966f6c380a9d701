// The Node.js `vm` baseline for docs/benchmarks.md: runs the same three JS tools the way a
// vm-based sandbox does it (a fresh vm.createContext with the same globals per call, the code
// wrapped in an async IIFE, a `timeout`), and prints per-case timings as JSON on stdout.
//
// Usage: node bench/node_vm.js [iterations-per-case]
'use strict';
const vm = require('node:vm');
const cases = require('./cases.json');

const iterations = Number(process.argv[2] || 2000);

function makeGlobals(args) {
  // The globals a vm-based sandbox injects (the spec's list), plus args/context/utils/console.
  return {
    args: JSON.parse(JSON.stringify(args)),
    context: { toolName: 'bench', callId: 'c', conversationId: 'x', userId: 'default' },
    utils: { sum: (xs) => xs.reduce((a, b) => a + b, 0) },
    console: { log() {}, warn() {}, error() {} },
    JSON, Math, Date, Array, Object, String, Number, Boolean, RegExp, Map, Set,
    parseInt, parseFloat, isNaN, isFinite,
    encodeURIComponent, decodeURIComponent, encodeURI, decodeURI,
  };
}

async function runOnce(code, args) {
  const ctx = vm.createContext(makeGlobals(args), {
    codeGeneration: { strings: false, wasm: false },
  });
  const wrapped = `(async () => {\n${code}\n})()`;
  const script = new vm.Script(wrapped);
  const value = await script.runInContext(ctx, { timeout: 5000 });
  return JSON.stringify(value === undefined ? null : value);
}

function percentile(sorted, p) {
  const idx = Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length));
  return sorted[idx];
}

async function main() {
  const out = {};
  for (const c of cases) {
    const n = c.heavy ? Math.max(5, Math.floor(iterations / 200)) : iterations;
    for (let i = 0; i < Math.min(20, n); i++) await runOnce(c.code, c.args); // warm-up
    const times = [];
    for (let i = 0; i < n; i++) {
      const t0 = process.hrtime.bigint();
      await runOnce(c.code, c.args);
      times.push(Number(process.hrtime.bigint() - t0) / 1000);
    }
    times.sort((a, b) => a - b);
    out[c.name] = { n, p50_us: percentile(times, 50), p99_us: percentile(times, 99) };
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => { console.error(e); process.exit(1); });
