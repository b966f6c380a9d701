// MCP's server surface beside tools (issue 40), through the official MCP TypeScript SDK: prompts
// listed and got, resources and templates listed and read, a subscription told of a file that
// `write_file` wrote, and another user's prompt, resource and file neither listed nor readable.
//
// Two generations of the SDK, both pinned in package.json:
//   --sdk v1  @modelcontextprotocol/sdk 1.x: protocol 2025-11-25 (a session; resources/subscribe,
//             the update pushed on the session)
//   --sdk v2  @modelcontextprotocol/client 2.x with versionNegotiation `--era auto` (2026-07-28:
//             no session; the subscription is a subscriptions/listen with resourceSubscriptions)
//             or `--era legacy` (2025-11-25, as v1)
//
// Run by crates/toolsmith/tests/cli/mcp_surface.rs, which stores the fixtures first (the CLI, as
// a person: the prompt `review`, the resource `notes://alice/todo`, the template `orders://{id}`
// for the user the client acts as; another user's prompt `bobs_plan`, resource
// `notes://bob/secret` and workspace file `bob-only.txt`). Prints what it observed as one JSON
// object on the last line of stdout; the Rust test holds the assertions. Progress goes to stderr.
//
//   node mcp_surface.mjs --sdk v1|v2 [--era legacy|auto]
//        (--url http://127.0.0.1:PORT/mcp [--token T] | --command BIN [--arg A]...)

import { readFileSync } from 'node:fs';

const log = (...parts) => console.error('[mcp_surface]', ...parts);
// How long a notification that must come is given (a bound on a failure, not a wait for time).
const NOTIFY_TIMEOUT_MS = 20000;
const WATCHED = 'toolsmith://workspace/watched/log.txt';

function parseArgs(argv) {
  const args = { arg: [], era: 'legacy' };
  for (let i = 0; i < argv.length; i++) {
    // `--key value` or `--key=value` (needed when the value starts with `--`).
    const at = argv[i].indexOf('=');
    const key = (at < 0 ? argv[i] : argv[i].slice(0, at)).replace(/^--/, '');
    const value = at < 0 ? argv[++i] : argv[i].slice(at + 1);
    if (key === 'arg') args.arg.push(value);
    else args[key] = value;
  }
  if (!['v1', 'v2'].includes(args.sdk) || !(args.url || args.command)) {
    throw new Error('usage: --sdk v1|v2 [--era legacy|auto] (--url URL [--token T] | --command BIN --arg A...)');
  }
  return args;
}

