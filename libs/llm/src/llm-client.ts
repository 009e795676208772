import OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { hermesTracer } from '@hermes/telemetry';
import { toLlmError } from './llm-errors.js';
import { unlimitedPermits, type Permit, type PermitProvider } from './permits.js';

export type ModelRole = 'planner' | 'worker' | 'summarizer';

/** Where and what to call for one role: cheap models can summarise while strong ones plan. */
export interface RoleEndpoint {
  baseUrl: string;
  apiKey: string;
  model: string;
}

export interface LlmClientOptions {
  roles: Record<ModelRole, RoleEndpoint>;
  permits?: PermitProvider;
  timeoutMs?: number;
  /** SDK-level retries of retryable errors (connection, 408, 409, 429, 5xx), with back-off. */
  maxRetries?: number;
}

export interface ChatRequest {
  role: ModelRole;
  messages: ChatCompletionMessageParam[];
  tools?: ChatCompletionTool[];
  signal?: AbortSignal;
}

export interface ChatResult {
  content: string | null;
  toolCalls: { id: string; name: string; arguments: string }[];
  finishReason: string;
  model: string;
  usage: { input_tokens: number; output_tokens: number };
}

/** Chat completions over the openai SDK against any OpenAI-compatible endpoint, one per role. */
export class LlmClient {
  private readonly clients = new Map<string, OpenAI>();
  private readonly permits: PermitProvider;

  constructor(private readonly opts: LlmClientOptions) {
    this.permits = opts.permits ?? unlimitedPermits;
  }

  /** The model configured for a role (for events and spans). */
  modelFor(role: ModelRole): string {
    return this.opts.roles[role].model;
  }

  async chat(req: ChatRequest): Promise<ChatResult> {
    const endpoint = this.opts.roles[req.role];
    const client = this.clientFor(endpoint);
    const span = hermesTracer().startSpan(`chat ${endpoint.model}`, {
      kind: SpanKind.CLIENT,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': endpoint.model,
        'server.address': new URL(endpoint.baseUrl).host,
      },
    });
    const estimatedTokens = Math.ceil(JSON.stringify(req.messages).length / 4);
    let permit: Permit;
    try {
      permit = await this.permits.acquire({ pool: endpoint.model, estimatedTokens, ...(req.signal ? { signal: req.signal } : {}) });
    } catch (err) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
      span.end();
      throw err;
    }
    try {
      const completion = await client.chat.completions.create(
        {
          model: endpoint.model,
          messages: req.messages,
          // Some providers (Ollama) ignore tool_choice, so the loop never relies on it.
          ...(req.tools?.length ? { tools: req.tools } : {}),
        },
        { ...(req.signal ? { signal: req.signal } : {}) },
      );
      const choice = completion.choices[0];
      const message = choice?.message;
      const result: ChatResult = {
        content: message?.content ?? null,
        toolCalls: (message?.tool_calls ?? [])
          .filter((c) => c.type === 'function')
          .map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })),
        finishReason: choice?.finish_reason ?? 'unknown',
        model: completion.model ?? endpoint.model,
        usage: { input_tokens: completion.usage?.prompt_tokens ?? 0, output_tokens: completion.usage?.completion_tokens ?? 0 },
      };
      span.setAttributes({
        'gen_ai.response.model': result.model,
        'gen_ai.usage.input_tokens': result.usage.input_tokens,
        'gen_ai.usage.output_tokens': result.usage.output_tokens,
        'gen_ai.response.finish_reasons': [result.finishReason],
      });
      return result;
    } catch (err) {
      const llmErr = toLlmError(err, endpoint.model);
      span.setAttribute('error.type', llmErr.code);
      span.setStatus({ code: SpanStatusCode.ERROR, message: llmErr.message });
      throw llmErr;
    } finally {
      // A failed release must not replace the call's own outcome; the lease expires on its own.
      await permit.release().catch((err: unknown) => span.addEvent('permit_release_failed', { 'error.message': (err as Error).message }));
      span.end();
    }
  }

  private clientFor(e: RoleEndpoint): OpenAI {
    const key = `${e.baseUrl}\u0000${e.apiKey}`;
    let c = this.clients.get(key);
    if (!c) {
      c = new OpenAI({ baseURL: e.baseUrl, apiKey: e.apiKey, timeout: this.opts.timeoutMs ?? 60_000, maxRetries: this.opts.maxRetries ?? 2 });
      this.clients.set(key, c);
    }
    return c;
  }
}
