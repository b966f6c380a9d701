// Drives a Toolsmith MCP server with the official MCP TypeScript SDK (@modelcontextprotocol/sdk 1.x,
// which negotiates 2025-11-25: an initialize handshake, a session, and list changes pushed as
// notifications on it).
//
// Run by crates/toolsmith-server/tests/mcp_clients.rs with tests/clients/node_modules installed by
// scripts/install-test-deps.sh (this script installs nothing). Prints what it observed as one JSON
// object on the last line of stdout; the Rust test holds the assertions. Progress goes to stderr.
//
//   node mcp_typescript.mjs --scenario flow|two-sessions --name TOOL
//        (--url http://127.0.0.1:PORT/mcp | --command BIN [--arg A]... [--env K=V]...)

import { createRequire } from 'node:module';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  ElicitRequestSchema,
  McpError,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';

// The person behind the client: allows every tool the model created, always, when asked with
// an approval form (elicitation/create). `approvalsAsked` in the report counts the forms.
const approvals = { asked: 0 };

const NOTIFY_TIMEOUT_MS = 15000;
// A quiet window after the last expected notification, in which a duplicate would show. It waits
// for nothing: sending nothing makes no event, and on HTTP notifications and replies travel on
// different streams, so no later reply can vouch for them. In-process, the server's tests count
// exactly instead (crates/toolsmith-server/tests/server/mcp_protocol.rs, on a paused clock).
const SETTLE_MS = 1000;

const log = (...parts) => console.error('[mcp_typescript]', ...parts);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function parseArgs(argv) {
  const args = { arg: [], env: [] };
  for (let i = 0; i < argv.length; i++) {
    // `--key value` or `--key=value` (needed when the value starts with `--`).
    const at = argv[i].indexOf('=');
    const key = (at < 0 ? argv[i] : argv[i].slice(0, at)).replace(/^--/, '');
    const value = at < 0 ? argv[++i] : argv[i].slice(at + 1);
    if (key === 'arg' || key === 'env') args[key].push(value);
    else args[key] = value;
  }
  if (!args.scenario || !args.name || !(args.url || args.command)) {
    throw new Error('usage: --scenario flow|two-sessions --name TOOL (--url URL | --command BIN ...)');
  }
  return args;
}

