/**
 * How the ported dynamic-mcp tests reach Toolsmith: the one part of them that is not theirs.
 *
 * dynamic-mcp's tests build its server in-process (`createMcpServer(options)` joined to the
 * client by an `InMemoryTransport` pair, or `startHttpTransport(http, options)`). The ported
 * files import these names from here instead, and here they start the real binary:
 *
 * - `createMcpServer(options)` + `InMemoryTransport.createLinkedPair()` + `server.connect(…)`:
 *   `toolsmith mcp --compat dynamic-mcp` as a child process, spoken to over its stdio by the
 *   official TypeScript SDK's `StdioClientTransport`. The client end of the "linked pair" hands
 *   the client's messages to that transport, so the tests' `Client` talks to the real process.
 * - `startHttpTransport(http, options)`: `toolsmith serve --compat dynamic-mcp` on 127.0.0.1 at
 *   the port the test picked, ready once it prints its `listening on` line; `stop()` ends it.
 *
 * The options become what an operator of dynamic-mcp would set: its own environment variables
 * (`MCP_PROFILE`, `MCP_DYNAMIC_*`, `MCP_ADMIN_TOKEN`, `MCP_REQUIRE_ADMIN_TOKEN`, `MCP_SANDBOX_*`,
 * `MCP_TOOL_*`, `MCP_EXPERIMENTAL_*`, `MCP_HTTP_*`, `MCP_AUTH_MODE`), which Toolsmith reads in
 * compat mode (docs/mcp.md). Three things do not map one to one:
 * - the file backend's path (`dynamic.storeFilePath`): Toolsmith keeps its tools in its own
 *   store, so the path names Toolsmith's data directory instead (`<storeFilePath>.toolsmith`);
 *   tests that share one store file share one Toolsmith store, which is what they check;
 * - the `auditLogger` object: dynamic-mcp's tests pass a disabled one; `AuditLogger` here is a
 *   stand-in that only carries its options;
 * - the programs `upstream.mcp.attach` may start: Toolsmith starts only those its operator
 *   allowed (`mcp_allowed_commands`, docs/mcp.md "Profiles"), so with upstream attach on the
 *   operator here allows the Node that runs these tests (the fixture's interpreter).
 *
 * A server that refuses to start (dynamic-mcp's `createMcpServer` rejects) is found by starting
 * the binary once with no client (stdin closed): a configuration it refuses makes it exit at
 * once with its error, which `createMcpServer` rejects with.
 *
 * The binary: `TOOLSMITH_BIN` (the Rust driver sets it to the binary cargo built), else
 * `target/debug/toolsmith` of this repository.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

const here = dirname(fileURLToPath(import.meta.url));

export function toolsmithBinary(): string {
  const bin = process.env.TOOLSMITH_BIN ?? resolve(here, '../../../target/debug/toolsmith');
  if (!existsSync(bin)) {
    throw new Error(
      `the toolsmith binary is not at ${bin}: build it (cargo build -p toolsmith) or set TOOLSMITH_BIN`
    );
  }
  return bin;
}

/* ------------------------------------------------------------------ */
/*  dynamic-mcp's options, as its tests write them                    */
/* ------------------------------------------------------------------ */

export interface CreateMcpServerOptions {
  profile: 'mvp' | 'enterprise';
  dynamic: {
    backend: 'file' | 'postgres' | string;
    storeFilePath: string;
    maxTools: number;
    readOnly: boolean;
    requireAdminToken?: boolean;
    adminToken?: string;
  };
  sandbox: {
    executionEngine?: string;
    dockerBinary: string;
    memoryLimit: string;
    cpuLimit: string;
    maxDependencies: number;
    maxOutputBytes: number;
    maxTimeoutMs: number;
    allowedImages: string[];
    blockedPackages: string[];
    sessionTimeoutSeconds: number;
    maxSessions: number;
  };
  security: {
    toolMaxConcurrency: number;
    toolMaxCallsPerWindow: number;
    toolRateWindowMs: number;
  };
  auth: { mode: 'none' | 'jwt' | string };
  experimental?: {
    upstreamMcpAttach?: boolean;
    upstreamMcpAttachMax?: number;
  };
  auditLogger?: AuditLogger;
}

export interface HttpTransportOptions {
  host: string;
  port: number;
  path: string;
  sessionTtlSeconds: number;
  maxRequestBytes: number;
}

