// sessions_spawn as an MCP task (issue 37) through the official MCP TypeScript SDK
// (@modelcontextprotocol/sdk 1.x, client.experimental.tasks, 2025-11-25's tasks) over streamable
// HTTP: the task follows its subagent — working while it runs, completed with the subagent's
// result —, a task cancelled cancels its subagent, and a subagent cancelled through `subagents`
// ends its task cancelled.
//
// Run by crates/toolsmith-server/tests/server/agent_sessions.rs, whose scripted model server
// answers `GATE …` only when --release is posted to, never answers `HANG …`, and echoes anything
// else; the agent `helper` exists. Prints what it observed as one JSON object on the last line
// of stdout; the Rust test holds the assertions.
//
//   node mcp_sessions_task.mjs --url http://127.0.0.1:PORT/mcp --release http://127.0.0.1:PORT/release

import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';

const log = (...parts) => console.error('[mcp_sessions_task.mjs]', ...parts);

function parseArgs(argv) {
  const args = {};
  for (let i = 0; i < argv.length; i += 2) args[argv[i].replace(/^--/, '')] = argv[i + 1];
  if (!args.url || !args.release) throw new Error('usage: --url URL --release URL');
  return args;
}

/** Asks `condition` of `read()` every 100 ms for at most 20 s; the last value read. */
async function until(what, read, condition) {
  const deadline = Date.now() + 20000;
  for (;;) {
    const value = await read();
    if (condition(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)} after 20 s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function main(args) {
  const out = {};
  const client = new Client({ name: 'toolsmith-sessions-task-ts', version: '1.0.0' }, { capabilities: {} });
  await client.connect(new StreamableHTTPClientTransport(new URL(args.url)));
  const tasks = client.experimental.tasks;
  const spawnTask = async (task, label) =>
    (await client.request(
      { method: 'tools/call', params: { name: 'sessions_spawn', arguments: { agent: 'helper', task, label } } },
      CreateTaskResultSchema,
      { task: { ttl: 60000 } },
    )).task;
  const subagent = async (label) => {
    const listed = await client.callTool({ name: 'subagents', arguments: { action: 'list' } });
    return (listed.structuredContent?.subagents ?? []).find((s) => s.label === label) ?? null;
  };

  // The SDK's own stream: the task made, polled, and its result — the subagent's.
  out.streamed = { types: [], task: null, result: null, error: null };
  const params = { name: 'sessions_spawn', arguments: { agent: 'helper', task: 'count the apples', label: 'apples' } };
  for await (const message of tasks.callToolStream(params, CallToolResultSchema, { task: { ttl: 60000 } })) {
    out.streamed.types.push(message.type);
    if (message.type === 'taskCreated') out.streamed.task = message.task;
    if (message.type === 'result') out.streamed.result = message.result;
    if (message.type === 'error') out.streamed.error = String(message.error?.message ?? message.error);
  }

  // A subagent held at the model's gate: its task is working while it runs, completed after.
  const gated = await spawnTask('GATE the pears', 'pears');
  out.gatedCreated = gated;
  out.gatedSubagent = await until('the pears subagent running', () => subagent('pears'), (s) => s?.status === 'running');
  out.gatedWhileRunning = await tasks.getTask(gated.taskId);
  await fetch(args.release, { method: 'POST' });
  out.gatedEnded = await until('the pears task ended', () => tasks.getTask(gated.taskId), (t) => t.status !== 'working');
  out.gatedResult = await tasks.getTaskResult(gated.taskId, CallToolResultSchema);

  // A task cancelled: its subagent is cancelled.
  const hung = await spawnTask('HANG over the plums', 'plums');
  await until('the plums subagent running', () => subagent('plums'), (s) => s?.status === 'running');
  out.taskCancelled = await tasks.cancelTask(hung.taskId);
  out.plumsAfter = await until('the plums subagent cancelled', () => subagent('plums'), (s) => s?.status !== 'running');

  // A subagent cancelled through `subagents`: its task ends cancelled.
  const other = await spawnTask('HANG over the figs', 'figs');
  const figs = await until('the figs subagent running', () => subagent('figs'), (s) => s?.status === 'running');
  const cancel = await client.callTool({ name: 'subagents', arguments: { action: 'cancel', id: figs.sessionKey } });
  out.figsCancel = cancel.structuredContent ?? null;
  out.figsTask = await until('the figs task ended', () => tasks.getTask(other.taskId), (t) => t.status !== 'working');

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
