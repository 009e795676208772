import OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { SpanKind, SpanStatusCode, context, trace, type Span } from '@opentelemetry/api';
import { activeConversationId, contentAttribute, genAiContentCapture, hermesTracer } from '@hermes/telemetry';
import { callChat, type ChatResult } from './chat-call.js';
import { detectsWindow, detectWindow, type DetectedWindow } from './context-detection.js';
import { withProviderErrorBodies } from './error-bodies.js';
import { undiciFetch, type LlmHttpClient } from './http-transport.js';
import { LlmError, toLlmError } from './llm-errors.js';
import { PoolResolver, type CallSettings } from './llm-pools.js';
import { supportedParams, type ProviderName, type ProviderProfile, type RequestParams } from './provider-profiles.js';
import { LlmMetrics } from './llm-metrics.js';
import { unlimitedPermits, type Permit, type PermitProvider, type PermitReport, type PermitReservation } from './permits.js';

export type ModelRole = 'planner' | 'worker' | 'reviewer' | 'summarizer' | 'embedder';
export type { ChatResult };

/** Where and what to call for one role: cheap models can summarise while strong ones plan. */
export interface RoleEndpoint {
  baseUrl: string;
  apiKey: string;
  model: string;
}

export interface LlmClientOptions {
  /** Each role's endpoint; `reviewer` falls back to `worker` when absent (HERMES_MODEL_REVIEWER unset). */
  roles: Record<Exclude<ModelRole, 'reviewer'>, RoleEndpoint> & { reviewer?: RoleEndpoint };
  permits?: PermitProvider;
  pools?: PoolResolver;
  timeoutMs?: number;
  /** Retries of retryable errors (connection, 408, 409, 429, 5xx), each through a new permit. */
  maxRetries?: number;
  /** Give up waiting for a permit after this long (llm_permit_timeout). */
  permitTimeoutMs?: number;
  /** Base of the exponential back-off between retries. */
  retryBaseMs?: number;
  /** Record prompts and answers on the `chat` spans (default: the GenAI content capture setting, off). */
  captureContent?: boolean;
  /** The SDK's HTTP client: undici's `request` (default, less CPU per call) or the global `fetch`. */
  httpClient?: LlmHttpClient;
  /** Keep the model's reasoning on the result (LLM_KEEP_REASONING); it is never part of the answer either way. */
  keepReasoning?: boolean;
}

/** A model's context window, and whether it was configured or reported by its server. */
export type ContextWindow =
  { tokens: number; source: 'configured' } | { tokens: number; source: 'detected'; detectedFrom: DetectedWindow['from']; detectedAt: string };

export interface ChatRequest {
  role: Exclude<ModelRole, 'embedder'>;
  messages: ChatCompletionMessageParam[];
  tools?: ChatCompletionTool[];
  signal?: AbortSignal;
  /** 0 batch, 1 normal, 2 interactive: the order of service when the pool is saturated. */
  priority?: number;
  /** Background work (memory extraction, summaries): served within LLM_BACKGROUND_MIN_SHARE..MAX_SHARE of the pool. */
  background?: boolean;
  /** Streams the answer; each content delta is passed here as it arrives. */
  onDelta?: (text: string) => void;
  /** A permit reserved for this call with `reserve` (used by the first attempt, if it still holds). */
  reservation?: PermitReservation;
  /**
   * The JSON Schema the answer should follow: sent as `response_format: json_schema` where the
   * provider takes it (structured outputs, vLLM's guided decoding), else not at all. The caller
   * still parses what comes back: not every model keeps to it.
   */
  responseSchema?: { name: string; schema: object };
}

/**
 * Chat completions over the openai SDK against any OpenAI-compatible endpoint, one per role.
 * Every attempt first takes a permit from the pool the model belongs to, and tells the pool how
 * it went (tokens used, 429 with Retry-After, provider failure), so the whole cluster adapts.
 */
export class LlmClient {
  private readonly clients = new Map<string, OpenAI>();
  /** Context windows the servers reported, by endpoint and model. */
  private readonly detectedWindows = new Map<string, DetectedWindow>();
  /** The SDK's `fetch` (LLM_HTTP_CLIENT), error bodies made readable. One connection pool for every role. */
  private readonly transport: typeof fetch;
  private readonly permits: PermitProvider;
  private readonly metrics = new LlmMetrics();
  private readonly captureContent: boolean;
  readonly pools: PoolResolver;

