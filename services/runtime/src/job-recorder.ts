import { trace } from '@opentelemetry/api';
import { requestDigest, type RecordingEntry, type RuntimeJob, type ToolCallReply } from '@hermes/contracts';
import { appendRecording, type Bus } from '@hermes/bus';
import type { ChatResult } from '@hermes/llm';
import type { Logger } from '@hermes/telemetry';
import type { ChatSeam, JobSeams, StepChatRequest, ToolSeam } from './model-seam.js';

/** What replay matches a request by: the conversation and the tools offered, nothing else (not the signal, not the permit). */
export function requestHash(req: Pick<StepChatRequest, 'messages' | 'tools'>): string {
  return requestDigest({ messages: req.messages, tools: req.tools ?? [] });
}

/**
 * Writes a job's recording: every LLM exchange and tool call, in front of the seams it is given.
 * An entry that cannot be stored (the stream away) is logged and skipped: a recording is for
 * looking back, and losing one entry must not fail the user's task.
 */
export class JobRecorder {
  constructor(private readonly o: { bus: Bus; job: RuntimeJob; logger: Logger }) {}

  /** The seams with recording in front. */
  wrap(inner: JobSeams): JobSeams {
    return { llm: this.chat(inner.llm), tools: this.tools(inner.tools) };
  }

  /** Appends one entry (with the job's ids filled in by the caller); never throws. */
  async append(entry: RecordingEntry): Promise<void> {
    try {
      await appendRecording(this.o.bus, entry);
    } catch (err) {
      this.o.logger.warn({ err, kind: entry.kind }, 'recording entry not stored');
    }
  }

  /** The ids every entry of this job carries. */
  base(step: number) {
    const { job } = this.o;
    const traceId = trace.getActiveSpan()?.spanContext().traceId;
    return {
      task_id: job.task_id,
      subtask_id: job.subtask_id,
      job_id: job.job_id,
      user_id: job.user_id,
      ...(job.team ? { team: job.team } : {}),
      step,
      at: new Date().toISOString(),
      ...(traceId && /^[0-9a-f]{32}$/.test(traceId) && !/^0+$/.test(traceId) ? { trace_id: traceId } : {}),
    };
  }

  private chat(inner: ChatSeam): ChatSeam {
    return {
      modelFor: (role) => inner.modelFor(role),
      reserve: (role) => inner.reserve(role),
      chat: async (req) => {
        const started = performance.now();
        const answer = await inner.chat(req);
        await this.append(llmEntry(this.base(req.step ?? 1), req, answer, performance.now() - started));
        return answer;
      },
    };
  }

  private tools(inner: ToolSeam): ToolSeam {
    return {
      call: async (req, signal, waitOut) => {
        const started = performance.now();
        const reply = await inner.call(req, signal, waitOut);
        await this.append(toolEntry(this.base(req.step), req, reply, performance.now() - started));
        return reply;
      },
    };
  }
}

function llmEntry(base: ReturnType<JobRecorder['base']>, req: StepChatRequest, answer: ChatResult, latencyMs: number): RecordingEntry {
  return {
    kind: 'llm',
    ...base,
    request_hash: requestHash(req),
    request: { model_role: req.role, messages: req.messages, ...(req.tools ? { tools: req.tools } : {}) },
    response: {
      content: answer.content,
      tool_calls: answer.toolCalls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments })),
      model: answer.model,
      finish_reason: answer.finishReason,
      usage: answer.usage,
    },
    latency_ms: Math.round(latencyMs),
  };
}

function toolEntry(
  base: ReturnType<JobRecorder['base']>,
  req: { call_index: number; tool: string; arguments: string },
  reply: ToolCallReply,
  latencyMs: number,
): RecordingEntry {
  return {
    kind: 'tool',
    ...base,
    call_index: req.call_index,
    tool: req.tool,
    arguments: req.arguments,
    reply,
    latency_ms: Math.round(latencyMs),
    ...(reply.replayed && reply.call_id.startsWith('replay:') ? { replayed_from: 'recording' as const } : {}),
  };
}
