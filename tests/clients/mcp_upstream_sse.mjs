// An upstream MCP server for the bridge tests, written with the official MCP TypeScript SDK
// (@modelcontextprotocol/sdk 1.x: McpServer and SSEServerTransport), served over the legacy
// HTTP+SSE transport of MCP 2024-11-05 on 127.0.0.1: `GET /sse` opens a session's stream, whose
// `endpoint` event names `/messages?sessionId=…` (relative), where the client POSTs.
//
//   node mcp_upstream_sse.mjs [PORT]     (0 or none: an ephemeral port)
//
// Prints one JSON line on stdout once listening: {"port": N}. Logs go to stderr.
//
// Tools: mcp_upstream_tools.mjs.

import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { newServer, serve } from './mcp_upstream_tools.mjs';

const transports = new Map();

serve('mcp_upstream_sse', async (req, res) => {
  const url = new URL(req.url, 'http://x');
  if (req.method === 'GET' && url.pathname === '/sse') {
    const transport = new SSEServerTransport('/messages', res);
    transports.set(transport.sessionId, transport);
    res.on('close', () => transports.delete(transport.sessionId));
    await newServer().connect(transport);
    return;
  }
  if (req.method === 'POST' && url.pathname === '/messages') {
    const transport = transports.get(url.searchParams.get('sessionId'));
    if (!transport) {
      res.writeHead(404).end('Session not found');
      return;
    }
    await transport.handlePostMessage(req, res);
    return;
  }
  res.writeHead(404).end();
});
