import { performance } from 'node:perf_hooks';
import OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { BenchError } from './bench-errors.js';
import { recordEntry } from './bench-tools.js';
import { epochNow, type StepTool } from './step-script.js';

/** The tool run as a plain function call, returning what the toolbus's built-in (or the bench's hosted tool) would. */
export function runLocalTool(tool: StepTool, args: Record<string, unknown>): unknown {
  if (tool === 'echo') return String(args.text);
  if (tool === 'bench_record') return recordEntry(args);
  const timezone = typeof args.timezone === 'string' ? args.timezone : 'UTC';
  const now = new Date();
  return {
    utc: now.toISOString(),
    timezone,
    local: now.toISOString().slice(0, 19),
    weekday: now.toLocaleDateString('en-US', { weekday: 'long', timeZone: timezone }),
  };
}

/** The tool message the runtime sends back for a successful call (its `toolMessage`), so both sides grow alike. */
export function toolMessageContent(result: unknown): string {
  const normalized = typeof result === 'string' ? { result } : result;
  return JSON.stringify({ ok: true, result: normalized });
}

export interface DirectTask {
  /** The system prompt and tool list, copied from what the runtime sent, so the bodies are the same size. */
  system: string;
  goal: string;
  tools: ChatCompletionTool[];
  model: string;
  tool: StepTool;
  /** Safety stop: more LLM calls than this is a script error. */
  maxCalls: number;
}

/**
 * The baseline: the same agent loop with no platform, in one process. Each LLM call goes through
 * the openai SDK to the same scripted model, each tool call is a local function call, and the
 * messages grow as the runtime's do. Returns how long each LLM call took on the client side.
 */
export class DirectAgent {
  private readonly client: OpenAI;

  /** `fetch`: the SDK's HTTP client; by default the one it ships with (Node's global `fetch`). */
  constructor(baseUrl: string, fetch?: typeof globalThis.fetch) {
    this.client = new OpenAI({ baseURL: baseUrl, apiKey: 'scripted', maxRetries: 0, timeout: 60_000, ...(fetch ? { fetch } : {}) });
  }

  async run(t: DirectTask): Promise<{ llmCalls: number; callMs: number[]; callStartedAt: number[]; answer: string }> {
    const messages: ChatCompletionMessageParam[] = [
      { role: 'system', content: t.system },
      { role: 'user', content: t.goal },
    ];
    const callMs: number[] = [];
    const callStartedAt: number[] = [];
    for (let calls = 1; calls <= t.maxCalls; calls++) {
      const started = performance.now();
      callStartedAt.push(epochNow());
      const completion = await this.client.chat.completions.create({ model: t.model, messages, ...(t.tools.length ? { tools: t.tools } : {}) });
      callMs.push(performance.now() - started);
      const message = completion.choices[0]?.message;
      const toolCalls = (message?.tool_calls ?? []).filter((c) => c.type === 'function');
      if (toolCalls.length === 0) return { llmCalls: calls, callMs, callStartedAt, answer: message?.content ?? '' };
      messages.push({
        role: 'assistant',
        content: message?.content ?? null,
        tool_calls: toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.function.name, arguments: c.function.arguments } })),
      });
      for (const c of toolCalls) {
        const result = runLocalTool(t.tool, JSON.parse(c.function.arguments) as Record<string, unknown>);
        messages.push({ role: 'tool', tool_call_id: c.id, content: toolMessageContent(result) });
      }
    }
    throw new BenchError('direct_runaway', `the direct loop made ${t.maxCalls} calls without a final answer`);
  }
}
