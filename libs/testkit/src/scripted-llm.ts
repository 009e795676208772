import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { completionBody, completionChunks, errorResponse, openAiError, planCompletion } from './openai-wire.js';
import { wireTraits, type ScriptedProfile } from './server-profiles.js';
import { trackResource, untrackResource } from './process-registry.js';
import { defaultResponder } from './responders.js';
import type { ChatRequestBody, RecordedRequest, Responder, ScriptedResponse } from './scripted-response.js';

/** Options for {@link startScriptedLlm}. */
export interface ScriptedLlmOptions {
  /** Added to every response, before any per-response `delayMs`. Default 0. */
  latencyMs?: number;
  /** Used when the queue is empty. Default: {@link defaultResponder}. */
  responder?: Responder;
  /** Port to listen on. Default: one the OS picks. */
  port?: number;
  /** Which real server to behave like on the wire (see server-profiles.ts). Default `openai`. */
  profile?: ScriptedProfile;
  /** The model's context window, reported where the profile's `/v1/models` reports one (vLLM's `max_model_len`) and as Ollama's model_info context length. Default 4096. */
  contextTokens?: number;
  /** Ollama profile: the `num_ctx` of the model's Modelfile parameters in `/api/show` (absent: none set). */
  numCtx?: number;
}

/** An OpenAI-compatible chat completions server whose answers the test scripts. */
export interface ScriptedLlm {
  /** `http://127.0.0.1:<port>/v1`, to pass as the OpenAI client's `baseURL`. */
  readonly baseUrl: string;
  readonly port: number;
  /** Chat completion requests received since start or the last resetStats(), oldest first. */
  readonly requests: readonly RecordedRequest[];
  /** Models asked about on Ollama's native `POST /api/show`, oldest first (ollama profile only). */
  readonly showRequests: readonly string[];
  /** Chat completion requests between arrival and the end of their response right now. */
  readonly inFlight: number;
  /** Highest `inFlight` seen since start or the last resetStats(). */
  readonly maxInFlight: number;
  /** Scripted responses still waiting in the queue. */
  readonly queued: number;
  /** Appends responses to the FIFO queue; each request takes one, the responder answers when it is empty. */
  enqueue(...responses: ScriptedResponse[]): void;
  /** Drops every queued response. */
  clearQueue(): void;
  setResponder(responder: Responder): void;
  setLatency(latencyMs: number): void;
  setProfile(profile: ScriptedProfile): void;
  /** Forgets recorded requests and restarts `maxInFlight` from the current `inFlight`. */
  resetStats(): void;
  /** Closes the server, cutting off open (e.g. hanging) requests. */
  close(): Promise<void>;
}

const COMPLETION_PATHS = new Set(['/v1/chat/completions', '/chat/completions']);
const MODEL_PATHS = new Set(['/v1/models', '/models']);
const EMBEDDING_PATHS = new Set(['/v1/embeddings', '/embeddings']);
const EMBEDDING_DIMENSIONS = 8;

/** A deterministic unit vector for a text (same text, same vector), so tests can compare. */
function embeddingOf(text: string): number[] {
  const v = Array.from({ length: EMBEDDING_DIMENSIONS }, (_, i) => {
    let h = 2166136261 ^ i;
    for (let k = 0; k < text.length; k++) h = Math.imul(h ^ text.charCodeAt(k), 16777619);
    return ((h >>> 0) % 2000) / 1000 - 1;
  });
  const norm = Math.hypot(...v) || 1;
  return v.map((x) => x / norm);
}

class ScriptedLlmServer implements ScriptedLlm {
  #server: Server;
  #port = 0;
  #queue: ScriptedResponse[] = [];
  #responder: Responder;
  #latencyMs: number;
  #profile: ScriptedProfile;
  readonly #contextTokens: number;
  readonly #numCtx: number | undefined;
  #requests: RecordedRequest[] = [];
  #showRequests: string[] = [];
  #inFlight = 0;
  #maxInFlight = 0;
  #sequence = 0;
  #toolCallSequence = 0;
  #closed: Promise<void> | undefined;
  #registration = { stop: () => this.close() };