  constructor(private readonly opts: LlmClientOptions) {
    this.permits = opts.permits ?? unlimitedPermits;
    this.captureContent = opts.captureContent ?? genAiContentCapture();
    this.pools = opts.pools ?? new PoolResolver([], { capacity: 8 });
    this.transport = withProviderErrorBodies((opts.httpClient ?? 'undici') === 'undici' ? undiciFetch() : (input, init) => globalThis.fetch(input, init));
  }

  /** The model configured for a role (for events and spans). */
  private endpointOf(role: ModelRole): RoleEndpoint {
    return (role === 'reviewer' ? this.opts.roles.reviewer : this.opts.roles[role]) ?? this.opts.roles.worker;
  }

  modelFor(role: ModelRole): string {
    return this.endpointOf(role).model;
  }

  /** `gen_ai.provider.name` of a role's endpoint (its pool's provider profile). */
  providerFor(role: ModelRole): string {
    return this.settingsFor(role).profile.providerName;
  }

  /** The provider profile of a role's endpoint: what its server takes. */
  profileFor(role: ModelRole): ProviderProfile {
    return this.settingsFor(role).profile;
  }

  /** The profile's name (`provider` in LLM_POOLS, or taken from the host). */
  providerProfileName(role: ModelRole): ProviderName {
    return this.settingsFor(role).provider;
  }

  /** A role's model's context window: LLM_POOLS' `context_tokens`, else what its server reported; undefined when neither says. */
  contextTokensFor(role: ModelRole): number | undefined {
    return this.contextWindowOf(role)?.tokens;
  }

  /** A role's model's window and where it comes from: configured (`context_tokens`) or detected (from what, when). */
  contextWindowOf(role: ModelRole): ContextWindow | undefined {
    const e = this.endpointOf(role);
    const configured = this.settingsFor(role).contextTokens;
    if (configured) return { tokens: configured, source: 'configured' };
    const detected = this.detectedWindows.get(`${e.baseUrl}\u0000${e.model}`);
    return detected ? { tokens: detected.tokens, source: 'detected', detectedFrom: detected.from, detectedAt: detected.at } : undefined;
  }

  /**
   * Asks the server for the window of each chat role's model where it says (vLLM's
   * `max_model_len` on `/v1/models`, Ollama's `/api/show`) and no `context_tokens` is configured.
   * Once per endpoint and model, at start; a server that does not answer within `timeoutMs`
   * leaves MODEL_CONTEXT_TOKENS in force (it never fails start).
   */
  async detectContextWindows(o: { timeoutMs?: number } = {}): Promise<void> {
    const asked = new Set<string>();
    for (const role of ['worker', 'planner', 'reviewer', 'summarizer'] as const) {
      const e = this.endpointOf(role);
      const key = `${e.baseUrl}\u0000${e.model}`;
      const settings = this.settingsFor(role);
      if (settings.contextTokens || !detectsWindow(settings.provider) || this.detectedWindows.has(key) || asked.has(key)) continue;
      asked.add(key);
      try {
        const found = await detectWindow({
          provider: settings.provider,
          client: this.client(e),
          fetch: this.transport,
          endpoint: e,
          timeoutMs: o.timeoutMs ?? 5_000,
        });
        if (found) this.detectedWindows.set(key, found);
      } catch {
        // Not known then: the configured default applies.
      }
    }
  }

  private settingsFor(role: ModelRole): CallSettings {
    return this.pools.callSettings(this.endpointOf(role), role);
  }

  /** The semaphore pool a role's calls are counted in. */
  poolFor(role: ModelRole): string {
    return this.pools.poolFor(this.endpointOf(role));
  }

  /**
   * Takes back the permit this process keeps for the role's pool (a call of the same process
   * ended moments ago and nobody waits), ahead of the call that will use it: the loop passes it
   * to `chat` as `reservation` and so overlaps the semaphore write with its tool calls. Undefined
   * when nothing is kept. Cancel it if no call follows; unclaimed, it lapses on its own.
   */
  reserve(role: Exclude<ModelRole, 'embedder'>): PermitReservation | undefined {
    return this.permits.reserve?.(this.pools.poolFor(this.endpointOf(role)));
  }

