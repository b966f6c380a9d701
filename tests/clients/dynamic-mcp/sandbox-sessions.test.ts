/*
 * dynamic-mcp v0.4.1's sandbox sessions (https://github.com/mcpland/dynamic-mcp, commit de8487f,
 * src/sandbox/register-session-tools.ts, src/sandbox/policy.ts, src/sandbox/session-registry.ts).
 * Copyright (c) 2025 mcpland, MIT License (the licence text is in ./LICENSE-dynamic-mcp).
 *
 * dynamic-mcp has no test that calls its `sandbox.*` tools through an MCP client (each needs a
 * Docker daemon); its tests of the pieces — tests/sandbox-session-registry.test.ts and
 * tests/sandbox-policy.test.ts — call the registry and the sanitizers directly. Ported to
 * Toolsmith: each of those cases that an MCP client can observe is made here through the tools
 * that use the piece (sanitizeShellCommand through `sandbox.exec`, sanitizeContainerId through
 * `sandbox.exec` / `sandbox.stop`, sanitizeDockerImage through `sandbox.initialize`, the registry
 * through `sandbox.session.list`), with the texts and shapes register-session-tools.ts answers;
 * the client is the official TypeScript SDK, over stdio (`toolsmith mcp --compat dynamic-mcp`)
 * and HTTP (`toolsmith serve --compat dynamic-mcp`), through ./harness.ts. Cases that cannot
 * apply are listed at the end of this file with the reason.
 */
import { mkdtemp } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';

import {
  AuditLogger,
  createMcpServer,
  InMemoryTransport,
  startHttpTransport,
  type CreateMcpServerOptions
} from './harness.js';

const openedClients: Client[] = [];
const openedServers: Array<{ close?: () => Promise<void>; stop?: () => Promise<void> }> = [];

afterEach(async () => {
  await Promise.all(openedClients.map((client) => client.close()));
  for (const server of openedServers) {
    await (server.close ?? server.stop)?.call(server);
  }
  openedClients.length = 0;
  openedServers.length = 0;
});

function buildOptions(
  storeRoot: string,
  sandbox: Partial<CreateMcpServerOptions['sandbox']> = {},
  dynamic: Partial<CreateMcpServerOptions['dynamic']> = {}
): CreateMcpServerOptions {
  return {
    profile: 'enterprise',
    dynamic: {
      backend: 'file',
      storeFilePath: join(storeRoot, 'tools.json'),
      maxTools: 32,
      readOnly: false,
      ...dynamic
    },
    sandbox: {
      dockerBinary: 'docker',
      memoryLimit: '512m',
      cpuLimit: '1',
      maxDependencies: 8,
      maxOutputBytes: 200_000,
      maxTimeoutMs: 60_000,
      allowedImages: ['node:lts-slim'],
      blockedPackages: [],
      sessionTimeoutSeconds: 1_800,
      maxSessions: 20,
      ...sandbox
    },
    security: {
      toolMaxConcurrency: 8,
      toolMaxCallsPerWindow: 1000,
      toolRateWindowMs: 60_000
    },
    auth: { mode: 'none' },
    auditLogger: new AuditLogger({ enabled: false })
  };
}

async function connectStdio(options: CreateMcpServerOptions): Promise<Client> {
  const server = await createMcpServer(options);
  const client = new Client({ name: 'sandbox-test-client', version: '1.0.0' });
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  openedServers.push(server);
  openedClients.push(client);
  await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);
  return client;
}

function getFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      if (!addr || typeof addr === 'string') {
        s.close();
        reject(new Error('Failed to get port'));
        return;
      }
      const port = addr.port;
      s.close((err) => (err ? reject(err) : resolve(port)));
    });
  });
}

