import type { JsMsg } from '@nats-io/jetstream';
import { contracts, makeTaskEvent, wireError, type RuntimeJob, type RuntimeResult, type TaskEventDataByKind, type TaskEventKind } from '@hermes/contracts';
import { RemoteError, request, type Bus } from '@hermes/bus';
import { LlmError, type LlmClient } from '@hermes/llm';
import type { Logger } from '@hermes/telemetry';
import { buildPrompt } from './prompt-builder.js';
import { TokenStream } from './token-stream.js';

export interface JobRunnerOptions {
  bus: Bus;
  llm: LlmClient;
  logger: Logger;
  /** Deliveries of one job before it is reported failed instead of retried. */
  maxAttempts: number;
}

const SOURCE = 'hermes/runtime';

/**
 * Runs one job: one LLM call over the session's history, then the result back to the dispatcher.
 * Retryable failures (LLM 429/5xx, memory or toolbus unavailable) throw, so JetStream redelivers
 * the job; after `maxAttempts` deliveries, or on a non-retryable error, a failed result is sent.
 */
export class JobRunner {
  constructor(private readonly o: JobRunnerOptions) {}

  async run(job: RuntimeJob, msg: JsMsg): Promise<void> {
    const attempt = msg.info.deliveryCount;
    const log = this.o.logger.child({ task_id: job.task_id, job_id: job.job_id, attempt });
    if (attempt > this.o.maxAttempts) {
      log.warn('job redelivered too many times; reporting failure');
      await this.report(job, attempt, {
        outcome: 'failed',
        error: wireError('job_attempts_exhausted', `job ${job.job_id} was delivered ${attempt} times without finishing`, { max_attempts: this.o.maxAttempts }),
      });
      return;
    }
    log.info('job started');
    await this.emit('started', job, `${job.job_id}:started:${attempt}`, { task_id: job.task_id, subtask_id: job.subtask_id, attempt });

    try {
      const history = await request(this.o.bus, contracts.sessionRead, { user_id: job.user_id, session_id: job.session_id, limit: 20 });
      const tools = await request(this.o.bus, contracts.toolsList, { user_id: job.user_id, ...(job.tools ? { allow: job.tools } : {}) });
      const messages = buildPrompt(job, history.messages);
      const maxTokens = job.budget?.max_tokens;
      const estimate = Math.ceil(JSON.stringify(messages).length / 4);
      if (maxTokens !== undefined && estimate > maxTokens) {
        await this.report(job, attempt, {
          outcome: 'failed',
          error: wireError('budget_exceeded', `the prompt alone (~${estimate} tokens) exceeds the task budget of ${maxTokens} tokens`, { estimated_tokens: estimate, max_tokens: maxTokens }),
        });
        return;
      }
      const stream = job.stream ? this.tokenStream(job, attempt) : undefined;
      const answer = await this.o.llm.chat({
        role: job.model_role,
        messages,
        ...(stream ? { onDelta: (t: string) => stream.push(t) } : {}),
      });
      await stream?.flush();
      await this.emit('step', job, `${job.job_id}:step:1`, {
        task_id: job.task_id,
        subtask_id: job.subtask_id,
        step: 1,
        kind: 'llm_call',
        model: answer.model,
        usage: answer.usage,
        detail: { finish_reason: answer.finishReason, tools_available: tools.tools.length },
      });
      const output = answer.content ?? '';
      await request(this.o.bus, contracts.sessionAppend, {
        user_id: job.user_id,
        session_id: job.session_id,
        messages: [
          { role: 'user', content: job.goal },
          { role: 'assistant', content: output },
        ],
      });
      await this.report(job, attempt, { outcome: 'succeeded', output, usage: answer.usage, model: answer.model });
      log.info({ usage: answer.usage }, 'job succeeded');
    } catch (err) {
      const retryable = err instanceof LlmError || err instanceof RemoteError ? err.retryable : true;
      if (retryable && attempt < this.o.maxAttempts) throw err;
      const wire = err instanceof LlmError ? err.toWire() : err instanceof RemoteError ? err.wire : wireError('internal', (err as Error).message);
      log.warn({ err, code: wire.code }, 'job failed');
      await this.report(job, attempt, { outcome: 'failed', error: wire });
    }
  }

  private tokenStream(job: RuntimeJob, attempt: number): TokenStream {
    return new TokenStream({
      intervalMs: 100,
      publish: (text, index) =>
        this.emit('step', job, `${job.job_id}:delta:${attempt}:${index}`, {
          task_id: job.task_id,
          subtask_id: job.subtask_id,
          step: 1,
          kind: 'token_delta',
          detail: { text, index, attempt },
        }),
    });
  }

  private async report(job: RuntimeJob, attempt: number, r: Pick<RuntimeResult, 'outcome'> & Partial<RuntimeResult>): Promise<void> {
    const result: RuntimeResult = {
      job_id: job.job_id,
      task_id: job.task_id,
      subtask_id: job.subtask_id,
      attempt,
      usage: { input_tokens: 0, output_tokens: 0 },
      ...r,
    };
    // One result per job: a runtime that dies after publishing and is redelivered is de-duplicated.
    await this.o.bus.publish(contracts.runtimeResults, result, { msgId: `${job.job_id}:result` });
  }

  private async emit<K extends TaskEventKind>(kind: K, job: RuntimeJob, id: string, data: TaskEventDataByKind[K]): Promise<void> {
    await this.o.bus.publish(contracts.taskEvents, makeTaskEvent(kind, { id, source: SOURCE, taskId: job.task_id, data }), {
      subject: this.o.bus.subjects.taskEvents(job.task_id),
      msgId: id,
    });
  }
}
