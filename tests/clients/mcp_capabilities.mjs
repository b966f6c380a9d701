// What a running custom tool can ask of its caller's client (issue 34), through the official MCP
// TypeScript SDK (@modelcontextprotocol/sdk 1.x, 2025-11-25 sessions): log messages filtered by
// logging/setLevel, progress for the call's progressToken, sampling (the client's "model"
// answers), elicitation (the client's "person" answers), and a call cancelled by the client.
//
// Run by crates/toolsmith-server/tests/server/mcp_sdk_capabilities.rs, which creates the tools
// (cap_log, cap_progress, cap_sample, cap_elicit, cap_spin) first. Prints what it observed as
// one JSON object on the last line of stdout; the Rust test holds the assertions.
//
//   node mcp_capabilities.mjs [--bare] (--url http://127.0.0.1:PORT/mcp | --command BIN [--arg A]...)
//
// --bare: the client declares neither sampling nor elicitation (the tools must get a clear
// error, not a hang).

import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';

const log = (...parts) => console.error('[mcp_capabilities.mjs]', ...parts);
const WAIT_MS = 15000;

function parseArgs(argv) {
  const args = { arg: [], bare: false };
  for (let i = 0; i < argv.length; i++) {
    const at = argv[i].indexOf('=');
    const key = (at < 0 ? argv[i] : argv[i].slice(0, at)).replace(/^--/, '');
    if (key === 'bare') {
      args.bare = true;
      continue;
    }
    const value = at < 0 ? argv[++i] : argv[i].slice(at + 1);
    if (key === 'arg') args.arg.push(value);
    else args[key] = value;
  }
  if (!(args.url || args.command)) throw new Error('usage: [--bare] (--url URL | --command BIN ...)');
  return args;
}

/** Log messages as they arrive, and waiters for one that matches. */
class Logs {
  constructor() {
    this.messages = [];
    this.waiters = [];
  }
  hit(params) {
    this.messages.push({ level: params.level, logger: params.logger ?? null, data: params.data });
    for (const wake of this.waiters.splice(0)) wake();
  }
  /** Resolves true once a message satisfies `pred`, false after WAIT_MS. */
  waitFor(pred) {
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), WAIT_MS);
      const check = () => {
        if (this.messages.some(pred)) {
          clearTimeout(timer);
          resolve(true);
        } else {
          this.waiters.push(check);
        }
      };
      check();
    });
  }
}

function resultJson(res) {
  return {
    isError: Boolean(res.isError),
    text: (res.content ?? []).filter((c) => c.type === 'text').map((c) => c.text),
    structured: res.structuredContent ?? null,
  };
}

async function call(client, name, args, options) {
  try {
    return resultJson(await client.callTool({ name, arguments: args }, undefined, options));
  } catch (e) {
    if (e instanceof McpError) return { error: { code: e.code, message: e.message } };
    return { error: { code: null, message: String(e?.message ?? e) } };
  }
}

async function main(args) {
  const out = { bare: args.bare };
  const capabilities = args.bare ? {} : { sampling: {}, elicitation: { form: {} } };
  const client = new Client({ name: 'toolsmith-capabilities-ts', version: '1.0.0' }, { capabilities });
  const logs = new Logs();
  const samplingRequests = [];
  const elicitationRequests = [];
  if (!args.bare) {
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      samplingRequests.push(request.params);
      const prompt = request.params.messages?.[0]?.content?.text ?? '';
      return {
        role: 'assistant',
        content: { type: 'text', text: `the client's model read: ${prompt}` },
        model: 'test-model',
        stopReason: 'endTurn',
      };
    });
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      elicitationRequests.push(request.params);
      return { action: 'accept', content: { name: 'Ada' } };
    });
  }
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.hit(n.params));

  const transport = args.url
    ? new StreamableHTTPClientTransport(new URL(args.url))
    : new StdioClientTransport({ command: args.command, args: args.arg, stderr: 'inherit' });
  let protocolVersion = null;
  const original = transport.setProtocolVersion?.bind(transport);
  transport.setProtocolVersion = (version) => {
    protocolVersion = version;
    original?.(version);
  };
  await client.connect(transport);
  // Progress as the transport delivered it. The SDK hands notifications to their handlers a
  // microtask later but settles a response at once, so over stdio, where the last progress
  // notifications and the response arrive in one read, it drops those notifications
  // ("Received a progress notification for an unknown token") although they came first.
  const wireProgress = [];
  const deliver = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if (message.method === 'notifications/progress') wireProgress.push(message.params);
    deliver?.(message, extra);
  };
  out.protocolVersion = protocolVersion;
  out.serverLogging = client.getServerCapabilities()?.logging !== undefined;

  // Logging: info and above reach the client, debug does not.
  await client.setLoggingLevel('info');
  out.log = await call(client, 'cap_log', {});
  out.logArrived = await logs.waitFor((m) => m.level === 'warning');
  out.logs = logs.messages.slice();

  // Progress for the call's token (the SDK sets one when onprogress is given).
  const progress = [];
  out.progress = await call(client, 'cap_progress', {}, {
    onprogress: (p) => progress.push({ progress: p.progress, total: p.total ?? null, message: p.message ?? null }),
  });
  out.progressUpdates = progress;
  out.progressOnTheWire = wireProgress.map((p) => ({
    progressToken: p.progressToken,
    progress: p.progress,
    total: p.total ?? null,
    message: p.message ?? null,
  }));

  out.sample = await call(client, 'cap_sample', { prompt: 'Say hi' });
  out.samplingRequests = samplingRequests;
  out.elicit = await call(client, 'cap_elicit', {});
  out.elicitationRequests = elicitationRequests;

  // Cancelled: the tool says it runs, then spins; the client gives up on it.
  const controller = new AbortController();
  const running = logs.waitFor((m) => m.data === 'spinning');
  const spin = call(client, 'cap_spin', {}, { signal: controller.signal });
  out.spinRunning = await running;
  controller.abort('the user pressed stop');
  out.spin = await spin;
  // The session still works after the cancellation.
  out.afterCancel = await call(client, 'cap_progress', {});

  await client.close();
  return out;
}

const args = parseArgs(process.argv.slice(2));
const sdkVersion = JSON.parse(readFileSync(new URL('./node_modules/@modelcontextprotocol/sdk/package.json', import.meta.url))).version;
try {
  const out = { client: `@modelcontextprotocol/sdk ${sdkVersion}`, ...(await main(args)) };
  console.log(JSON.stringify(out));
  process.exit(0);
} catch (e) {
  log('failed:', e?.stack ?? e);
  process.exit(1);
}
