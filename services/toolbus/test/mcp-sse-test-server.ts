import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer, type RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { z } from 'zod';

/**
 * An MCP server that speaks only the old HTTP+SSE transport (GET /sse for the event stream, POST
 * /messages?sessionId=… for requests), built with the SDK's McpServer and SSEServerTransport. A
 * POST to /sse — what a Streamable HTTP client sends first — gets 405, as from servers of that era.
 */
export interface TestMcpSseServer {
  /** The SSE endpoint, as it goes in the config. */
  readonly url: string;
  /** `<METHOD> <path> <status>` of every request answered, and `GET /sse (stream)` when an event stream opens; in order. */
  readonly requests: string[];
  /** Gives `multiply` an extra optional `note` argument (true) or its original schema back (false), on every session. */
  changeMultiplySchema(withNote: boolean): void;
  /** Closes every session and the port (the server is gone); `start()` brings it back on the same port. */
  stop(): Promise<void>;
  start(): Promise<void>;
}

const baseShape = { a: z.number(), b: z.number() };
const noteShape = { ...baseShape, note: z.string().optional() };

/** Requests without `authorization: <token>` are refused with 401, so a test sees that the configured headers reach the server. */
export async function startTestMcpSseServer(o: { token: string }): Promise<TestMcpSseServer> {
  const sessions = new Map<string, { transport: SSEServerTransport; server: McpServer; multiply: RegisteredTool }>();
  const requests: string[] = [];
  let withNote = false;

  const newServer = (): { server: McpServer; multiply: RegisteredTool } => {
    const server = new McpServer({ name: 'hermes-sse-test-server', version: '1.0.0' });
    const multiply = server.registerTool(
      'multiply',
      { description: 'Multiplies two numbers', inputSchema: withNote ? noteShape : baseShape },
      async ({ a, b }) => ({
        content: [{ type: 'text', text: String(a * b) }],
      }),
    );
    return { server, multiply };
  };

  const http: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const answer = (status: number, text: string): void => void res.writeHead(status, status === 405 ? { allow: 'GET' } : {}).end(text);
    res.on('finish', () => requests.push(`${req.method} ${url.pathname} ${res.statusCode}`));
    if (req.headers.authorization !== o.token) return answer(401, 'unauthorized');
    if (url.pathname === '/sse' && req.method === 'GET') {
      // The event stream stays open: it is recorded when it opens, not when it ends.
      requests.push('GET /sse (stream)');
      const transport = new SSEServerTransport('/messages', res);
      const { server, multiply } = newServer();
      sessions.set(transport.sessionId, { transport, server, multiply });
      transport.onclose = () => void sessions.delete(transport.sessionId);
      void server.connect(transport);
      return;
    }
    if (url.pathname === '/sse') return answer(405, 'this server speaks HTTP+SSE only');
    const session = url.pathname === '/messages' && req.method === 'POST' ? sessions.get(url.searchParams.get('sessionId') ?? '') : undefined;
    if (!session) return answer(404, 'unknown session');
    void session.transport.handlePostMessage(req, res).catch(() => undefined);
  });

  let port = 0;
  const listen = () => new Promise<void>((resolve) => http.listen(port, '127.0.0.1', resolve));
  await listen();
  port = (http.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/sse`,
    requests,
    changeMultiplySchema(next) {
      withNote = next;
      for (const s of sessions.values()) s.multiply.update({ paramsSchema: next ? noteShape : baseShape });
    },
    async stop() {
      for (const s of sessions.values()) await s.server.close().catch(() => undefined);
      sessions.clear();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
    start: listen,
  };
}
