import {
  HermesError,
  wireError,
  type RecordedLlmExchange,
  type RecordedToolExchange,
  type RecordingEntry,
  type ReplaySource,
  type ScriptCondition,
  type ScriptTurn,
  type WireError,
} from '@hermes/contracts';
import type { ChatResult } from '@hermes/llm';
import type { JobRecorder } from './job-recorder.js';
import { requestHash } from './job-recorder.js';
import { diffLines, diffMessages } from './message-diff.js';
import type { ChatSeam, JobSeams, StepChatRequest, ToolSeam } from './model-seam.js';

/** A replayed job asked for something its recording does not hold (or a script has no answer for): ends the job, never retried. */
export class ReplayDivergedError extends HermesError {
  readonly retryable = false;
  constructor(readonly details: Record<string, unknown> & { step: number; reason: string; diff: string }) {
    super('replay_diverged', `replay diverged from its recording at step ${details.step}: ${details.reason}`);
  }

  toWire(): WireError {
    return wireError('replay_diverged', this.message, this.details);
  }
}

/**
 * Answers a replayed job's model requests (and, unless tools run live, its tool calls) from a
 * source: a recorded task, matched by subtask, step and request hash, or a scripted model whose
 * turn n answers step n. Whatever does not match is recorded as the replay's divergence and ends
 * the job with `replay_diverged`, carrying a diff of the messages.
 */
export class JobReplayer {
  private readonly llm = new Map<string, RecordedLlmExchange>();
  private readonly tools = new Map<string, RecordedToolExchange>();
  private readonly script: ScriptTurn[] | undefined;

  constructor(private readonly o: { source: ReplaySource; entries: readonly RecordingEntry[]; recorder: JobRecorder; subtaskId: string; model: string }) {
    for (const e of o.entries) {
      if (e.kind === 'llm' && !this.llm.has(`${e.subtask_id}:${e.step}`)) this.llm.set(`${e.subtask_id}:${e.step}`, e);
      if (e.kind === 'tool' && !this.tools.has(`${e.subtask_id}:${e.step}:${e.call_index}`)) this.tools.set(`${e.subtask_id}:${e.step}:${e.call_index}`, e);
    }
    this.script = o.source.mode === 'script' ? o.entries.find((e) => e.kind === 'script')?.turns : undefined;
  }

  /** The job's seams: the model answered from the source; tools from it too unless `tools: 'live'` (or a script, whose tools always run). */
  seams(live: JobSeams): JobSeams {
    const liveTools = this.o.source.mode === 'script' || this.o.source.tools === 'live';
    return { llm: this.chat(live.llm), tools: liveTools ? live.tools : this.recordedTools() };
  }

  private chat(live: ChatSeam): ChatSeam {
    return {
      modelFor: (role) => live.modelFor(role),
      // Answers from a recording take no permit: no provider is asked.
      reserve: () => undefined,
      chat: (req) => (this.o.source.mode === 'script' ? this.scripted(req) : this.recorded(req)),
    };
  }

  private async recorded(req: StepChatRequest): Promise<ChatResult> {
    const step = req.step ?? 1;
    const recorded = this.llm.get(`${this.o.subtaskId}:${step}`);
    const hash = requestHash(req);
    if (!recorded) return this.diverge(step, { reason: 'step_missing', actual_hash: hash, diff: diffMessages([], req.messages) });
    if (recorded.request_hash !== hash) {
      const toolsDiffer =
        requestHash({ messages: [], tools: recorded.request.tools as StepChatRequest['tools'] }) !==
        requestHash({ messages: [], ...(req.tools ? { tools: req.tools } : {}) });
      const diff = [diffMessages(recorded.request.messages, req.messages), toolsDiffer ? `(the tools offered differ too)` : ''].filter(Boolean).join('\n');
      return this.diverge(step, { reason: 'request_differs', expected_hash: recorded.request_hash, actual_hash: hash, diff });
    }
    const r = recorded.response;
    if (r.content && req.onDelta) req.onDelta(r.content);
    return {
      content: r.content,
      toolCalls: r.tool_calls,
      finishReason: r.finish_reason ?? (r.tool_calls.length ? 'tool_calls' : 'stop'),
      model: r.model,
      usage: r.usage,
    };
  }

