import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LlmClient, undiciFetch } from '@hermes/llm';
import { cleanupAll, startScriptedLlm, type ScriptedLlm } from '@hermes/testkit';

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;

let server: Server;
let base: string;
const routes = new Map<string, Handler>();

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const route = routes.get(req.url ?? '');
      if (route) route(req, body, res);
      else res.writeHead(404).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  await cleanupAll();
});

const fetchOverUndici = undiciFetch();

describe('undiciFetch', () => {
  it('sends method, headers and body as given, and returns status, every header value and the body', async () => {
    let seen: { method?: string; auth?: string; body?: string } = {};
    routes.set('/echo', (req, body, res) => {
      seen = { method: req.method, auth: req.headers.authorization, body };
      res.writeHead(201, [
        ['Content-Type', 'application/json'],
        ['X-Seen', 'a'],
        ['X-Seen', 'b'],
      ]);
      res.end(JSON.stringify({ got: JSON.parse(body) }));
    });
    const res = await fetchOverUndici(`${base}/echo`, {
      method: 'POST',
      headers: new Headers({ authorization: 'Bearer k', 'content-type': 'application/json' }),
      body: '{"x":1}',
    });
    expect(seen).toEqual({ method: 'POST', auth: 'Bearer k', body: '{"x":1}' });
    expect(res.status).toBe(201);
    expect(res.url).toBe(`${base}/echo`);
    expect(res.headers.get('x-seen')).toBe('a, b');
    expect(await res.json()).toEqual({ got: { x: 1 } });
  });

  it('follows a redirect as fetch does, sending the body again on a 307', async () => {
    let seen: { method?: string; body?: string } = {};
    routes.set('/moved', (_req, _body, res) => res.writeHead(307, { Location: '/target' }).end());
    routes.set('/target', (req, body, res) => {
      seen = { method: req.method, body };
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"here":true}');
    });
    const res = await fetchOverUndici(`${base}/moved`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"x":2}' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ here: true });
    expect(seen).toEqual({ method: 'POST', body: '{"x":2}' });
  });

  it('returns an empty body for a 204 instead of failing to build the response', async () => {
    routes.set('/empty', (_req, _body, res) => res.writeHead(204).end());
    const res = await fetchOverUndici(`${base}/empty`, { method: 'DELETE' });
    expect(res.status).toBe(204);
    expect(res.body).toBeNull();
  });

  it('hands an event stream over chunk by chunk, before the server has finished it', async () => {
    let sendRest!: () => void;
    routes.set('/sse', (_req, _body, res) => {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.write('data: one\n\n');
      sendRest = () => res.end('data: two\n\n');
    });
    const res = await fetchOverUndici(`${base}/sse`);
    const reader = res.body!.getReader();
    const first = await reader.read();
    // The server is still holding the rest back: this chunk came through on its own.
    expect(new TextDecoder().decode(first.value)).toBe('data: one\n\n');
    sendRest();
    let rest = '';
    for (let r = await reader.read(); !r.done; r = await reader.read()) rest += new TextDecoder().decode(r.value);
    expect(rest).toBe('data: two\n\n');
  });

  it('rejects with an AbortError when the signal aborts a request the server never answers', async () => {
    routes.set('/hang', () => undefined);
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 100);
    const err = await fetchOverUndici(`${base}/hang`, { signal: abort.signal }).catch((e: unknown) => e);
    expect((err as Error).name).toBe('AbortError');
  });

  it('ends a stream the signal aborts halfway: the reader fails with an AbortError and the connection is closed', async () => {
    let closed!: Promise<void>;
    routes.set('/sse-abort', (_req, _body, res) => {
      closed = new Promise((r) => res.on('close', () => r()));
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.write('data: one\n\n');
    });
    const abort = new AbortController();
    const res = await fetchOverUndici(`${base}/sse-abort`, { signal: abort.signal });
    const reader = res.body!.getReader();
    await reader.read();
    abort.abort();
    const err = await reader.read().catch((e: unknown) => e);
    expect((err as Error).name).toBe('AbortError');
    await closed;
  });

  it('passes a body it does not read itself (form data) to the global fetch, which encodes it', async () => {
    let seen: { type?: string; body?: string } = {};
    routes.set('/form', (req, body, res) => {
      seen = { type: req.headers['content-type'], body };
      res.end('ok');
    });
    const res = await fetchOverUndici(`${base}/form`, { method: 'POST', body: new URLSearchParams({ a: '1', b: 'two' }) });
    expect(await res.text()).toBe('ok');
    expect(seen).toEqual({ type: 'application/x-www-form-urlencoded;charset=UTF-8', body: 'a=1&b=two' });
  });
});

describe('LlmClient over either HTTP client', () => {
  let llm: ScriptedLlm;
  beforeAll(async () => {
    llm = await startScriptedLlm();
  });

  it('gives the same answer, streamed or not, over undici and over the global fetch', async () => {
    const results = [];
    for (const httpClient of ['undici', 'fetch'] as const) {
      const worker = { baseUrl: llm.baseUrl, apiKey: 'k', model: 'm' };
      const c = new LlmClient({ roles: { worker, planner: worker, summarizer: worker, embedder: worker }, maxRetries: 0, httpClient });
      for (const stream of [false, true]) {
        llm.enqueue({ content: 'hello there', toolCalls: [{ name: 'echo', arguments: '{"text":"x"}' }] });
        const deltas: string[] = [];
        const r = await c.chat({ role: 'worker', messages: [{ role: 'user', content: 'hi' }], ...(stream ? { onDelta: (t: string) => deltas.push(t) } : {}) });
        results.push({ content: r.content, calls: r.toolCalls.map((t) => [t.name, t.arguments]), deltas: deltas.join('') });
      }
    }
    expect(results).toEqual([
      { content: 'hello there', calls: [['echo', '{"text":"x"}']], deltas: '' },
      { content: 'hello there', calls: [['echo', '{"text":"x"}']], deltas: 'hello there' },
      { content: 'hello there', calls: [['echo', '{"text":"x"}']], deltas: '' },
      { content: 'hello there', calls: [['echo', '{"text":"x"}']], deltas: 'hello there' },
    ]);
  });
});