/** Counts `notifications/resources/updated` per URI; waiters wake on each. */
class Updates {
  constructor() {
    this.uris = [];
    this.waiters = [];
  }
  hit(uri) {
    log('notifications/resources/updated', uri);
    this.uris.push(uri);
    for (const wake of this.waiters.splice(0)) wake();
  }
  /** True once `uri` was told, false if it was not within the timeout. */
  waitFor(uri) {
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(this.uris.includes(uri)), NOTIFY_TIMEOUT_MS);
      const check = () => {
        if (this.uris.includes(uri)) {
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

/** The installed version of a package (its package.json, which not every package exports). */
const versionOf = (pkg) =>
  JSON.parse(readFileSync(new URL(`./node_modules/${pkg}/package.json`, import.meta.url), 'utf8')).version;

/** The SDK generation's client, transports and how it reports a negotiated version. */
async function load(args) {
  if (args.sdk === 'v1') {
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
    const { ResourceUpdatedNotificationSchema } = await import('@modelcontextprotocol/sdk/types.js');
    return {
      name: `@modelcontextprotocol/sdk ${versionOf('@modelcontextprotocol/sdk')}`,
      Client,
      StdioClientTransport,
      StreamableHTTPClientTransport,
      options: {},
      onUpdated: (client, handler) =>
        client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => handler(n.params.uri)),
    };
  }
  const { Client, StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
  const { StdioClientTransport } = await import('@modelcontextprotocol/client/stdio');
  return {
    name: `@modelcontextprotocol/client ${versionOf('@modelcontextprotocol/client')}`,
    Client,
    StdioClientTransport,
    StreamableHTTPClientTransport,
    options: { versionNegotiation: { mode: args.era } },
    onUpdated: (client, handler) =>
      client.setNotificationHandler('notifications/resources/updated', (n) => handler(n.params.uri)),
  };
}

async function connect(sdk, args, updates) {
  const client = new sdk.Client({ name: 'toolsmith-surface-test', version: '1.0.0' }, { capabilities: {}, ...sdk.options });
  sdk.onUpdated(client, (uri) => updates.hit(uri));
  let transport;
  if (args.url) {
    const headers = args.token ? { Authorization: `Bearer ${args.token}` } : {};
    transport = new sdk.StreamableHTTPClientTransport(new URL(args.url), { requestInit: { headers } });
  } else {
    transport = new sdk.StdioClientTransport({ command: args.command, args: args.arg, stderr: 'inherit' });
  }
  // v1 hands the negotiated version to the transport; v2 also answers getNegotiatedProtocolVersion.
  let version = null;
  const original = transport.setProtocolVersion?.bind(transport);
  transport.setProtocolVersion = (v) => {
    version = v;
    original?.(v);
  };
  await client.connect(transport);
  const negotiated = client.getNegotiatedProtocolVersion?.() ?? version;
  return { client, transport, protocolVersion: negotiated };
}

/** `{code, message}` of a failed request (both generations' error classes carry `code`). */
function failure(e) {
  if (typeof e?.code !== 'number') throw e;
  return { code: e.code, message: String(e.message ?? '').replace(/^MCP error -?\d+: /, '') };
}

async function attempt(what) {
  try {
    return { ok: await what() };
  } catch (e) {
    return { error: failure(e) };
  }
}

/** Every page of a paginated list. */
async function all(list, key) {
  const items = [];
  let cursor;
  do {
    const page = await list(cursor ? { cursor } : undefined);
    items.push(...page[key]);
    cursor = page.nextCursor;
  } while (cursor);
  return items;
}

function content(result) {
  const [first] = result.contents;
  return { count: result.contents.length, uri: first.uri, mimeType: first.mimeType ?? null, text: first.text ?? null, blob: first.blob ?? null };
}

async function callTool(client, name, args) {
  const res = await client.callTool({ name, arguments: args });
  return { isError: Boolean(res.isError), structured: res.structuredContent ?? null, text: (res.content ?? []).filter((c) => c.type === 'text').map((c) => c.text) };
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const sdk = await load(args);
  const updates = new Updates();
  const { client, protocolVersion } = await connect(sdk, args, updates);
  const out = { client: sdk.name, protocolVersion };
  const caps = client.getServerCapabilities() ?? {};
  out.capabilities = { prompts: caps.prompts ?? null, resources: caps.resources ?? null, completions: Boolean(caps.completions) };

  // Prompts: listed with their arguments, got with arguments, a missing required one refused.
  const prompts = await all((p) => client.listPrompts(p), 'prompts');
  out.prompts = prompts.map((p) => ({ name: p.name, arguments: (p.arguments ?? []).map((a) => [a.name, Boolean(a.required)]) }));
  const got = await client.getPrompt({ name: 'review', arguments: { language: 'rust', focus: 'safety' } });
  out.got = got.messages;
  out.missingArgument = await attempt(() => client.getPrompt({ name: 'review', arguments: { focus: 'x' } }));

  // A workspace file the client writes, then the resources and templates.
  out.write = await callTool(client, 'write_file', { path: 'notes/plan.md', content: '# Plan\n- list resources\n', createParents: true });
  const resources = await all((p) => client.listResources(p), 'resources');
  out.resources = resources.map((r) => r.uri);
  const templates = await all((p) => client.listResourceTemplates(p), 'resourceTemplates');
  out.templates = templates.map((t) => t.uriTemplate);
  out.readFile = content(await client.readResource({ uri: 'toolsmith://workspace/notes/plan.md' }));
  out.readDefined = content(await client.readResource({ uri: 'notes://alice/todo' }));
  out.readTemplate = content(await client.readResource({ uri: 'orders://42' }));

  // A subscription to a file that does not exist yet, told when write_file writes it.
  let listen = null;
  if (protocolVersion >= '2026-07-28') {
    out.delivery = 'listen';
    out.subscribe = await attempt(async () => {
      listen = await client.listen({ resourceSubscriptions: [WATCHED] });
      // What the server's acknowledgment says it honours of the filter.
      return listen.honoredFilter ?? true;
    });
  } else {
    out.delivery = 'session';
    out.subscribe = await attempt(async () => {
      await client.subscribeResource({ uri: WATCHED });
      return true;
    });
  }
  out.writeUnwatched = await callTool(client, 'write_file', { path: 'other.txt', content: 'not watched' });
  out.writeWatched = await callTool(client, 'write_file', { path: 'watched/log.txt', content: 'v1', createParents: true });
  out.notified = await updates.waitFor(WATCHED);
  out.updated = updates.uris;

  // Another user's prompt, resource and file: not listed, not readable (by URI or by a path out).
  out.otherPrompt = await attempt(() => client.getPrompt({ name: 'bobs_plan', arguments: {} }));
  out.otherReads = {};
  for (const uri of [
    'notes://bob/secret',
    'toolsmith://workspace/bob-only.txt',
    'toolsmith://workspace/../../bob/workspace/bob-only.txt',
  ]) {
    out.otherReads[uri] = await attempt(async () => content(await client.readResource({ uri })));
  }
  await listen?.close();
  await client.close();
  return out;
}

try {
  console.log(JSON.stringify(await main()));
  process.exit(0);
} catch (e) {
  log('failed:', e?.stack ?? e);
  process.exit(1);
}
