// Helpers of bench/io-load.sh, one role per invocation (loopback only):
//
//   node bench/io_load.js slow            a slow endpoint: GET /slow?ms=N answers {"ok":true}
//                                         after N ms; GET /inflight answers how many /slow
//                                         requests it holds now; prints its URL
//   node bench/io_load.js vm              the Node.js `vm` baseline: POST /execute {code, args}
//                                         runs the code in a fresh vm context per request with
//                                         a `fetch` global, as a vm-based sandbox does; prints
//                                         its URL
//   node bench/io_load.js client URL BODY N
//                                         N concurrent POSTs of BODY to URL; prints wall time,
//                                         answered, ok, p50/p99 (ms) as JSON
//   node bench/io_load.js probe URL BODY N [INFLIGHT_URL MIN]
//                                         first waits (up to 30 s) until INFLIGHT_URL reports at
//                                         least MIN, then N sequential POSTs of BODY to URL on
//                                         one kept-alive connection; prints p50/p99/max (ms) and
//                                         the in-flight count before and after as JSON
'use strict';
const http = require('node:http');
const vm = require('node:vm');

const role = process.argv[2];

function listen(server) {
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address();
    process.stdout.write(`http://127.0.0.1:${port}\n`);
  });
}

if (role === 'slow') {
  let inflight = 0;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    if (url.pathname === '/inflight') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ inflight }));
      return;
    }
    const ms = Number(url.searchParams.get('ms') || 0);
    inflight += 1;
    setTimeout(() => {
      inflight -= 1;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    }, ms);
  });
  server.maxConnections = 100000;
  listen(server);
} else if (role === 'vm') {
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', async () => {
      try {
        const { code, args } = JSON.parse(body);
        const ctx = vm.createContext(
          {
            args, fetch, JSON, Math, Date, Array, Object, String, Number, Boolean, RegExp, Map, Set,
            console: { log() {}, warn() {}, error() {} },
          },
          { codeGeneration: { strings: false, wasm: false } },
        );
        const script = new vm.Script(`(async () => {\n${code}\n})()`);
        const value = await script.runInContext(ctx, { timeout: 5000 });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ success: true, data: value === undefined ? null : value }));
      } catch (e) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ success: false, error: String(e) }));
      }
    });
  });
  listen(server);
} else if (role === 'client') {
  const [url, body, n] = [process.argv[3], process.argv[4], Number(process.argv[5])];
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  const one = () =>
    new Promise((resolve) => {
      const t0 = process.hrtime.bigint();
      const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => {
          const ms = Number(process.hrtime.bigint() - t0) / 1e6;
          let ok = false;
          try {
            ok = res.statusCode === 200 && JSON.parse(text).success === true;
          } catch (_) {}
          resolve({ ms, ok, answered: true, status: res.statusCode });
        });
      });
      req.on('error', () => resolve({ ms: 0, ok: false, answered: false }));
      req.setTimeout(120000, () => req.destroy());
      req.end(body);
    });
  (async () => {
    const t0 = process.hrtime.bigint();
    const results = await Promise.all(Array.from({ length: n }, one));
    const wall = Number(process.hrtime.bigint() - t0) / 1e9;
    const times = results.filter((r) => r.answered).map((r) => r.ms).sort((a, b) => a - b);
    const pct = (p) => (times.length ? times[Math.min(times.length - 1, Math.floor((p / 100) * times.length))] : null);
    const statuses = {};
    for (const r of results) statuses[r.status] = (statuses[r.status] || 0) + 1;
    process.stdout.write(JSON.stringify({
      n, wall_s: wall, answered: times.length, ok: results.filter((r) => r.ok).length,
      p50_ms: pct(50), p99_ms: pct(99), statuses,
    }) + '\n');
    process.exit(0);
  })();
} else if (role === 'probe') {
  const [url, body, n, inflightUrl, min] = [
    process.argv[3], process.argv[4], Number(process.argv[5]), process.argv[6], Number(process.argv[7] || 0),
  ];
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const get = (u) =>
    new Promise((resolve) => {
      http.get(u, (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve(JSON.parse(text).inflight));
      }).on('error', () => resolve(-1));
    });
  const post = () =>
    new Promise((resolve) => {
      const t0 = process.hrtime.bigint();
      const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
        res.resume();
        res.on('end', () => resolve({ ms: Number(process.hrtime.bigint() - t0) / 1e6, ok: res.statusCode === 200 }));
      });
      req.on('error', () => resolve({ ms: 0, ok: false }));
      req.end(body);
    });
  (async () => {
    let before = null;
    if (inflightUrl) {
      const until = Date.now() + 30000;
      while ((before = await get(inflightUrl)) < min && Date.now() < until) {
        await new Promise((r) => setTimeout(r, 10));
      }
    }
    const times = [];
    let ok = 0;
    for (let i = 0; i < n; i++) {
      const r = await post();
      times.push(r.ms);
      if (r.ok) ok += 1;
    }
    const after = inflightUrl ? await get(inflightUrl) : null;
    times.sort((a, b) => a - b);
    const pct = (p) => times[Math.min(times.length - 1, Math.floor((p / 100) * times.length))];
    process.stdout.write(JSON.stringify({
      n, ok, p50_ms: pct(50), p99_ms: pct(99), max_ms: times[times.length - 1],
      inflight_before: before, inflight_after: after,
    }) + '\n');
    process.exit(0);
  })();
} else {
  process.stderr.write('usage: node bench/io_load.js slow | vm | client URL BODY N | probe URL BODY N [INFLIGHT_URL MIN]\n');
  process.exit(2);
}