  async chat(req: ChatRequest): Promise<ChatResult> {
    const endpoint = this.endpointOf(req.role);
    const pool = this.pools.poolFor(endpoint);
    const settings = this.settingsFor(req.role);
    const provider = settings.profile.providerName;
    // Parameters the server would reject or ignore are not sent; the span lists them.
    const { sent, dropped } = supportedParams(settings.profile, settings.params);
    const responseFormat = req.responseSchema && settings.profile.responseFormats.includes('json_schema') ? jsonSchemaFormat(req.responseSchema) : undefined;
    const conversationId = activeConversationId();
    const span = hermesTracer().startSpan(`chat ${endpoint.model}`, {
      kind: SpanKind.CLIENT,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': provider,
        'gen_ai.request.model': endpoint.model,
        ...serverAttributes(endpoint.baseUrl),
        ...requestAttributes(sent),
        ...(dropped.length ? { 'hermes.llm.params_dropped': dropped } : {}),
        ...(responseFormat ? { 'gen_ai.output.type': 'json' } : {}),
        'hermes.llm.pool': pool,
        ...(conversationId ? { 'gen_ai.conversation.id': conversationId } : {}),
      },
    });
    // Serialised only for a recording span: with tracing off the content is never even built.
    if (this.captureContent && span.isRecording()) span.setAttributes(inputContent(req));
    const ctx = trace.setSpan(context.active(), span);
    try {
      for (let attempt = 0; ; attempt++) {
        const reserved = attempt === 0 ? await req.reservation?.claim() : undefined;
        const permit: Permit = reserved ?? (await context.with(ctx, () => this.acquire(pool, estimateTokens(req), req)));
        const started = performance.now();
        const scope = callSignal(req.signal);
        const firstChunk = () => {
          const seconds = (performance.now() - started) / 1000;
          span.addEvent('gen_ai.first_chunk', { 'hermes.llm.time_to_first_chunk_s': seconds });
          span.setAttribute('hermes.llm.time_to_first_chunk_s', seconds);
          this.metrics.firstChunk({ model: endpoint.model, provider, pool, seconds });
        };
        try {
          const { reasoning, ...result }: ChatResult = await callChat(this.client(endpoint), {
            model: endpoint.model,
            messages: req.messages,
            ...(req.tools ? { tools: req.tools } : {}),
            ...(scope.signal ? { signal: scope.signal } : {}),
            ...(req.onDelta ? { onDelta: req.onDelta } : {}),
            params: responseFormat ? { ...sent, response_format: responseFormat } : sent,
            streamUsage: settings.profile.streamUsage,
            onFirstChunk: firstChunk,
          });
          // Not awaited: the answer is the caller's as soon as it is here. The permit is handed back
          // in the background (it counts against the cap until that write lands, so the cap holds).
          void releaseQuietly(permit, { tokens: result.usage.input_tokens + result.usage.output_tokens }, span);
          this.metrics.call({
            model: endpoint.model,
            provider,
            pool,
            seconds: (performance.now() - started) / 1000,
            usage: result.usage,
            ...(result.usageEstimated ? { usageEstimated: true } : {}),
          });
          span.setAttributes({
            'gen_ai.response.model': result.model,
            ...(result.responseId ? { 'gen_ai.response.id': result.responseId } : {}),
            'gen_ai.usage.input_tokens': result.usage.input_tokens,
            'gen_ai.usage.output_tokens': result.usage.output_tokens,
            'gen_ai.response.finish_reasons': [result.finishReason],
            ...(result.usageEstimated ? { 'hermes.llm.usage_estimated': true } : {}),
            ...(result.reasoningTokens ? { 'hermes.llm.usage.reasoning_tokens': result.reasoningTokens } : {}),
            ...(this.captureContent && span.isRecording() ? outputContent(result) : {}),
          });
          return reasoning !== undefined && this.opts.keepReasoning ? { ...result, reasoning } : result;
        } catch (err) {
          const e = toLlmError(err, endpoint.model);
          // A call its caller aborted says nothing about the provider; counting it as a failure
          // would back the whole pool off after a few cancelled tasks.
          await releaseQuietly(permit, req.signal?.aborted ? {} : reportFor(e), span);
          this.metrics.call({ model: endpoint.model, provider, pool, seconds: (performance.now() - started) / 1000, errorType: e.code });
          if (!e.retryable || attempt >= (this.opts.maxRetries ?? 2) || req.signal?.aborted) throw e;
          span.addEvent('retry', { attempt: attempt + 1, 'error.type': e.code });
          // A 429 already paused the whole pool; other failures wait what the provider asked (a 503's
          // Retry-After), else back off here, with jitter.
          if (e.code !== 'llm_rate_limited')
            await sleep(Math.min(30_000, e.details.retryAfterMs ?? backoffMs(attempt, this.opts.retryBaseMs ?? 250)), req.signal);
        } finally {
          scope.end();
        }
      }
    } catch (err) {
      const e = err instanceof LlmError ? err : toLlmError(err, endpoint.model);
      span.setAttribute('error.type', e.code);
      span.setStatus({ code: SpanStatusCode.ERROR, message: e.message });
      throw e;
    } finally {
      span.end();
    }
  }

  /** Embeddings with the `embedder` role, through the same semaphore, in an `embeddings {model}` span. */
  async embed(texts: string[], opts: { signal?: AbortSignal } = {}): Promise<number[][]> {
    const endpoint = this.opts.roles.embedder;
    const pool = this.pools.poolFor(endpoint);
    const span = hermesTracer().startSpan(`embeddings ${endpoint.model}`, {
      kind: SpanKind.CLIENT,
      attributes: {
        'gen_ai.operation.name': 'embeddings',
        'gen_ai.provider.name': this.settingsFor('embedder').profile.providerName,
        'gen_ai.request.model': endpoint.model,
        ...serverAttributes(endpoint.baseUrl),
        'hermes.llm.pool': pool,
        'hermes.llm.inputs': texts.length,
      },
    });
    try {
      const permit = await this.permits.acquire({ pool, estimatedTokens: Math.ceil(texts.join('').length / 4), ...opts, ...this.permitTimeout() });
      const scope = callSignal(opts.signal);
      try {
        const res = await this.client(endpoint).embeddings.create({ model: endpoint.model, input: texts }, scope.signal ? { signal: scope.signal } : {});
        await permit.release({ tokens: res.usage?.total_tokens ?? 0 });
        const vectors = res.data.sort((a, b) => a.index - b.index).map((d) => d.embedding);
        span.setAttributes({
          ...(res.model ? { 'gen_ai.response.model': res.model } : {}),
          ...(res.usage ? { 'gen_ai.usage.input_tokens': res.usage.prompt_tokens } : {}),
          ...(vectors[0] ? { 'gen_ai.embeddings.dimension.count': vectors[0].length } : {}),
        });
        return vectors;
      } catch (err) {
        const e = toLlmError(err, endpoint.model);
        await permit.release(opts.signal?.aborted ? {} : reportFor(e)).catch(() => {});
        throw e;
      } finally {
        scope.end();
      }
    } catch (err) {
      const e = err instanceof LlmError ? err : toLlmError(err, endpoint.model);
      span.setAttribute('error.type', e.code);
      span.setStatus({ code: SpanStatusCode.ERROR, message: e.message });
      throw e;
    } finally {
      span.end();
    }
  }

  private async acquire(pool: string, estimatedTokens: number, req: ChatRequest): Promise<Permit> {
    const span = hermesTracer().startSpan('llm.permit.wait', { attributes: { 'hermes.llm.pool': pool, 'hermes.llm.estimated_tokens': estimatedTokens } });
    try {
      const permit = await this.permits.acquire({
        pool,
        estimatedTokens,
        ...(req.priority !== undefined ? { priority: req.priority } : {}),
        ...(req.background ? { background: true } : {}),
        ...(req.signal ? { signal: req.signal } : {}),
        ...this.permitTimeout(),
      });
      if (permit.waitedMs !== undefined) {
        span.setAttribute('hermes.llm.permit_wait_ms', permit.waitedMs);
        this.metrics.waited(pool, permit.waitedMs);
      }
      return permit;
    } catch (err) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
      throw err;
    } finally {
      span.end();
    }
  }

  private permitTimeout(): { timeoutMs?: number } {
    return this.opts.permitTimeoutMs !== undefined ? { timeoutMs: this.opts.permitTimeoutMs } : {};
  }

  private client(e: RoleEndpoint): OpenAI {
    const key = `${e.baseUrl}\u0000${e.apiKey}`;
    let c = this.clients.get(key);
    if (!c) {
      // Retries happen above, through the semaphore; the SDK must not retry behind its back.
      c = new OpenAI({ baseURL: e.baseUrl, apiKey: e.apiKey, timeout: this.opts.timeoutMs ?? 60_000, maxRetries: 0, fetch: this.transport });
      this.clients.set(key, c);
    }
    return c;
  }
}

