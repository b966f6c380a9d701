// An upstream MCP server for the bridge tests, written with the official MCP TypeScript SDK
// (@modelcontextprotocol/sdk 1.x: McpServer and StreamableHTTPServerTransport, stateful sessions),
// served over streamable HTTP on 127.0.0.1.
//
//   node mcp_upstream_http.mjs [PORT]     (0 or none: an ephemeral port)
//   UPSTREAM_JSON_RESPONSES=1: answer POSTs with JSON instead of an SSE stream (bench/mcp-bridge.sh)
//
// Prints one JSON line on stdout once listening: {"port": N}. Logs go to stderr.
//
// Tools:
// - echo(text)      returns the text (read-only)
// - add(a, b)       returns {sum} as structured content (read-only)
// - whoami()        returns the Authorization and X-Tenant headers it was called with
// - grow()          registers the tool `late` and sends notifications/tools/list_changed
// - wipe()          annotated destructive

import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

const log = (...parts) => console.error('[mcp_upstream_http]', ...parts);
const READ_ONLY = { readOnlyHint: true };
const text = (value) => ({ content: [{ type: 'text', text: value }] });

// One McpServer per session, as the SDK's examples do.
function newServer() {
  const server = new McpServer({ name: 'toolsmith-upstream-http-test', version: '1.0.0' });
  server.registerTool(
    'echo',
    { description: 'Echo the text back.', inputSchema: { text: z.string() }, annotations: READ_ONLY },
    async ({ text: t }) => text(t),
  );
  server.registerTool(
    'add',
    {
      description: 'Add two integers.',
      inputSchema: { a: z.number().int(), b: z.number().int() },
      outputSchema: { sum: z.number().int() },
      annotations: READ_ONLY,
    },
    async ({ a, b }) => ({ ...text(String(a + b)), structuredContent: { sum: a + b } }),
  );
  server.registerTool(
    'whoami',
    { description: 'The credentials this call came with.', annotations: READ_ONLY },
    async (extra) => {
      const headers = extra.requestInfo?.headers ?? {};
      return text(`authorization=${headers.authorization ?? 'none'} tenant=${headers['x-tenant'] ?? 'none'}`);
    },
  );
  server.registerTool(
    'grow',
    { description: 'Add the tool `late` and tell the client.', annotations: READ_ONLY },
    async () => {
      // Registering on a connected server sends notifications/tools/list_changed.
      server.registerTool(
        'late',
        { description: 'A tool that appears after grow().', inputSchema: { word: z.string() }, annotations: READ_ONLY },
        async ({ word }) => text(word.toUpperCase()),
      );
      return text('grown');
    },
  );
  server.registerTool(
    'wipe',
    { description: 'Pretend to delete everything.', annotations: { readOnlyHint: false, destructiveHint: true } },
    async () => text('wiped'),
  );
  return server;
}

const transports = new Map();

async function readBody(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const raw = Buffer.concat(chunks).toString('utf8');
  return raw ? JSON.parse(raw) : undefined;
}

const http = createServer(async (req, res) => {
  try {
    if (new URL(req.url, 'http://x').pathname !== '/mcp') {
      res.writeHead(404).end();
      return;
    }
    const sessionId = req.headers['mcp-session-id'];
    const body = req.method === 'POST' ? await readBody(req) : undefined;
    let transport = sessionId ? transports.get(sessionId) : undefined;
    if (!transport) {
      if (req.method !== 'POST' || sessionId || !isInitializeRequest(body)) {
        // An unknown session (for example one this process never made: it was restarted).
        res.writeHead(404, { 'content-type': 'application/json' }).end(
          JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }),
        );
        return;
      }
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: process.env.UPSTREAM_JSON_RESPONSES === "1",
        onsessioninitialized: (id) => transports.set(id, transport),
      });
      transport.onclose = () => transport.sessionId && transports.delete(transport.sessionId);
      await newServer().connect(transport);
    }
    await transport.handleRequest(req, res, body);
  } catch (error) {
    log('request failed:', error);
    if (!res.headersSent) res.writeHead(500).end();
  }
});

const port = Number(process.argv[2] ?? 0);
http.listen(port, '127.0.0.1', () => {
  log('listening');
  console.log(JSON.stringify({ port: http.address().port }));
});