async function connectHttp(options: CreateMcpServerOptions): Promise<Client> {
  const port = await getFreePort();
  const handle = await startHttpTransport(
    { host: '127.0.0.1', port, path: '/mcp', sessionTtlSeconds: 1800, maxRequestBytes: 1_000_000 },
    options
  );
  openedServers.push(handle);
  const client = new Client({ name: 'sandbox-test-client', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
  openedClients.push(client);
  return client;
}

function textOf(result: unknown): string {
  const content = (result as { content?: Array<{ type: string; text?: string }> }).content ?? [];
  return content.map((block) => block.text ?? '').join('\n');
}

interface SessionRecord {
  id: string;
  image: string;
  createdAt: string;
  lastUsedAt: string;
}

const transports = [
  ['stdio', connectStdio],
  ['http', connectHttp]
] as const;

describe.each(transports)('sandbox sessions over %s', (_transport, connect) => {
  it('initializes a session, runs commands in it, lists it and stops it', async () => {
    const storeRoot = await mkdtemp(join(tmpdir(), 'dynamic-mcp-sandbox-'));
    const client = await connect(buildOptions(storeRoot));

    const tools = await client.listTools();
    const byName = new Map(tools.tools.map((tool) => [tool.name, tool]));
    expect(byName.get('sandbox.session.list')?.title).toBe('List Sandbox Sessions');
    expect(byName.get('sandbox.initialize')?.title).toBe('Initialize Sandbox Session');
    expect(byName.get('sandbox.exec')?.title).toBe('Execute Shell Commands In Session');
    expect(byName.get('sandbox.run_js')?.title).toBe('Run JavaScript In Session');
    expect(byName.get('sandbox.stop')?.title).toBe('Stop Sandbox Session');

    const initialized = await client.callTool({ name: 'sandbox.initialize', arguments: {} });
    expect(initialized.isError).not.toBe(true);
    const structured = initialized.structuredContent as {
      sessionId: string;
      image: string;
      timeoutMs: number;
    };
    expect(structured.image).toBe('node:lts-slim');
    expect(structured.timeoutMs).toBe(1_800_000);
    expect(textOf(initialized)).toBe(`Sandbox session ready: ${structured.sessionId}`);
    const sessionId = structured.sessionId;

    const executed = await client.callTool({
      name: 'sandbox.exec',
      arguments: {
        sessionId,
        commands: ['echo hello > state.txt', 'cat state.txt', 'echo oops 1>&2', 'printf "a\\nb\\n\\n"']
      }
    });
    expect(executed.isError).not.toBe(true);
    expect(executed.structuredContent).toBeUndefined();
    expect(textOf(executed)).toBe(
      '$ echo hello > state.txt\n\n$ cat state.txt\nhello\n\n$ echo oops 1>&2\noops\n\n$ printf "a\\nb\\n\\n"\na\nb'
    );

    const listed = await client.callTool({ name: 'sandbox.session.list', arguments: {} });
    expect(listed.isError).not.toBe(true);
    const sessions = (listed.structuredContent as { sessions: SessionRecord[] }).sessions;
    expect(sessions.length).toBe(1);
    expect(sessions[0].id).toBe(sessionId);
    expect(sessions[0].image).toBe('node:lts-slim');
    expect(new Date(sessions[0].createdAt).toISOString()).toBe(sessions[0].createdAt);
    expect(new Date(sessions[0].lastUsedAt).toISOString()).toBe(sessions[0].lastUsedAt);
    expect(Date.parse(sessions[0].lastUsedAt)).toBeGreaterThanOrEqual(Date.parse(sessions[0].createdAt));
    expect(Object.keys(sessions[0]).sort()).toEqual(['createdAt', 'id', 'image', 'lastUsedAt']);
    expect(textOf(listed)).toBe(JSON.stringify(sessions, null, 2));

    const stopped = await client.callTool({ name: 'sandbox.stop', arguments: { sessionId } });
    expect(stopped.isError).not.toBe(true);
    expect(textOf(stopped)).toBe(`Stopped sandbox session: ${sessionId}`);

    const after = await client.callTool({ name: 'sandbox.session.list', arguments: {} });
    expect(after.structuredContent).toEqual({ sessions: [] });
    expect(textOf(after)).toBe('[]');

    const gone = await client.callTool({
      name: 'sandbox.exec',
      arguments: { sessionId, commands: ['ls'] }
    });
    expect(gone.isError).toBe(true);
    expect(textOf(gone)).toContain(`Sandbox session not found: ${sessionId}`);
  });

  it('runs JavaScript in the session as an ES module, and says when it printed nothing', async () => {
    const storeRoot = await mkdtemp(join(tmpdir(), 'dynamic-mcp-sandbox-js-'));
    const client = await connect(buildOptions(storeRoot));
    const initialized = await client.callTool({ name: 'sandbox.initialize', arguments: {} });
    const sessionId = (initialized.structuredContent as { sessionId: string }).sessionId;

    await client.callTool({
      name: 'sandbox.exec',
      arguments: { sessionId, commands: ['echo kept > state.txt'] }
    });
    const printed = await client.callTool({
      name: 'sandbox.run_js',
      arguments: {
        sessionId,
        code: "import { readFileSync } from 'node:fs';\nconst state = readFileSync('state.txt', 'utf8').trim();\nconsole.log(await Promise.resolve(state));\nconsole.error('to stderr');"
      }
    });
    expect(printed.isError).not.toBe(true);
    expect(textOf(printed)).toBe('kept\n\nto stderr');

    const silent = await client.callTool({
      name: 'sandbox.run_js',
      arguments: { sessionId, code: 'const x = 1;' }
    });
    expect(silent.isError).not.toBe(true);
    expect(textOf(silent)).toBe('JavaScript execution completed with no output.');

    const thrown = await client.callTool({
      name: 'sandbox.run_js',
      arguments: { sessionId, code: "throw new Error('boom');" }
    });
    expect(thrown.isError).toBe(true);
    expect(textOf(thrown)).toMatch(/^Command failed: /);
    expect(textOf(thrown)).toContain('boom');
  });
});

describe('sandbox.exec (sanitizeShellCommand)', () => {
  it('rejects commands with backtick or $() substitution, and blank commands', async () => {
    const storeRoot = await mkdtemp(join(tmpdir(), 'dynamic-mcp-sandbox-policy-'));
    const client = await connectStdio(buildOptions(storeRoot));
    const initialized = await client.callTool({ name: 'sandbox.initialize', arguments: {} });
    const sessionId = (initialized.structuredContent as { sessionId: string }).sessionId;

    for (const command of ['echo `whoami`', '`rm -rf /`', 'echo $(whoami)', '$(rm -rf /)', '   ', '\t']) {
      const result = await client.callTool({
        name: 'sandbox.exec',
        arguments: { sessionId, commands: [command] }
      });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toBe('Command rejected by policy.');
    }

    // Pipes and redirects are accepted.
    const piped = await client.callTool({
      name: 'sandbox.exec',
      arguments: { sessionId, commands: ['echo hello | grep h', 'echo hello > output.txt'] }
    });
    expect(piped.isError).not.toBe(true);
    expect(textOf(piped)).toBe('$ echo hello | grep h\nhello\n\n$ echo hello > output.txt');

    // The commands before a rejected one have run, as in dynamic-mcp's loop.
    const partly = await client.callTool({
      name: 'sandbox.exec',
      arguments: { sessionId, commands: ['echo first > first.txt', 'echo `id`'] }
    });
    expect(textOf(partly)).toBe('Command rejected by policy.');
    const first = await client.callTool({
      name: 'sandbox.exec',
      arguments: { sessionId, commands: ['cat first.txt'] }
    });
    expect(textOf(first)).toBe('$ cat first.txt\nfirst');
  });

  it('makes a failing command the call error, and validates its arguments', async () => {
    const storeRoot = await mkdtemp(join(tmpdir(), 'dynamic-mcp-sandbox-fail-'));
    const client = await connectStdio(buildOptions(storeRoot));
    const initialized = await client.callTool({ name: 'sandbox.initialize', arguments: {} });
    const sessionId = (initialized.structuredContent as { sessionId: string }).sessionId;

    const failed = await client.callTool({
      name: 'sandbox.exec',
      arguments: { sessionId, commands: ['echo before', 'ls /no-such-dir'] }
    });
    expect(failed.isError).toBe(true);
    expect(textOf(failed)).toMatch(/^Command failed: .*ls \/no-such-dir\n/);
    expect(textOf(failed)).toContain('No such file or directory');

    for (const args of [
      { sessionId, commands: [] },
      { sessionId, commands: Array.from({ length: 21 }, () => 'true') },
      { sessionId, commands: [''] },
      { sessionId, commands: ['true'], timeoutMs: 500 },
      { sessionId, commands: ['true'], timeoutMs: 120_001 },
      { commands: ['true'] }
    ]) {
      const result = await client.callTool({ name: 'sandbox.exec', arguments: args });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toContain('Input validation error: Invalid arguments for tool sandbox.exec');
    }
  });
});

describe('session ids (sanitizeContainerId) and images (sanitizeDockerImage)', () => {
  it('rejects invalid session ids and names unknown ones', async () => {
    const storeRoot = await mkdtemp(join(tmpdir(), 'dynamic-mcp-sandbox-ids-'));
    const client = await connectStdio(buildOptions(storeRoot));

    for (const id of ['.invalid', '-invalid', '_invalid', 'abc/def', 'abc:def', 'abc def', 'abc$def', 'abc;rm -rf /', '']) {
      const exec = await client.callTool({
        name: 'sandbox.exec',
        arguments: { sessionId: id, commands: ['ls'] }
      });
      expect(exec.isError).toBe(true);
      expect(textOf(exec)).toBe(`Invalid sandbox session id: ${id}`);
      const stop = await client.callTool({ name: 'sandbox.stop', arguments: { sessionId: id } });
      expect(stop.isError).toBe(true);
      expect(textOf(stop)).toBe(`Invalid sandbox session id: ${id}`);
    }

    const unknown = await client.callTool({
      name: 'sandbox.run_js',
      arguments: { sessionId: 'mcp-sbx-abcdef', code: 'console.log(1)' }
    });
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toBe('Sandbox session not found: mcp-sbx-abcdef');

    // Stopping a session that is not running removes nothing and says it is stopped
    // (dynamic-mcp's `docker rm -f`).
    const stopped = await client.callTool({ name: 'sandbox.stop', arguments: { sessionId: 'a' } });
    expect(stopped.isError).not.toBe(true);
    expect(textOf(stopped)).toBe('Stopped sandbox session: a');
  });

  it('takes only valid images, and only the allowed ones', async () => {
    const storeRoot = await mkdtemp(join(tmpdir(), 'dynamic-mcp-sandbox-images-'));
    const client = await connectStdio(buildOptions(storeRoot));

    for (const image of ['.invalid', '-invalid', ':invalid', 'image name', 'image;echo', 'image$var', `a${'b'.repeat(200)}`]) {
      const result = await client.callTool({ name: 'sandbox.initialize', arguments: { image } });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toBe(`Invalid Docker image: ${image}`);
    }
    const refused = await client.callTool({ name: 'sandbox.initialize', arguments: { image: 'ubuntu' } });
    expect(refused.isError).toBe(true);
    // dynamic-mcp's words, then (Toolsmith's rule: an error names the fix) the allowed list.
    expect(textOf(refused)).toMatch(/^Docker image not allowed: ubuntu \(.*node:lts-slim/);

    const allowed = await client.callTool({
      name: 'sandbox.initialize',
      arguments: { image: 'node:lts-slim' }
    });
    expect(allowed.isError).not.toBe(true);
    expect((allowed.structuredContent as { image: string }).image).toBe('node:lts-slim');
  });

  it('takes any valid image when no image list is configured', async () => {
    const storeRoot = await mkdtemp(join(tmpdir(), 'dynamic-mcp-sandbox-any-image-'));
    const client = await connectStdio(buildOptions(storeRoot, { allowedImages: [] }));
    const image = `a${'b'.repeat(199)}`;
    const result = await client.callTool({ name: 'sandbox.initialize', arguments: { image } });
    expect(result.isError).not.toBe(true);
    expect((result.structuredContent as { image: string }).image).toBe(image);
    const listed = await client.callTool({ name: 'sandbox.session.list', arguments: {} });
    expect((listed.structuredContent as { sessions: SessionRecord[] }).sessions[0].image).toBe(image);
  });
});

describe('SandboxSessionRegistry through sandbox.session.list', () => {
  it('lists sessions sorted by createdAt, and enforces max sessions limit', async () => {
    const storeRoot = await mkdtemp(join(tmpdir(), 'dynamic-mcp-sandbox-registry-'));
    const client = await connectStdio(buildOptions(storeRoot, { maxSessions: 2 }));

    const empty = await client.callTool({ name: 'sandbox.session.list', arguments: {} });
    expect(empty.structuredContent).toEqual({ sessions: [] });

    const ids: string[] = [];
    for (let i = 0; i < 2; i += 1) {
      const initialized = await client.callTool({ name: 'sandbox.initialize', arguments: {} });
      ids.push((initialized.structuredContent as { sessionId: string }).sessionId);
    }
    const third = await client.callTool({ name: 'sandbox.initialize', arguments: {} });
    expect(third.isError).toBe(true);
    expect(textOf(third)).toMatch(/limit reached/i);

    const listed = await client.callTool({ name: 'sandbox.session.list', arguments: {} });
    const sessions = (listed.structuredContent as { sessions: SessionRecord[] }).sessions;
    expect(sessions.map((session) => session.id)).toEqual(ids);

    // Using a session touches it: lastUsedAt moves on, createdAt stays.
    const before = sessions[0];
    await client.callTool({ name: 'sandbox.exec', arguments: { sessionId: ids[0], commands: ['true'] } });
    const touched = (
      (await client.callTool({ name: 'sandbox.session.list', arguments: {} })).structuredContent as {
        sessions: SessionRecord[];
      }
    ).sessions[0];
    expect(touched.createdAt).toBe(before.createdAt);
    expect(Date.parse(touched.lastUsedAt)).toBeGreaterThan(Date.parse(before.lastUsedAt));

    // Removing a session frees its place.
    await client.callTool({ name: 'sandbox.stop', arguments: { sessionId: ids[0] } });
    const again = await client.callTool({ name: 'sandbox.initialize', arguments: {} });
    expect(again.isError).not.toBe(true);
  });

  it('asks for the admin token when one is configured', async () => {
    const storeRoot = await mkdtemp(join(tmpdir(), 'dynamic-mcp-sandbox-admin-'));
    const adminToken = 'sandbox-admin-token';
    const client = await connectStdio(buildOptions(storeRoot, {}, { adminToken }));

    for (const [name, args] of [
      ['sandbox.session.list', {}],
      ['sandbox.initialize', {}],
      ['sandbox.exec', { sessionId: 'mcp-sbx-x', commands: ['ls'] }],
      ['sandbox.run_js', { sessionId: 'mcp-sbx-x', code: '1' }],
      ['sandbox.stop', { sessionId: 'mcp-sbx-x' }]
    ] as const) {
      const refused = await client.callTool({ name, arguments: { ...args, adminToken: 'wrong' } });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toContain('Unauthorized: invalid admin token.');
      const missing = await client.callTool({ name, arguments: args });
      expect(textOf(missing)).toContain('Unauthorized: invalid admin token.');
    }
    const initialized = await client.callTool({ name: 'sandbox.initialize', arguments: { adminToken } });
    expect(initialized.isError).not.toBe(true);
    const listed = await client.callTool({ name: 'sandbox.session.list', arguments: { adminToken } });
    expect((listed.structuredContent as { sessions: SessionRecord[] }).sessions.length).toBe(1);
  });
});

/*
 * Cases that cannot apply to Toolsmith, and why:
 * - tests/sandbox-session-registry.test.ts "cleanupIdleSessions removes stale sessions" and
 *   "cleanupAll removes all sessions": they mock Docker and call the registry directly; an MCP
 *   client cannot make a session idle for minutes or stop the server's sessions. Toolsmith's
 *   scavenger and its end of every session at shutdown are tested beside them, in
 *   crates/toolsmith-builtins/src/exec/sessions.rs.
 * - "returns a clone from get", "list returns clones", "touch on non-existent session does not
 *   throw", "remove returns false for non-existent session": object identity and return values
 *   of the registry's methods, which no MCP answer shows.
 * - tests/sandbox-policy.test.ts "rejects non-string input": the input schema refuses a
 *   non-string command before the sanitizer sees it (the validation case above).
 * - Anything that runs `docker`: Toolsmith's sessions are folders run in bubblewrap, not
 *   containers, so an image is checked and shown but never pulled, and `sandbox.run_js`'s
 *   `dependencies` are not installed in a session (docs/mcp.md, "Sandbox sessions").
 */
