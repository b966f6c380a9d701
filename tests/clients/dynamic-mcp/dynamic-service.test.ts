/*
 * Ported from dynamic-mcp v0.4.1 (https://github.com/mcpland/dynamic-mcp, commit de8487f,
 * tests/dynamic-service.test.ts). Copyright (c) 2025 mcpland, MIT License (the licence text is in ./LICENSE-dynamic-mcp).
 *
 * Ported to Toolsmith: each test's calls and assertions are dynamic-mcp's own; only how the
 * client reaches the server changed — the imports of dynamic-mcp's server (createMcpServer, InMemoryTransport, AuditLogger) now come
 * from ./harness.ts, which starts the real `toolsmith mcp --compat dynamic-mcp` instead.
 * Cases that cannot apply are listed at the end of this file with the reason.
 */
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, describe, expect, it } from 'vitest';

import { AuditLogger, createMcpServer, InMemoryTransport } from './harness.js';

const openedClients: Client[] = [];
const openedServers: Awaited<ReturnType<typeof createMcpServer>>[] = [];

afterEach(async () => {
  await Promise.all(openedClients.map((client) => client.close()));
  await Promise.all(openedServers.map((server) => server.close()));
  openedClients.length = 0;
  openedServers.length = 0;
});

describe('dynamic tool service', () => {
  it('creates and registers dynamic tools at runtime', async () => {
    const storeRoot = await mkdtemp(join(tmpdir(), 'dynamic-mcp-service-test-'));
    const server = await createMcpServer({
      ...buildServerConfig(storeRoot)
    });
    const client = new Client({ name: 'test-client', version: '1.0.0' });
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();

    openedServers.push(server);
    openedClients.push(client);

    await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);

    const createResult = await client.callTool({
      name: 'dynamic.tool.create',
      arguments: {
        tool: {
          name: 'dynamic.hello',
          description: 'hello dynamic',
          code: 'console.log(args.name);'
        }
      }
    });

    expect(createResult.isError).not.toBe(true);

    const tools = await client.listTools();
    expect(tools.tools.some((tool) => tool.name === 'dynamic.hello')).toBe(true);

    const toolGet = await client.callTool({
      name: 'dynamic.tool.get',
      arguments: {
        name: 'dynamic.hello'
      }
    });
    expect(toolGet.isError).not.toBe(true);
    expect(toolGet.structuredContent).toMatchObject({
      tool: {
        name: 'dynamic.hello',
        description: 'hello dynamic'
      }
    });

    const firstUpdate = await client.callTool({
      name: 'dynamic.tool.update',
      arguments: {
        name: 'dynamic.hello',
        expectedRevision: 1,
        patch: {
          description: 'hello dynamic v2'
        }
      }
    });
    expect(firstUpdate.isError).not.toBe(true);

    const staleUpdate = await client.callTool({
      name: 'dynamic.tool.update',
      arguments: {
        name: 'dynamic.hello',
        expectedRevision: 1,
        patch: {
          description: 'hello dynamic stale'
        }
      }
    });
    expect(staleUpdate.isError).toBe(true);
    expect(staleUpdate.content[0]?.type).toBe('text');
  });

  it('enforces admin token for privileged dynamic tools when configured', async () => {
    const storeRoot = await mkdtemp(join(tmpdir(), 'dynamic-mcp-service-auth-test-'));
    const server = await createMcpServer({
      ...buildServerConfig(storeRoot),
      dynamic: {
        backend: 'file',
        storeFilePath: join(storeRoot, 'tools.json'),
        maxTools: 10,
        readOnly: false,
        adminToken: 'top-secret'
      }
    });
    const client = new Client({ name: 'test-client', version: '1.0.0' });
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();

    openedServers.push(server);
    openedClients.push(client);

    await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);

    const unauthorized = await client.callTool({
      name: 'dynamic.tool.list',
      arguments: {}
    });
    expect(unauthorized.isError).toBe(true);

    const authorized = await client.callTool({
      name: 'dynamic.tool.list',
      arguments: {
        adminToken: 'top-secret'
      }
    });
    expect(authorized.isError).not.toBe(true);
  });

  it('blocks dynamic write operations when registry is read-only', async () => {
    const storeRoot = await mkdtemp(join(tmpdir(), 'dynamic-mcp-service-readonly-test-'));
    const server = await createMcpServer({
      ...buildServerConfig(storeRoot),
      dynamic: {
        backend: 'file',
        storeFilePath: join(storeRoot, 'tools.json'),
        maxTools: 10,
        readOnly: true
      }
    });
    const client = new Client({ name: 'test-client', version: '1.0.0' });
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();

    openedServers.push(server);
    openedClients.push(client);

    await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);

    const createResult = await client.callTool({
      name: 'dynamic.tool.create',
      arguments: {
        tool: {
          name: 'dynamic.readonly',
          description: 'should be blocked',
          code: 'return 1;'
        }
      }
    });

    expect(createResult.isError).toBe(true);
    expect(createResult.content[0]?.type).toBe('text');
  });

  it('deletes a dynamic tool and unregisters it', async () => {
    const storeRoot = await mkdtemp(join(tmpdir(), 'dynamic-mcp-service-delete-'));
    const server = await createMcpServer({
      ...buildServerConfig(storeRoot)
    });
    const client = new Client({ name: 'test-client', version: '1.0.0' });
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();

    openedServers.push(server);
    openedClients.push(client);

    await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);

    await client.callTool({
      name: 'dynamic.tool.create',
      arguments: {
        tool: {
          name: 'dynamic.deleteme',
          description: 'will be deleted',
          code: 'return 1;'
        }
      }
    });

    let tools = await client.listTools();
    expect(tools.tools.some((t) => t.name === 'dynamic.deleteme')).toBe(true);

    const deleteResult = await client.callTool({
      name: 'dynamic.tool.delete',
      arguments: {
        name: 'dynamic.deleteme'
      }
    });

    expect(deleteResult.isError).not.toBe(true);

    tools = await client.listTools();
    expect(tools.tools.some((t) => t.name === 'dynamic.deleteme')).toBe(false);
  });

  it('enables and disables a dynamic tool', async () => {
    const storeRoot = await mkdtemp(join(tmpdir(), 'dynamic-mcp-service-enable-'));
    const server = await createMcpServer({
      ...buildServerConfig(storeRoot)
    });
    const client = new Client({ name: 'test-client', version: '1.0.0' });
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();

    openedServers.push(server);
    openedClients.push(client);

    await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);

    await client.callTool({
      name: 'dynamic.tool.create',
      arguments: {
        tool: {
          name: 'dynamic.toggletool',
          description: 'toggle test',
          code: 'return 1;'
        }
      }
    });

    // Disable the tool
    const disableResult = await client.callTool({
      name: 'dynamic.tool.enable',
      arguments: {
        name: 'dynamic.toggletool',
        enabled: false
      }
    });
    expect(disableResult.isError).not.toBe(true);

    // Disabled tool should be unregistered from runtime tools
    let tools = await client.listTools();
    expect(tools.tools.some((t) => t.name === 'dynamic.toggletool')).toBe(false);

    // Re-enable the tool
    const enableResult = await client.callTool({
      name: 'dynamic.tool.enable',
      arguments: {
        name: 'dynamic.toggletool',
        enabled: true
      }
    });
    expect(enableResult.isError).not.toBe(true);

    tools = await client.listTools();
    expect(tools.tools.some((t) => t.name === 'dynamic.toggletool')).toBe(true);
  });

  it('rejects reserved tool name prefix dynamic.tool.*', async () => {
    const storeRoot = await mkdtemp(join(tmpdir(), 'dynamic-mcp-service-reserved-'));
    const server = await createMcpServer({
      ...buildServerConfig(storeRoot)
    });
    const client = new Client({ name: 'test-client', version: '1.0.0' });
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();

    openedServers.push(server);
    openedClients.push(client);

    await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);

    const result = await client.callTool({
      name: 'dynamic.tool.create',
      arguments: {
        tool: {
          name: 'dynamic.tool.evil',
          description: 'reserved',
          code: 'return 1;'
        }
      }
    });

    expect(result.isError).toBe(true);
    expect((result.content[0] as { text: string }).text).toMatch(/reserved/i);
  });

  it('rejects reserved built-in tool name run_js_ephemeral', async () => {
    const storeRoot = await mkdtemp(join(tmpdir(), 'dynamic-mcp-service-reserved-builtin-'));
    const server = await createMcpServer({
      ...buildServerConfig(storeRoot)
    });
    const client = new Client({ name: 'test-client', version: '1.0.0' });
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();

    openedServers.push(server);
    openedClients.push(client);

    await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);

    const result = await client.callTool({
      name: 'dynamic.tool.create',
      arguments: {
        tool: {
          name: 'run_js_ephemeral',
          description: 'reserved',
          code: 'return 1;'
        }
      }
    });

    expect(result.isError).toBe(true);
    expect((result.content[0] as { text: string }).text).toMatch(/reserved/i);
  });

  it('lists dynamic tools with and without code', async () => {
    const storeRoot = await mkdtemp(join(tmpdir(), 'dynamic-mcp-service-list-'));
    const server = await createMcpServer({
      ...buildServerConfig(storeRoot)
    });
    const client = new Client({ name: 'test-client', version: '1.0.0' });
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();

    openedServers.push(server);
    openedClients.push(client);

    await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);

    await client.callTool({
      name: 'dynamic.tool.create',
      arguments: {
        tool: {
          name: 'dynamic.listed',
          description: 'List test',
          code: 'console.log("hello");'
        }
      }
    });

    // List without code
    const listResult = await client.callTool({
      name: 'dynamic.tool.list',
      arguments: { includeCode: false }
    });
    expect(listResult.isError).not.toBe(true);
    const toolsWithoutCode = listResult.structuredContent as {
      tools: Array<{ name: string; code?: string; codeSizeBytes: number }>;
    };
    const found = toolsWithoutCode.tools.find((t) => t.name === 'dynamic.listed');
    expect(found).toBeDefined();
    expect(found?.code).toBeUndefined();
    expect(found?.codeSizeBytes).toBeGreaterThan(0);

    // List with code
    const listWithCode = await client.callTool({
      name: 'dynamic.tool.list',
      arguments: { includeCode: true }
    });
    const toolsWithCode = listWithCode.structuredContent as {
      tools: Array<{ name: string; code?: string }>;
    };
    const foundWithCode = toolsWithCode.tools.find((t) => t.name === 'dynamic.listed');
    expect(foundWithCode?.code).toBe('console.log("hello");');
  });

  it('get returns error for non-existent tool', async () => {
    const storeRoot = await mkdtemp(join(tmpdir(), 'dynamic-mcp-service-get-missing-'));
    const server = await createMcpServer({
      ...buildServerConfig(storeRoot)
    });
    const client = new Client({ name: 'test-client', version: '1.0.0' });
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();

    openedServers.push(server);
    openedClients.push(client);

    await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);

    const result = await client.callTool({
      name: 'dynamic.tool.get',
      arguments: { name: 'nonexistent.tool' }
    });

    expect(result.isError).toBe(true);
    expect((result.content[0] as { text: string }).text).toMatch(/not found/i);
  });

  it('delete returns error for non-existent tool', async () => {
    const storeRoot = await mkdtemp(join(tmpdir(), 'dynamic-mcp-service-delete-missing-'));
    const server = await createMcpServer({
      ...buildServerConfig(storeRoot)
    });
    const client = new Client({ name: 'test-client', version: '1.0.0' });
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();

    openedServers.push(server);
    openedClients.push(client);

    await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);

    const result = await client.callTool({
      name: 'dynamic.tool.delete',
      arguments: { name: 'nonexistent.tool' }
    });

    expect(result.isError).toBe(true);
    expect((result.content[0] as { text: string }).text).toMatch(/not found/i);
  });
});

function buildServerConfig(storeRoot: string) {
  return {
    profile: 'mvp' as const,
    dynamic: {
      backend: 'file',
      storeFilePath: join(storeRoot, 'tools.json'),
      maxTools: 10,
      readOnly: false
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
      maxSessions: 20
    },
    security: {
      toolMaxConcurrency: 8,
      toolMaxCallsPerWindow: 1000,
      toolRateWindowMs: 60_000
    },
    auth: {
      mode: 'none'
    },
    auditLogger: createTestAuditLogger()
  };
}

function createTestAuditLogger(): AuditLogger {
  return new AuditLogger({
    enabled: false,
    filePath: '/tmp/dynamic-mcp-test-audit.log',
    maxEventBytes: 10_000,
    maxFileBytes: 100_000,
    maxFiles: 3,
    service: 'dynamic-mcp-test',
    serviceVersion: 'test'
  });
}

/*
 * Cases that cannot apply to Toolsmith: none — every case above runs against it.
 */
