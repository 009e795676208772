import { contracts, makeTaskEvent, toolCallIdFor, type RuntimeJob, type TaskEventDataByKind, type ToolCallReply } from '@hermes/contracts';
import type { Bus } from '@hermes/bus';
import type { ChatResult } from '@hermes/llm';
import type { Logger } from '@hermes/telemetry';

const SOURCE = 'hermes/runtime';
const PREVIEW_CHARS = 1000;

/**
 * Step events for the submitter. Published without holding up the loop and without waiting for
 * JetStream's ack (their ids are stable, so a redelivered job re-publishing them is
 * de-duplicated); `flush` waits until they have left for the server.
 */
export class StepEvents {
  private pending = new Set<Promise<unknown>>();

  constructor(private readonly o: { bus: Bus; logger: Logger }) {}

  llmCall(job: RuntimeJob, step: number, r: ChatResult): void {
    this.publish(job, `${job.job_id}:step:${step}:llm`, {
      task_id: job.task_id,
      subtask_id: job.subtask_id,
      step,
      kind: 'llm_call',
      model: r.model,
      usage: r.usage,
      detail: { finish_reason: r.finishReason, tool_calls: r.toolCalls.length },
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
    this.publish(job, `${job.job_id}:step:${step}:result:${index}`, {
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
    await Promise.allSettled([...this.pending]);
    // Sent on this connection before whatever the caller publishes next, so the stream holds
    // them before the job's result; flushing makes sure they are out of the client's buffer.
    await this.o.bus.nc.flush().catch(() => undefined);
  }

  private publish(job: RuntimeJob, id: string, data: TaskEventDataByKind['step']): Promise<void> {
    const p = this.o.bus
      .publish(contracts.taskEvents, makeTaskEvent('step', { id, source: SOURCE, taskId: job.task_id, data }), {
        subject: this.o.bus.subjects.taskEvents(job.task_id),
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
