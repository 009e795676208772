import { contracts, makeTaskEvent, ownerOf, toolCallIdFor, type RuntimeJob, type TaskEventDataByKind, type ToolCallReply } from '@hermes/contracts';
import type { Bus } from '@hermes/bus';
import type { ChatResult } from '@hermes/llm';
import type { DependencyWait } from './dependency-wait.js';
import type { Compaction } from './conversation-compaction.js';
import type { EvidenceProblem } from './evidence-gate.js';
import type { Logger } from '@hermes/telemetry';

const PREVIEW_CHARS = 1000;

/** How long a tool result event may wait for the runtime's next message to travel with it. */
export const RESULT_EVENT_HOLD_MS = 20;

/**
 * Step events for the submitter. Published without holding up the loop and without waiting for
 * JetStream's ack (their ids are stable, so a redelivered job re-publishing them is
 * de-duplicated); `flush` waits until they have left for the server.
 *
 * A tool result event is held back briefly (`holdMs`) and leaves with the next event of the job,
 * which with a fast model is the next LLM call's: one socket write and one wake-up of the server
 * and of every follower instead of two per step, while the result itself reaches the loop at
 * once. With a slow model it leaves on its own after `holdMs`. The order on the subject is kept.
 */
export class StepEvents {
  private pending = new Set<Promise<unknown>>();
  private held: (() => void)[] = [];
  private holdTimer: NodeJS.Timeout | undefined;
  private readonly holdMs: number;

  constructor(private readonly o: { bus: Bus; logger: Logger; holdMs?: number }) {
    this.holdMs = o.holdMs ?? RESULT_EVENT_HOLD_MS;
  }

  /** The last step an LLM call was reported for: a wait before the next call belongs to the next step. */
  private lastStep = 0;

  llmCall(job: RuntimeJob, step: number, r: ChatResult): void {
    this.lastStep = Math.max(this.lastStep, step);
    this.publish(job, `${job.job_id}:step:${step}:llm`, {
      task_id: job.task_id,
      subtask_id: job.subtask_id,
      step,
      kind: 'llm_call',
      model: r.model,
      usage: r.usage,
      detail: {
        finish_reason: r.finishReason,
        tool_calls: r.toolCalls.length,
        // The server sent no usage: these tokens were counted by Hermes (see docs/llm.md).
        ...(r.usageEstimated ? { usage_estimated: true } : {}),
        ...(r.reasoningTokens ? { reasoning_tokens: r.reasoningTokens } : {}),
        // Only with LLM_KEEP_REASONING; the answer and the session never carry it.
        ...(r.reasoning ? { reasoning: r.reasoning } : {}),
      },
    });
  }

  /** The job waits for a dependency that is away (restarting): which, why, and for how long. */
  waiting(job: RuntimeJob, w: DependencyWait): void {
    const step = this.lastStep + 1;
    this.publish(job, `${job.job_id}:step:${step}:waiting:${w.service}:${w.attempt}:${Date.now()}`, {
      task_id: job.task_id,
      subtask_id: job.subtask_id,
      step,
      kind: 'waiting',
      detail: { waiting_for: w.service, code: w.code, attempt: w.attempt, retry_in_ms: w.delayMs, waited_ms: w.waitedMs },
    });
  }

  /** Something the submitter should know although the job goes on (a recall that timed out): a stable `code` and its detail. */
  warning(job: RuntimeJob, step: number, code: string, detail: Record<string, unknown>): void {
    this.o.logger.warn({ task_id: job.task_id, job_id: job.job_id, code, ...detail }, 'job warning');
    this.publish(job, `${job.job_id}:step:${step}:warning:${code}`, {
      task_id: job.task_id,
      subtask_id: job.subtask_id,
      step,
      kind: 'warning',
      detail: { code, ...detail },
    });
  }