/** What the pool's token budget is charged up front (real usage corrects it); only a fresh permit needs it. */
function estimateTokens(req: ChatRequest): number {
  return Math.ceil(JSON.stringify(req.messages).length / 4) + Math.ceil(JSON.stringify(req.tools ?? []).length / 4);
}

/** Opt-in content (GenAI conventions): the prompt as sent, system instructions apart. */
function inputContent(req: ChatRequest): Record<string, string> {
  const system = req.messages.filter((m) => m.role === 'system').map((m) => ({ type: 'text', content: m.content }));
  const rest = req.messages.filter((m) => m.role !== 'system');
  return {
    'gen_ai.input.messages': contentAttribute(rest),
    ...(system.length ? { 'gen_ai.system_instructions': contentAttribute(system) } : {}),
    ...(req.tools?.length ? { 'gen_ai.tool.definitions': contentAttribute(req.tools) } : {}),
  };
}

/** Opt-in content: the answer, with the tool calls the model asked for. */
function outputContent(result: ChatResult): Record<string, string> {
  const parts = [
    ...(result.content ? [{ type: 'text', content: result.content }] : []),
    ...result.toolCalls.map((c) => ({ type: 'tool_call', id: c.id, name: c.name, arguments: c.arguments })),
  ];
  return { 'gen_ai.output.messages': contentAttribute([{ role: 'assistant', parts, finish_reason: result.finishReason }]) };
}

