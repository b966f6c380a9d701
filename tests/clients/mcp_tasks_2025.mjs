// 2025-11-25's tasks through the official MCP TypeScript SDK (@modelcontextprotocol/sdk 1.x,
// client.experimental.tasks): the server's capabilities.tasks, a tool's execution.taskSupport,
// a tools/call with a `task` field answered with a task, polled with tasks/get until it ended,
// its result read with tasks/result, tasks/list, tasks/cancel, notifications/tasks/status, and
// a plain callTool still answered at once.
//
// Run by crates/toolsmith-server/tests/server/mcp_tasks.rs, which creates the tools `answer`
// (returns {n: 42}) and `spin` (never ends) first. Prints what it observed as one JSON object on
// the last line of stdout; the Rust test holds the assertions.
//
//   node mcp_tasks_2025.mjs (--url http://127.0.0.1:PORT/mcp | --command BIN [--arg A]...)

import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateTaskResultSchema, TaskStatusNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const log = (...parts) => console.error('[mcp_tasks_2025.mjs]', ...parts);

function parseArgs(argv) {
  const args = { arg: [] };
  for (let i = 0; i < argv.length; i++) {
    const at = argv[i].indexOf('=');
    const key = (at < 0 ? argv[i] : argv[i].slice(0, at)).replace(/^--/, '');
    const value = at < 0 ? argv[++i] : argv[i].slice(at + 1);
    if (key === 'arg') args.arg.push(value);
    else args[key] = value;
  }
  if (!(args.url || args.command)) throw new Error('usage: (--url URL | --command BIN ...)');
  return args;
}

/** What a call's stream yielded: the message types in order, the task made, the result. */
async function stream(client, name, options) {
  const seen = { types: [], task: null, statuses: [], result: null, error: null };
  for await (const message of client.experimental.tasks.callToolStream({ name, arguments: {} }, undefined, options)) {
    seen.types.push(message.type);
    if (message.type === 'taskCreated') seen.task = message.task;
    if (message.type === 'taskStatus') seen.statuses.push(message.task.status);
    if (message.type === 'result') seen.result = message.result;
    if (message.type === 'error') seen.error = String(message.error?.message ?? message.error);
  }
  return seen;
}

async function main(args) {
  const out = {};
  const client = new Client({ name: 'toolsmith-tasks-2025-ts', version: '1.0.0' }, { capabilities: {} });
  const notified = [];
  client.setNotificationHandler(TaskStatusNotificationSchema, (n) => notified.push({ taskId: n.params.taskId, status: n.params.status }));
  const transport = args.url
    ? new StreamableHTTPClientTransport(new URL(args.url))
    : new StdioClientTransport({ command: args.command, args: args.arg, stderr: 'inherit' });
  await client.connect(transport);
  out.serverTasks = client.getServerCapabilities()?.tasks ?? null;

  const { tools } = await client.listTools();
  out.execution = Object.fromEntries(tools.map((t) => [t.name, t.execution ?? null]));

  // The SDK asks for a task by itself: the server takes tasks and the tool says it may run as one.
  out.auto = await stream(client, 'answer');
  // A ttl asked for is the task's.
  out.withTtl = await stream(client, 'answer', { task: { ttl: 120000 } });
  const id = out.auto.task?.taskId;
  out.got = id ? await client.experimental.tasks.getTask(id) : null;
  out.listed = (await client.experimental.tasks.listTasks()).tasks.map((t) => ({ taskId: t.taskId, ttl: t.ttl }));

  // A task cancelled: the answer is the task, cancelled; reading it says so.
  const created = await client.request(
    { method: 'tools/call', params: { name: 'spin', arguments: {} } },
    CreateTaskResultSchema,
    { task: { ttl: 60000 } },
  );
  out.spinCreated = created.task;
  out.cancelled = await client.experimental.tasks.cancelTask(created.task.taskId);
  out.afterCancel = await client.experimental.tasks.getTask(created.task.taskId);
  try {
    await client.experimental.tasks.cancelTask(created.task.taskId);
    out.cancelAgain = 'accepted';
  } catch (e) {
    out.cancelAgain = String(e?.message ?? e);
  }

  // A plain call is answered at once, as before.
  const direct = await client.callTool({ name: 'answer', arguments: {} });
  out.direct = { isError: Boolean(direct.isError), structured: direct.structuredContent ?? null };
  out.notified = notified;

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
