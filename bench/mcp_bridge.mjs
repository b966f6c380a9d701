// The MCP bridge benchmark's client: the official MCP TypeScript SDK's Client, one session,
// calling one tool sequentially and timing each tools/call round trip. Run by bench/mcp-bridge.sh.
//
//   node bench/mcp_bridge.mjs (--url URL | --sse URL | --command BIN [--arg A]...) --tool NAME --calls N --warmup W
//
// --url: streamable HTTP; --sse: the legacy HTTP+SSE transport (the URL of the SSE stream).
//
// Prints one JSON line: {n, ok, p50_ms, p99_ms, mean_ms}. Resolves the SDK from tests/clients.

import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';

const require = createRequire(new URL('../tests/clients/package.json', import.meta.url));
const sdk = (path) => import(require.resolve(`@modelcontextprotocol/sdk/${path}`));
const { Client } = await sdk('client/index.js');
const { StdioClientTransport } = await sdk('client/stdio.js');
const { StreamableHTTPClientTransport } = await sdk('client/streamableHttp.js');
const { SSEClientTransport } = await sdk('client/sse.js');

const args = { arg: [] };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i += 2) {
  const key = argv[i].replace(/^--/, '');
  if (key === 'arg') args.arg.push(argv[i + 1]);
  else args[key] = argv[i + 1];
}
const calls = Number(args.calls ?? 500);
const warmup = Number(args.warmup ?? 50);

const transport = args.url
  ? new StreamableHTTPClientTransport(new URL(args.url))
  : args.sse
    ? new SSEClientTransport(new URL(args.sse))
    : new StdioClientTransport({ command: args.command, args: args.arg, stderr: 'ignore' });
const client = new Client({ name: 'toolsmith-bridge-bench', version: '1.0.0' });
await client.connect(transport);

const call = () => client.callTool({ name: args.tool, arguments: { text: 'ping' } });
for (let i = 0; i < warmup; i++) await call();
const times = [];
let ok = 0;
for (let i = 0; i < calls; i++) {
  const start = performance.now();
  const res = await call();
  times.push(performance.now() - start);
  if (!res.isError) ok++;
}
await client.close();
times.sort((a, b) => a - b);
const at = (q) => times[Math.min(times.length - 1, Math.floor(q * times.length))];
const mean = times.reduce((a, b) => a + b, 0) / times.length;
console.log(JSON.stringify({ n: calls, ok, p50_ms: at(0.5), p99_ms: at(0.99), mean_ms: mean }));