/** Stands in for dynamic-mcp's `AuditLogger`: the tests pass a disabled one. */
export class AuditLogger {
  constructor(readonly options: Record<string, unknown>) {}
}

/** Toolsmith's data directory for dynamic-mcp's store file. */
export function dataDirFor(storeFilePath: string): string {
  return `${storeFilePath}.toolsmith`;
}

/** The environment an operator of dynamic-mcp would give it for `options`. */
export function environmentFor(options: CreateMcpServerOptions): Record<string, string> {
  const env: Record<string, string> = {};
  // Nothing of the caller's own Toolsmith settings leaks in.
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith('TOOLSMITH_') && !key.startsWith('MCP_') && key !== 'RUST_LOG') {
      env[key] = value;
    }
  }
  const set = (key: string, value: unknown) => {
    if (value !== undefined) env[key] = String(value);
  };
  set('TOOLSMITH_DATA_DIR', dataDirFor(options.dynamic.storeFilePath));
  set('MCP_PROFILE', options.profile);
  set('MCP_DYNAMIC_BACKEND', options.dynamic.backend);
  set('MCP_DYNAMIC_STORE', options.dynamic.storeFilePath);
  set('MCP_DYNAMIC_MAX_TOOLS', options.dynamic.maxTools);
  set('MCP_DYNAMIC_READ_ONLY', options.dynamic.readOnly);
  set('MCP_REQUIRE_ADMIN_TOKEN', options.dynamic.requireAdminToken);
  set('MCP_ADMIN_TOKEN', options.dynamic.adminToken);
  set('MCP_EXECUTION_ENGINE', options.sandbox.executionEngine);
  set('MCP_SANDBOX_DOCKER_BIN', options.sandbox.dockerBinary);
  set('MCP_SANDBOX_MEMORY_LIMIT', options.sandbox.memoryLimit);
  set('MCP_SANDBOX_CPU_LIMIT', options.sandbox.cpuLimit);
  set('MCP_SANDBOX_MAX_DEPENDENCIES', options.sandbox.maxDependencies);
  set('MCP_SANDBOX_MAX_OUTPUT_BYTES', options.sandbox.maxOutputBytes);
  set('MCP_SANDBOX_MAX_TIMEOUT_MS', options.sandbox.maxTimeoutMs);
  set('MCP_SANDBOX_ALLOWED_IMAGES', options.sandbox.allowedImages.join(','));
  set('MCP_SANDBOX_BLOCKED_PACKAGES', options.sandbox.blockedPackages.join(','));
  set('MCP_SANDBOX_SESSION_TIMEOUT_SECONDS', options.sandbox.sessionTimeoutSeconds);
  set('MCP_SANDBOX_MAX_SESSIONS', options.sandbox.maxSessions);
  set('MCP_TOOL_MAX_CONCURRENCY', options.security.toolMaxConcurrency);
  set('MCP_TOOL_MAX_CALLS_PER_WINDOW', options.security.toolMaxCallsPerWindow);
  set('MCP_TOOL_RATE_WINDOW_MS', options.security.toolRateWindowMs);
  set('MCP_AUTH_MODE', options.auth.mode);
  set('MCP_EXPERIMENTAL_UPSTREAM_MCP_ATTACH', options.experimental?.upstreamMcpAttach);
  set('MCP_EXPERIMENTAL_UPSTREAM_MCP_ATTACH_MAX', options.experimental?.upstreamMcpAttachMax);
  if (options.experimental?.upstreamMcpAttach) {
    // The operator allows the program the tests attach (Toolsmith's mcp_allowed_commands).
    const dir = dataDirFor(options.dynamic.storeFilePath);
    mkdirSync(dir, { recursive: true });
    const config = join(dir, 'toolsmith.toml');
    writeFileSync(config, `mcp_allowed_commands = [${JSON.stringify(process.execPath)}]\n`);
    set('TOOLSMITH_CONFIG', config);
  }
  set('MCP_AUDIT_ENABLED', options.auditLogger?.options.enabled);
  return env;
}

/* ------------------------------------------------------------------ */
/*  stdio: `toolsmith mcp --compat dynamic-mcp`                       */
/* ------------------------------------------------------------------ */

const MCP_ARGS = ['mcp', '--compat', 'dynamic-mcp'];

/**
 * Starts the binary with no client: with a configuration it accepts it opens its store, finds
 * stdin closed and says so ("connection closed"); with one it refuses it exits with the error.
 */