  constructor(options: ScriptedLlmOptions) {
    this.#responder = options.responder ?? defaultResponder;
    this.#latencyMs = options.latencyMs ?? 0;
    this.#profile = options.profile ?? 'openai';
    this.#contextTokens = options.contextTokens ?? 4096;
    this.#numCtx = options.numCtx;
    this.#server = createServer((req, res) => {
      this.#handle(req, res).catch((error: unknown) => {
        if (!res.headersSent) sendJson(res, 500, openAiError({ message: `Scripted model failed: ${String(error)}`, type: 'server_error', code: null }));
        else res.destroy();
      });
    });
  }

  async listen(port: number): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen({ port, host: '127.0.0.1' }, () => {
        this.#server.off('error', reject);
        resolve();
      });
    });
    this.#port = (this.#server.address() as AddressInfo).port;
    trackResource(this.#registration);
  }

  get port(): number {
    return this.#port;
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${this.#port}/v1`;
  }

  get requests(): readonly RecordedRequest[] {
    return this.#requests;
  }

  get showRequests(): readonly string[] {
    return this.#showRequests;
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  get maxInFlight(): number {
    return this.#maxInFlight;
  }

  get queued(): number {
    return this.#queue.length;
  }

  enqueue(...responses: ScriptedResponse[]): void {
    this.#queue.push(...responses);
  }

  clearQueue(): void {
    this.#queue = [];
  }

  setResponder(responder: Responder): void {
    this.#responder = responder;
  }

  setLatency(latencyMs: number): void {
    this.#latencyMs = latencyMs;
  }

  setProfile(profile: ScriptedProfile): void {
    this.#profile = profile;
  }

  resetStats(): void {
    // A fresh array, so a snapshot a test already holds does not change under it.
    this.#requests = [];
    this.#maxInFlight = this.#inFlight;
  }

  close(): Promise<void> {
    this.#closed ??= new Promise<void>((resolve) => {
      untrackResource(this.#registration);
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
    return this.#closed;
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    res.on('error', () => undefined);
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (req.method === 'GET' && MODEL_PATHS.has(path)) {
      const fields = wireTraits(this.#profile).modelFields(this.#contextTokens);
      sendJson(res, 200, { object: 'list', data: [{ id: 'scripted', object: 'model', created: 0, owned_by: 'hermes-testkit', ...fields }] });
      return;
    }
    if (req.method === 'POST' && COMPLETION_PATHS.has(path)) {
      await this.#complete(req, res);
      return;
    }
    if (req.method === 'POST' && EMBEDDING_PATHS.has(path)) {
      const body = (await readJson(req)) as { model?: unknown; input?: unknown } | undefined;
      const inputs = typeof body?.input === 'string' ? [body.input] : Array.isArray(body?.input) ? body.input.map(String) : [];
      const tokens = inputs.reduce((sum, t) => sum + Math.max(1, Math.ceil(t.length / 4)), 0);
      sendJson(res, 200, {
        object: 'list',
        data: inputs.map((text, index) => ({ object: 'embedding', index, embedding: embeddingOf(text) })),
        model: typeof body?.model === 'string' ? body.model : 'scripted-embedding',
        usage: { prompt_tokens: tokens, total_tokens: tokens },
      });
      return;
    }
    const show = wireTraits(this.#profile).show;
    if (req.method === 'POST' && path === '/api/show' && show) {
      // `name` is what releases before 0.5 took; the docs now say `model`.
      const body = (await readJson(req)) as { model?: unknown; name?: unknown } | undefined;
      const model = typeof body?.model === 'string' ? body.model : typeof body?.name === 'string' ? body.name : '';
      if (model) this.#showRequests.push(model);
      if (!model) sendJson(res, 400, { error: 'model is required' });
      else sendJson(res, 200, show({ model, contextTokens: this.#contextTokens, numCtx: this.#numCtx }));
      return;
    }
    sendJson(
      res,
      404,
      openAiError({ message: `Unknown route ${req.method ?? ''} ${path} (scripted model).`, type: 'invalid_request_error', code: 'unknown_url' }),
    );
  }

  async #complete(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const receivedAt = Date.now();
    this.#inFlight++;
    this.#maxInFlight = Math.max(this.#maxInFlight, this.#inFlight);
    const aborted = new AbortController();
    const seen: { recorded?: RecordedRequest } = {};
    // 'close' fires both when the response has been sent and when the client went away.
    res.once('close', () => {
      this.#inFlight--;
      if (seen.recorded) seen.recorded.endedAt = Date.now();
      aborted.abort();
    });

    const body = await readJson(req);
    if (body === undefined) {
      sendJson(res, 400, openAiError({ message: 'Request body is not a JSON object (scripted model).', type: 'invalid_request_error', code: null }));
      return;
    }
    // The client may have gone away while the body was read.
    const recorded: RecordedRequest = { body, headers: req.headers, receivedAt, ...(res.destroyed ? { endedAt: Date.now() } : {}) };
    seen.recorded = recorded;
    this.#requests.push(recorded);

    let response: ScriptedResponse;
    try {
      response = this.#queue.shift() ?? (await this.#responder(recorded));
    } catch (error) {
      sendJson(res, 500, openAiError({ message: `Scripted responder threw: ${String(error)}`, type: 'server_error', code: null }));
      return;
    }
    if ('hang' in response) return;

    const delayMs = this.#latencyMs + (response.delayMs ?? 0);
    if (delayMs > 0) {
      try {
        await sleep(delayMs, undefined, { signal: aborted.signal });
      } catch {
        return;
      }
    }
    if (res.destroyed) return;

    const requestId = `req_scripted_${++this.#sequence}`;
    const traits = wireTraits(this.#profile);
    if ('status' in response) {
      const error = errorResponse(response, traits);
      sendJson(res, error.status, error.body, { ...error.headers, 'x-request-id': requestId });
      return;
    }
    const plan = planCompletion({
      response,
      body,
      completionId: `chatcmpl-scripted-${this.#sequence}`,
      nextToolCallId: () => `call_scripted_${++this.#toolCallSequence}`,
    });
    if (body.stream === true) {
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-request-id': requestId });
      for (const chunk of completionChunks(plan, body.stream_options?.include_usage === true, traits)) {
        if (res.destroyed) return;
        res.write(`data: ${JSON.stringify(chunk)}\n\n`);
      }
      res.end('data: [DONE]\n\n');
      return;
    }
    sendJson(res, 200, completionBody(plan, traits), { 'x-request-id': requestId });
  }
}

/** Starts a scripted OpenAI-compatible model on 127.0.0.1 (see {@link ScriptedLlm}). */
export async function startScriptedLlm(options: ScriptedLlmOptions = {}): Promise<ScriptedLlm> {
  const llm = new ScriptedLlmServer(options);
  await llm.listen(options.port ?? 0);
  return llm;
}

async function readJson(req: IncomingMessage): Promise<ChatRequestBody | undefined> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as ChatRequestBody) : undefined;
  } catch {
    return undefined;
  }
}

function sendJson(res: ServerResponse, status: number, body: object, headers: Record<string, string> = {}): void {
  if (res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