class Changes {
  constructor() {
    this.count = 0;
    this.waiters = [];
  }
  hit() {
    this.count += 1;
    log(`tools/list_changed #${this.count}`);
    for (const wake of this.waiters.splice(0)) wake();
  }
  /** Resolves true when a notification beyond `seen` arrives, false once the timeout passes. */
  waitBeyond(seen, timeoutMs = NOTIFY_TIMEOUT_MS) {
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(this.count > seen), timeoutMs);
      const check = () => {
        if (this.count > seen) {
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

async function connect(args) {
  const changes = new Changes();
  const client = new Client(
    { name: 'toolsmith-ts-sdk-test', version: '1.0.0' },
    { capabilities: { elicitation: {} } },
  );
  client.setRequestHandler(ElicitRequestSchema, async () => {
    approvals.asked += 1;
    return { action: 'accept', content: { decision: 'allow_always' } };
  });
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => changes.hit());
  let transport;
  if (args.url) {
    transport = new StreamableHTTPClientTransport(new URL(args.url));
  } else {
    const env = { ...process.env };
    for (const kv of args.env) {
      const at = kv.indexOf('=');
      env[kv.slice(0, at)] = kv.slice(at + 1);
    }
    transport = new StdioClientTransport({ command: args.command, args: args.arg, env, stderr: 'inherit' });
  }
  // The client hands the negotiated version to transports that accept it; record it.
  let protocolVersion = null;
  const original = transport.setProtocolVersion?.bind(transport);
  transport.setProtocolVersion = (version) => {
    protocolVersion = version;
    original?.(version);
  };
  await client.connect(transport);
  return { client, changes, transport, protocolVersion: () => protocolVersion };
}

function resultJson(res) {
  return {
    isError: Boolean(res.isError),
    text: (res.content ?? []).filter((c) => c.type === 'text').map((c) => c.text),
    structured: res.structuredContent ?? null,
  };
}

async function call(client, name, args) {
  try {
    return resultJson(await client.callTool({ name, arguments: args }));
  } catch (e) {
    if (e instanceof McpError) {
      // McpError prefixes the server's message with "MCP error <code>: ".
      const message = e.message.replace(/^MCP error -?\d+: /, '');
      return { error: { code: e.code, message, data: e.data ?? null } };
    }
    throw e;
  }
}

async function toolNames(client) {
  return (await client.listTools()).tools.map((t) => t.name);
}

const PARAMS = {
  type: 'object',
  properties: { who: { type: 'string', description: 'Who to greet' } },
  required: ['who'],
  additionalProperties: false,
};
const CODE_V1 = "return {greeting: 'hello ' + args.who, version: 1};";
const CODE_V2 = "return {greeting: 'hi ' + args.who, version: 2};";

async function flow(args) {
  const out = {};
  const { client, changes, transport, protocolVersion } = await connect(args);
  out.protocolVersion = protocolVersion();
  out.serverName = client.getServerVersion()?.name ?? null;
  out.listChangedCapability = client.getServerCapabilities()?.tools?.listChanged ?? null;
  out.sessionId = transport.sessionId ?? null;
  out.initialTools = await toolNames(client);

  let seen = changes.count;
  // Parameters as an object.
  out.create = await call(client, 'create_tool', {
    name: args.name,
    description: 'Greets someone (created by the TypeScript SDK test)',
    parameters: PARAMS,
    code: CODE_V1,
    category: 'Tests',
  });
  out.notifiedAfterCreate = await changes.waitBeyond(seen);
  out.listedAfterCreate = (await toolNames(client)).includes(args.name);
  out.call1 = await call(client, args.name, { who: 'mcp' });

  seen = changes.count;
  out.update = await call(client, 'update_custom_tool', { name: args.name, code: CODE_V2 });
  out.notifiedAfterUpdate = await changes.waitBeyond(seen);
  out.call2 = await call(client, args.name, { who: 'mcp' });
  out.approvalsAsked = approvals.asked;

  out.unknownTool = await call(client, 'no_such_tool_anywhere', {});
  out.badArgs = await call(client, args.name, { who: 42 });
  out.badCreate = await call(client, 'create_tool', {
    name: 'Bad Name',
    description: 'x',
    parameters: { type: 'object' },
    code: 'return 1',
  });

  seen = changes.count;
  out.toggle = await call(client, 'toggle_custom_tool', { name: args.name, enabled: false });
  out.notifiedAfterDisable = await changes.waitBeyond(seen);
  out.listedAfterDisable = (await toolNames(client)).includes(args.name);
  out.callDisabled = await call(client, args.name, { who: 'mcp' });

  await sleep(SETTLE_MS);
  out.notifications = changes.count;
  await client.close();
  return out;
}

async function twoSessions(args) {
  const out = {};
  const a = await connect(args);
  const b = await connect(args);
  out.protocolVersion = b.protocolVersion();
  out.distinctSessions = args.url ? a.transport.sessionId !== b.transport.sessionId : null;
  out.bListedBefore = (await toolNames(b.client)).includes(args.name);

  let seen = b.changes.count;
  out.create = await call(a.client, 'create_tool', {
    name: args.name,
    description: 'Created in session A',
    parameters: JSON.stringify(PARAMS),
    code: CODE_V1,
  });
  out.bNotifiedAfterCreate = await b.changes.waitBeyond(seen);
  out.bListedAfterCreate = (await toolNames(b.client)).includes(args.name);
  out.bCall = await call(b.client, args.name, { who: 'b' });

  seen = b.changes.count;
  out.deleteUnconfirmed = await call(a.client, 'delete_custom_tool', { name: args.name });
  out.deleteConfirmed = await call(a.client, 'delete_custom_tool', { name: args.name, confirm: true });
  out.bNotifiedAfterDelete = await b.changes.waitBeyond(seen);
  out.bListedAfterDelete = (await toolNames(b.client)).includes(args.name);

  await sleep(SETTLE_MS);
  out.aNotifications = a.changes.count;
  out.bNotifications = b.changes.count;
  await a.client.close();
  await b.client.close();
  return out;
}

const args = parseArgs(process.argv.slice(2));
const scenarios = { flow, 'two-sessions': twoSessions };
const sdkVersion = createRequire(import.meta.url)('@modelcontextprotocol/sdk/package.json').version;
try {
  const out = { client: `@modelcontextprotocol/sdk ${sdkVersion}`, ...(await scenarios[args.scenario](args)) };
  console.log(JSON.stringify(out));
  process.exit(0);
} catch (e) {
  log('failed:', e?.stack ?? e);
  process.exit(1);
}