async function checkStarts(env: Record<string, string>): Promise<void> {
  const child = spawn(toolsmithBinary(), MCP_ARGS, { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    stderr += chunk;
  });
  const code = await new Promise<number | null>((done, fail) => {
    child.once('error', fail);
    child.once('close', (exitCode) => done(exitCode));
  });
  if (code !== 0 && !/connection closed/.test(stderr)) {
    throw new Error(`toolsmith refused to start (exit ${code}): ${stderr.trim()}`);
  }
}

/** The server end of a linked pair: `server.connect` binds the client end to the process. */
class ServerEnd {
  constructor(readonly clientEnd: LinkedTransport) {}
}

/**
 * The client end of a linked pair: a `Transport` that forwards to the real transport once the
 * server end is connected (before that, `start` and `send` wait for it).
 */
class LinkedTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: unknown) => void;
  sessionId?: string;
  private target?: Transport;
  private readonly bound: Promise<Transport>;
  private bind!: (transport: Transport) => void;

  constructor() {
    this.bound = new Promise((done) => {
      this.bind = done;
    });
  }

  attach(real: Transport): void {
    real.onmessage = (message, extra) => this.onmessage?.(message, extra as never);
    real.onclose = () => this.onclose?.();
    real.onerror = (error) => this.onerror?.(error);
    this.target = real;
    this.bind(real);
  }

  async start(): Promise<void> {
    await (await this.bound).start();
  }

  async send(message: JSONRPCMessage, options?: Parameters<Transport['send']>[1]): Promise<void> {
    await (await this.bound).send(message, options);
  }

  async close(): Promise<void> {
    if (this.target) {
      await this.target.close();
    } else {
      this.onclose?.();
    }
  }
}

export const InMemoryTransport = {
  createLinkedPair(): [LinkedTransport, ServerEnd] {
    const clientEnd = new LinkedTransport();
    return [clientEnd, new ServerEnd(clientEnd)];
  }
};

export interface ToolsmithStdioServer {
  connect(end: ServerEnd): Promise<void>;
  close(): Promise<void>;
  /** What the process wrote to stderr so far (its logs). */
  stderr(): string;
}

export async function createMcpServer(options: CreateMcpServerOptions): Promise<ToolsmithStdioServer> {
  const env = environmentFor(options);
  await checkStarts(env);
  let transport: StdioClientTransport | undefined;
  let logs = '';
  return {
    async connect(end: ServerEnd) {
      transport = new StdioClientTransport({
        command: toolsmithBinary(),
        args: MCP_ARGS,
        env,
        stderr: 'pipe'
      });
      transport.stderr?.on('data', (chunk: Buffer) => {
        logs += chunk.toString('utf8');
      });
      end.clientEnd.attach(transport);
    },
    async close() {
      await transport?.close();
    },
    stderr: () => logs
  };
}

/* ------------------------------------------------------------------ */
/*  HTTP: `toolsmith serve --compat dynamic-mcp`                      */
/* ------------------------------------------------------------------ */

export interface HttpHandle {
  stop(): Promise<void>;
}

export async function startHttpTransport(
  http: HttpTransportOptions,
  options: CreateMcpServerOptions
): Promise<HttpHandle> {
  if (http.path !== '/mcp') {
    throw new Error(`Toolsmith serves MCP at /mcp only, not ${http.path}`);
  }
  const env = environmentFor(options);
  env.MCP_HTTP_SESSION_TTL_SECONDS = String(http.sessionTtlSeconds);
  env.MCP_HTTP_MAX_REQUEST_BYTES = String(http.maxRequestBytes);
  const child: ChildProcess = spawn(
    toolsmithBinary(),
    ['serve', '--compat', 'dynamic-mcp', '--bind', http.host, '--port', String(http.port)],
    { env, stdio: ['ignore', 'pipe', 'pipe'] }
  );
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((done) => child.once('close', (code) => done(code)));
  await new Promise<void>((ready, fail) => {
    let stdout = '';
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => {
      stdout += chunk;
      if (stdout.includes('listening on')) ready();
    });
    child.once('error', fail);
    void exited.then((code) =>
      fail(new Error(`toolsmith serve exited (${code}) before listening: ${stderr.trim()}`))
    );
  });
  return {
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
      }
      await exited;
    }
  };
}

/** The fixtures directory of the ported tests. */
export const fixturesDir = join(here, 'fixtures');