function reportFor(e: LlmError): PermitReport {
  if (e.code === 'llm_rate_limited') return { rateLimitedForMs: e.details.retryAfterMs ?? 1000 };
  if (e.code === 'llm_unavailable' || e.code === 'llm_timeout') return { failed: true };
  return {};
}

async function releaseQuietly(permit: Permit, report: PermitReport, span: Span): Promise<void> {
  // A failed release must not replace the call's own outcome; the lease runs out on its own.
  await permit.release(report).catch((err: unknown) => span.addEvent('permit_release_failed', { 'error.message': (err as Error).message }));
}

function backoffMs(attempt: number, base: number): number {
  const cap = Math.min(10_000, base * 2 ** attempt);
  return cap / 2 + Math.random() * (cap / 2);
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const wake = () => (clearTimeout(t), resolve());
    const t = setTimeout(() => (signal?.removeEventListener('abort', wake), resolve()), ms);
    signal?.addEventListener('abort', wake, { once: true });
  });
}

/** `server.address` and `server.port` (the scheme's default port when the URL names none). */
function serverAttributes(url: string): Record<string, string | number> {
  try {
    const u = new URL(url);
    return { 'server.address': u.hostname, 'server.port': u.port ? Number(u.port) : u.protocol === 'http:' ? 80 : 443 };
  } catch {
    return { 'server.address': url };
  }
}

/** `response_format` for a schema; not strict, since strict mode refuses optional and free-form properties. */
function jsonSchemaFormat(s: { name: string; schema: object }): object {
  // A TypeBox schema carries symbol keys; what goes on the wire is its JSON.
  return { type: 'json_schema', json_schema: { name: s.name, strict: false, schema: JSON.parse(JSON.stringify(s.schema)) as object } };
}

/** `gen_ai.request.*` for the parameters actually sent. */
function requestAttributes(p: Partial<RequestParams>): Record<string, number | string[]> {
  return {
    ...(p.temperature !== undefined ? { 'gen_ai.request.temperature': p.temperature } : {}),
    ...(p.top_p !== undefined ? { 'gen_ai.request.top_p': p.top_p } : {}),
    ...(p.max_tokens !== undefined ? { 'gen_ai.request.max_tokens': p.max_tokens } : {}),
    ...(p.seed !== undefined ? { 'gen_ai.request.seed': p.seed } : {}),
    ...(p.stop !== undefined ? { 'gen_ai.request.stop_sequences': p.stop } : {}),
  };
}

/**
 * A signal for one SDK request that follows the caller's. The openai SDK adds an abort listener
 * to the signal it is given and never removes it, so a job's signal passed to every call of the
 * job would collect one per call (and keep each request's state alive until the job ends). The
 * listener on the caller's signal is removed when the request ends.
 */
function callSignal(parent: AbortSignal | undefined): { signal?: AbortSignal; end(): void } {
  if (!parent) return { end: () => {} };
  const own = new AbortController();
  if (parent.aborted) own.abort(parent.reason);
  const follow = () => own.abort(parent.reason);
  parent.addEventListener('abort', follow, { once: true });
  return { signal: own.signal, end: () => parent.removeEventListener('abort', follow) };
}
