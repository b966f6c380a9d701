// The tools of the bridge tests' upstream servers written with the official MCP TypeScript SDK
// (@modelcontextprotocol/sdk 1.x, McpServer), whatever transport serves them, and the HTTP
// server they listen with: mcp_upstream_http.mjs (streamable HTTP) and mcp_upstream_sse.mjs
// (the legacy HTTP+SSE).
//
// Tools:
// - echo(text)      returns the text (read-only)
// - add(a, b)       returns {sum} as structured content (read-only)
// - whoami()        returns the Authorization and X-Tenant headers it was called with
// - grow()          registers the tool `late` and sends notifications/tools/list_changed
// - wipe()          annotated destructive
// - big(size)       returns `size` characters (an answer larger than the client takes)

import { createServer } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';

const READ_ONLY = { readOnlyHint: true };
const text = (value) => ({ content: [{ type: 'text', text: value }] });

// One McpServer per session, as the SDK's examples do.
export function newServer() {
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
  server.registerTool(
    'big',
    { description: 'Return size characters.', inputSchema: { size: z.number().int().min(0) }, annotations: READ_ONLY },
    async ({ size }) => text('x'.repeat(size)),
  );
  return server;
}

// Serves `handle(req, res)` on 127.0.0.1 at the port given as the first argument (0 or none:
// an ephemeral one); prints one JSON line on stdout once listening: {"port": N}. Logs go to
// stderr, tagged `name`.
export function serve(name, handle) {
  const log = (...parts) => console.error(`[${name}]`, ...parts);
  const http = createServer(async (req, res) => {
    try {
      await handle(req, res);
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
}