  private async scripted(req: StepChatRequest): Promise<ChatResult> {
    const step = req.step ?? 1;
    const turn = this.script?.[step - 1];
    if (!turn) return this.diverge(step, { reason: 'step_missing', diff: `the script has ${this.script?.length ?? 0} turns; step ${step} has none` });
    const answer = turn.find((a) => holds(a.when, req.messages));
    if (!answer) {
      const wanted = turn.map((a, i) => `answer ${i}: when ${JSON.stringify(a.when ?? {})}`);
      return this.diverge(step, { reason: 'request_differs', diff: diffLines(wanted, describeLast(req.messages)) });
    }
    const toolCalls = (answer.tool_calls ?? []).map((c, i) => ({
      id: `call_s${step}_${i}`,
      name: c.name,
      arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments),
    }));
    const content = answer.content ?? (toolCalls.length ? null : '');
    if (content && req.onDelta) req.onDelta(content);
    const usage = {
      input_tokens: Math.ceil(JSON.stringify(req.messages).length / 4),
      output_tokens: Math.max(1, Math.ceil(JSON.stringify(answer).length / 4)),
    };
    return { content, toolCalls, finishReason: toolCalls.length ? 'tool_calls' : 'stop', model: `scripted:${this.o.model}`, usage };
  }

  private recordedTools(): ToolSeam {
    return {
      call: async (req) => {
        const recorded = this.tools.get(`${req.subtask_id}:${req.step}:${req.call_index}`);
        if (!recorded || recorded.tool !== req.tool || recorded.arguments !== req.arguments) {
          const expected = recorded ? [`${recorded.tool}(${recorded.arguments})`] : [];
          return this.diverge(req.step, {
            reason: 'tool_call_differs',
            call_index: req.call_index,
            diff: diffLines(expected, [`${req.tool}(${req.arguments})`]),
          });
        }
        return { ...recorded.reply, call_id: `replay:${recorded.reply.call_id}`, replayed: true };
      },
    };
  }

  private async diverge(
    step: number,
    d: { reason: 'request_differs' | 'step_missing' | 'tool_call_differs'; diff: string; call_index?: number; expected_hash?: string; actual_hash?: string },
  ): Promise<never> {
    await this.o.recorder.append({ kind: 'divergence', ...this.o.recorder.base(step), source_task: this.o.source.source_task, ...d });
    throw new ReplayDivergedError({ step, source_task: this.o.source.source_task, subtask_id: this.o.subtaskId, ...d });
  }
}

/** Whether a scripted answer's condition holds for the request (no condition always does). */
export function holds(when: ScriptCondition | undefined, messages: readonly unknown[]): boolean {
  if (!when) return true;
  const all = messages as { role?: string; content?: unknown }[];
  const lastTool = [...all].reverse().find((m) => m.role === 'tool');
  const text = typeof lastTool?.content === 'string' ? lastTool.content : '';
  const parsed = parseToolMessage(text);
  if (when.last_tool_ok !== undefined && (lastTool === undefined || parsed?.ok !== when.last_tool_ok)) return false;
  if (when.last_tool_error !== undefined && parsed?.error?.code !== when.last_tool_error) return false;
  if (when.last_tool_contains !== undefined && !text.includes(when.last_tool_contains)) return false;
  if (when.messages_contain !== undefined && !all.some((m) => typeof m.content === 'string' && m.content.includes(when.messages_contain!))) return false;
  return true;
}

function parseToolMessage(text: string): { ok?: boolean; error?: { code?: string } } | undefined {
  try {
    return JSON.parse(text) as { ok?: boolean; error?: { code?: string } };
  } catch {
    return undefined;
  }
}

function describeLast(messages: readonly unknown[]): string[] {
  const last = messages.at(-1);
  return last === undefined
    ? ['(no messages)']
    : diffMessages([], [last])
        .split('\n')
        .map((l) => l.replace(/^\+ /, 'got: '));
}
