// An upstream MCP server for the bridge tests, written with the official MCP TypeScript SDK
// (@modelcontextprotocol/sdk 1.x: McpServer and StreamableHTTPServerTransport, stateful sessions),
// served over streamable HTTP on 127.0.0.1.
//
//   node mcp_upstream_http.mjs [PORT]     (0 or none: an ephemeral port)
//   UPSTREAM_JSON_RESPONSES=1: answer POSTs with JSON instead of an SSE stream (bench/mcp-bridge.sh)
//   UPSTREAM_UNKNOWN_SESSION=400: answer an unknown session as the SDK's examples and the reference
//     server-everything do (400, "Bad Request: No valid session ID provided", id null) instead of
//     the specification's 404
//
// Prints one JSON line on stdout once listening: {"port": N}. Logs go to stderr.
//
// Tools: mcp_upstream_tools.mjs.

import { randomUUID } from 'node:crypto';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { newServer, serve } from './mcp_upstream_tools.mjs';

const transports = new Map();

async function readBody(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const raw = Buffer.concat(chunks).toString('utf8');
  return raw ? JSON.parse(raw) : undefined;
}

serve('mcp_upstream_http', async (req, res) => {
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
      if (process.env.UPSTREAM_UNKNOWN_SESSION === '400') {
        res.writeHead(400, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            jsonrpc: '2.0',
            error: { code: -32000, message: 'Bad Request: No valid session ID provided' },
            id: null,
          }),
        );
        return;
      }
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
});