  /** The model said the conversation outgrew its window, and it was folded into a summary before the step's call was asked again. */
  compacted(job: RuntimeJob, step: number, c: Compaction): void {
    this.o.logger.info(
      { task_id: job.task_id, step, compacted: true, folded_messages: c.folded, kept_messages: c.kept, folded_tokens: c.inputTokens },
      'conversation compacted after context_too_long',
    );
    this.publish(job, `${job.job_id}:step:${step}:compacted`, {
      task_id: job.task_id,
      subtask_id: job.subtask_id,
      step,
      kind: 'compacted',
      detail: {
        reason: 'context_too_long',
        folded_messages: c.folded,
        kept_messages: c.kept,
        folded_tokens: c.inputTokens,
        summarizer_calls: c.summarizerCalls,
      },
    });
  }

  /** The evidence gate refused the step's answer and asked the model once more (detail.problems say why). */
  evidenceRefused(job: RuntimeJob, step: number, problems: readonly EvidenceProblem[]): void {
    this.o.logger.info({ task_id: job.task_id, step, problems: problems.map((p) => p.kind) }, 'answer refused by the evidence gate; asking once more');
    this.publish(job, `${job.job_id}:step:${step}:evidence_refused`, {
      task_id: job.task_id,
      subtask_id: job.subtask_id,
      step,
      kind: 'evidence_refused',
      detail: { problems },
    });
  }

  toolCall(job: RuntimeJob, step: number, index: number, tool: string, args: string): void {
    this.publish(job, `${job.job_id}:step:${step}:call:${index}`, {
      task_id: job.task_id,
      subtask_id: job.subtask_id,
      step,
      kind: 'tool_call',
      detail: { call_id: toolCallIdFor(`${job.task_id}:${job.subtask_id}:${step}:${index}`), tool, arguments: preview(args) },
    });
  }

  toolResult(job: RuntimeJob, step: number, index: number, tool: string, reply: ToolCallReply): void {
    const send = () =>
      void this.publish(job, `${job.job_id}:step:${step}:result:${index}`, {
        task_id: job.task_id,
        subtask_id: job.subtask_id,
        step,
        kind: 'tool_result',
        detail: {
          call_id: reply.call_id,
          tool,
          status: reply.status,
          ...(reply.error ? { error: reply.error.code } : {}),
          ...(reply.result !== undefined ? { result: preview(JSON.stringify(reply.result)) } : {}),
          ...(reply.replayed ? { replayed: true } : {}),
          ...(reply.cached ? { cached: true } : {}),
        },
      });
    if (this.holdMs <= 0) return send();
    this.held.push(send);
    this.holdTimer ??= setTimeout(() => this.release(), this.holdMs);
  }

  tokenDelta(job: RuntimeJob, attempt: number, step: number, index: number, text: string): Promise<void> {
    return this.publish(job, `${job.job_id}:delta:${attempt}:${index}`, {
      task_id: job.task_id,
      subtask_id: job.subtask_id,
      step,
      kind: 'token_delta',
      detail: { text, index, attempt },
    });
  }

  async flush(): Promise<void> {
    this.release();
    await Promise.allSettled([...this.pending]);
    // Sent on this connection before whatever the caller publishes next, so the stream holds
    // them before the job's result; flushing makes sure they are out of the client's buffer.
    await this.o.bus.flush().catch(() => undefined);
  }

  /** Sends the held result events, ahead of whatever is published next. */
  private release(): void {
    clearTimeout(this.holdTimer);
    this.holdTimer = undefined;
    const held = this.held;
    this.held = [];
    for (const send of held) send();
  }

  private publish(job: RuntimeJob, id: string, data: TaskEventDataByKind['step']): Promise<void> {
    this.release();
    const p = this.o.bus
      .publish(contracts.taskEvents, makeTaskEvent('step', { id, source: this.o.bus.eventSource('runtime'), taskId: job.task_id, data }), {
        subject: this.o.bus.subjects.taskEvents(ownerOf(job).team, job.task_id),
        msgId: id,
        // Progress, several per step: not worth a JetStream ack round trip each (the stream still
        // stores them, de-duplicated by id). Lifecycle events and results stay acknowledged.
        ack: false,
      })
      .then(
        () => undefined,
        (err: unknown) => this.o.logger.warn({ err, task_id: job.task_id, event_id: id }, 'step event not published'),
      );
    this.pending.add(p);
    void p.finally(() => this.pending.delete(p));
    return p;
  }
}

function preview(text: string): string {
  return text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS)}…` : text;
}
