import { setMaxListeners } from 'node:events';
import type { JsMsg } from '@nats-io/jetstream';
import {
  contracts,
  ERROR_CODES,
  makeTaskEvent,
  ownerFields,
  ownerOf,
  Plan,
  type RuntimeJob,
  type RuntimeResult,
  type ToolDefinition,
  type WireError,
} from '@hermes/contracts';
import { errorAsWire, isDependencyOutage, isRetryable, request, type Bus, type HandlerOutcome } from '@hermes/bus';
import type { LlmClient } from '@hermes/llm';
import type { Logger } from '@hermes/telemetry';
import { AgentLoop, jobRoles, type LoopLimits } from './agent-loop.js';
import { withAskUser } from './ask-user.js';
import { recordAgentOutcome, runInAgentSpan, traceMemoryContext, traceMemoryRecall } from './agent-spans.js';
import { noWaiting, waitOutOutage, type OutagePolicy, type WaitOut } from './dependency-wait.js';
import { CheckpointConflictError, type Checkpoint, type CheckpointStore, type JobCheckpoint } from './checkpoint-store.js';
import { loopSignal, SessionHoldError, type SessionHold, type SessionHolds } from './session-hold.js';
import { recallBackground } from './memory-recall.js';
import { eitherSignal, JobDeadline } from './job-deadline.js';
import { assertOpeningFits } from './opening-budget.js';
import { openingMessages } from './prompt-builder.js';
import { memoryCompactor } from './conversation-compaction.js';
import { RESERVE_OUTPUT_TOKENS, toolReserveTokens } from './tool-reserve.js';
import { countMessage, encodingFor } from '@hermes/llm';
import { composeMessages, parseJsonAnswer, planMessages, reviewMessages, type SingleCallOutcome } from './single-call-jobs.js';
import { StepEvents } from './step-events.js';
import { callPriority } from './call-priority.js';
import { stepTimer } from './step-timer.js';
import { TokenStream } from './token-stream.js';
import type { ToolCaller } from './tool-caller.js';
import type { CancellationWatch } from './cancellation-watch.js';
import type { JobSeamFactory } from './job-seams.js';
import type { ChatSeam, JobSeams } from './model-seam.js';

export interface JobRunnerOptions {
  bus: Bus;
  llm: LlmClient;
  logger: Logger;
  checkpoints: CheckpointStore;
  tools: ToolCaller;
  /** Deliveries of one job before it is reported failed instead of retried. */
  maxAttempts: number;
  /** Default loop limits; a task's budget.max_steps overrides maxSteps. */
  limits: LoopLimits;
  /** How long requests wait out a toolbus or memory outage (HERMES_OUTAGE_BUDGET_MS); without it an outage fails them at once. */
  outage?: OutagePolicy;
  /** Aborts jobs of cancelled tasks; without it jobs run to the end. */
  cancellations?: CancellationWatch;
  /** Log each step's phase durations at debug level (RUNTIME_STEP_TIMING), to see where a step's time goes. */
  stepTiming?: boolean;
  /** The worker model's context window in tokens (MODEL_CONTEXT_TOKENS); the session context is fitted into it. */
  contextTokens?: number;
  /** One loop per session: agent jobs hold their session's lock while they run (without it, none is taken). */
  sessions?: SessionHolds;
  /** Records and replays jobs (docs/evals.md); without it every job talks to the LLM client and the toolbus directly. */
  seams?: JobSeamFactory;
  /** AGENT_TOOL_ERROR_DETAIL (see AgentLoopDeps). */
  toolErrorDetail?: 'full' | 'none';
}

/**
 * Runs one job from the queue: resumes its checkpoint (or starts one from the session), runs the
 * agent loop, writes the final turn to the session and reports the result to the dispatcher.
 * Retryable failures (LLM 429/5xx, memory or toolbus unreachable) throw, so JetStream redelivers
 * the job, which resumes at its last completed step; a retryable failure on delivery `maxAttempts`
 * or later, or a non-retryable error, is reported as a failed result.
 */
export class JobRunner {
  /** Jobs this process is running, by job id: a process never runs two loops for one job. */
  private readonly running = new Map<string, Promise<JobDisposition>>();

  constructor(private readonly o: JobRunnerOptions) {}

  /**
   * Runs a delivery of a job. A redelivery that lands in the process still running the job (it
   * was paused past the ack wait, say) runs nothing: it ends as the run in progress ends.
   * `leave`: another process holds the job now, and this delivery must neither ack it (the work
   * queue would drop the message for every holder) nor nak it (it would run a third time).
   */
  async run(job: RuntimeJob, msg: JsMsg): Promise<JobDisposition> {
    const current = this.running.get(job.job_id);
    if (current) {
      this.o.logger.warn(
        { task_id: job.task_id, job_id: job.job_id, attempt: msg.info.deliveryCount },
        'job redelivered while this process runs it; following that run',
      );
      return current;
    }
    const run = runInAgentSpan(
      job,
      msg.info.deliveryCount,
      { model: this.o.llm.modelFor(job.model_role), provider: this.o.llm.providerFor(job.model_role) },
      () => this.runJob(job, msg),
    );
    this.running.set(job.job_id, run);
    try {
      return await run;
    } finally {
      this.running.delete(job.job_id);
    }
  }

  private async runJob(job: RuntimeJob, msg: JsMsg): Promise<JobDisposition> {
    // The delivery's number: it also counts deliveries that were no attempt of their own (one that
    // landed in the process still running the job, one left to another holder) and those a runtime
    // died or stalled during. So a delivery past maxAttempts still runs (a pause and a crash in a
    // row cost time, not the task); the consumer's RUNTIME_MAX_DELIVERIES bounds the deliveries,
    // and maxAttempts only how often a retryable failure is handed back (below).
    const attempt = msg.info.deliveryCount;
    const log = this.o.logger.child({ task_id: job.task_id, job_id: job.job_id, attempt });
    log.info('job started');
    const events = new StepEvents({ bus: this.o.bus, logger: log });
    const guard = this.o.cancellations?.track(job.task_id);
    const deadline = new JobDeadline(job);
    const waitOut = this.waitOutFor(job, events, log, guard?.signal);
    // An agent loop's tool list and checkpoint depend on neither the started event nor the session
    // lock: asked for now, they arrive while those round trips are made. Plan, compose and review jobs
    // (one LLM call each) need neither.
    const prefetched = job.kind === 'plan' || job.kind === 'compose' || job.kind === 'review' ? undefined : this.prefetch(job, waitOut, attempt > 1);
    let hold: SessionHold | undefined;
    try {
      await this.publishStarted(job, attempt);
      const direct: JobSeams = { llm: this.o.llm, tools: this.o.tools };
      const seams = (await this.o.seams?.forJob(job, log, direct)) ?? direct;
      if (!prefetched) {
        const single = await this.runSingleCall(job, attempt, events, waitOut, seams.llm, guard?.signal);
        await events.flush();
        await this.report(job, attempt, {
          outcome: 'succeeded',
          output: single.output,
          usage: single.answer.usage,
          model: single.answer.model,
          ...(single.plan !== undefined ? { plan: single.plan } : {}),
          ...(single.verdict !== undefined ? { verdict: single.verdict } : {}),
        });
        log.info({ kind: job.kind, usage: single.answer.usage }, 'job succeeded');
        return 'done';
      }
      // Plan and compose jobs never touch the session; an agent loop holds it from reading its
      // context to writing its final turn.
      hold = await this.o.sessions?.acquire(job, guard?.signal, waitOut);
      const signal = eitherSignal(loopSignal(guard?.signal, hold), deadline.signal);
      // Each call of a turn listens on it while it waits (for approval, say), and a turn may hold
      // more than the default of ten: not a leak, as every wait removes its listener.
      if (signal) setMaxListeners(0, signal);
      const outcome = await this.runLoop(job, attempt, events, log, prefetched, waitOut, seams, signal);
      await events.flush();
      if (outcome.kind === 'stopped') {
        log.warn({ code: outcome.error.code }, 'job stopped');
        await this.report(job, attempt, { outcome: 'failed', error: outcome.error, usage: outcome.usage });
        return 'done';
      }
      if (outcome.kind === 'input_required') {
        // The job ends here and frees its slot; the answer comes as a new job resuming this one's checkpoint.
        await this.report(job, attempt, { outcome: 'input_required', question: { ...outcome.question, usage_total: outcome.usage }, usage: outcome.usage });
        log.info({ call_id: outcome.question.call_id }, 'job waits for the user: question asked');
        return 'done';
      }
      await this.writeSession(job, prefetched.checkpoint, outcome.checkpoint, outcome.output, waitOut);
      await this.report(job, attempt, { outcome: 'succeeded', output: outcome.output, usage: outcome.usage, model: outcome.model });
      log.info({ usage: outcome.usage, steps: outcome.checkpoint.step }, 'job succeeded');
    } catch (err) {
      await events.flush();
      if (guard?.signal.aborted) {
        // The dispatcher already ended the task as cancelled; there is nothing to report.
        log.info('job stopped: task cancelled');
        return 'done';
      }
      if (deadline.expired) {
        // Not thrown for a redelivery: another run would only hit the same bound; the dispatcher retries the subtask.
        log.warn({ timeout_ms: job.timeout_ms }, 'job stopped: ran longer than its timeout');
        await this.report(job, attempt, { outcome: 'failed', error: deadline.error() });
        return 'done';
      }
      if (err instanceof CheckpointConflictError) {
        // Another runtime has the job now; it reports, and its delivery's ack ends the message.
        log.warn('job taken over by another runtime; stopping without acking');
        return 'leave';
      }
      const holdFailure = hold?.lost ?? (err instanceof SessionHoldError ? err.wire : undefined);
      if (holdFailure) {
        log.warn({ code: holdFailure.code, session_id: job.session_id }, 'job failed: session lock');
        await this.report(job, attempt, { outcome: 'failed', error: holdFailure });
        return 'done';
      }
      // A payload that fails its own contract is a bug (or a model producing garbage); retrying cannot fix it.
      // One rule for every work queue (libs/bus): an error that says it is not retryable, a payload
      // that fails its own contract or a programming error fails now; anything else is retried.
      const retryable = isRetryable(err);
      // A dependency away (no JetStream leader, nobody answering): the work consumer keeps this
      // delivery and runs it again once it is back, whatever attempt this is.
      if ((retryable && attempt < this.o.maxAttempts) || isDependencyOutage(err)) {
        // The redelivered job (same task, so same lock group) takes the session up again at once;
        // releasing here would let another task's loop slip in between the two attempts.
        hold?.abandon();
        throw err;
      }
      const wire = toWire(err);
      log.warn({ err, code: wire.code }, 'job failed');
      await this.report(job, attempt, { outcome: 'failed', error: wire });
    } finally {
      deadline.clear();
      await hold?.release();
      guard?.done();
    }
    return 'done';
  }

  /** The tool list and saved checkpoint of an agent job, asked for at once; awaited by `runLoop`. */
  /**
   * How this job's requests to the toolbus and memory wait out an outage of theirs (a restart):
   * within HERMES_OUTAGE_BUDGET_MS, with each pause logged and published as a `waiting` step.
   */
  private waitOutFor(job: RuntimeJob, events: StepEvents, log: Logger, signal?: AbortSignal): WaitOut {
    const outage = this.o.outage;
    if (!outage) return noWaiting;
    return (service, request) =>
      waitOutOutage(
        {
          ...outage,
          service,
          ...(signal ? { signal } : {}),
          onWait: (w) => {
            log.warn({ waiting_for: w.service, code: w.code, attempt: w.attempt, retry_in_ms: w.delayMs, waited_ms: w.waitedMs }, 'dependency away; waiting');
            events.waiting(job, w);
          },
        },
        request,
      );
  }

  /** `redelivered`: an earlier delivery may still be running somewhere; the load claims the fence from it. */
  private prefetch(job: RuntimeJob, waitOut: WaitOut, redelivered: boolean): Prefetched {
    const checkpoint = this.o.checkpoints.open(job.job_id);
    const out: Prefetched = {
      tools: waitOut('toolbus', () => listTools(this.o.bus, job)),
      checkpoint,
      saved: checkpoint.load({ claim: redelivered }).then((own) => own ?? this.resumedCheckpoint(job)),
    };
    // The job may end before they are awaited (publishing `started` failed, the session stayed busy).
    out.tools.catch(() => undefined);
    out.saved.catch(() => undefined);
    return out;
  }

  /**
   * A job answering a question starts from the checkpoint of the job that asked (its turn with the
   * ask_user call pending), under its own job id from then on. Gone (past its TTL), the job starts
   * over, and its model may ask again.
   */
  private async resumedCheckpoint(job: RuntimeJob): Promise<Checkpoint | undefined> {
    if (!job.input_answer) return undefined;
    const asked = await this.o.checkpoints.open(job.input_answer.from_job).load();
    if (!asked) {
      this.o.logger.warn(
        { task_id: job.task_id, job_id: job.job_id, from_job: job.input_answer.from_job },
        'checkpoint of the asking job is gone; starting over',
      );
      return undefined;
    }
    return { ...asked, job_id: job.job_id };
  }

  private async runLoop(
    job: RuntimeJob,
    attempt: number,
    events: StepEvents,
    log: Logger,
    prefetched: Prefetched,
    waitOut: WaitOut,
    seams: JobSeams,
    signal?: AbortSignal,
  ) {
    // The tool list was asked for as the job started: its schemas size the room kept for them.
    const tools = withAskUser(job, (await prefetched.tools).tools);
    const reserveTools = toolReserveTokens(job, tools, this.o.llm.modelFor(job.model_role));
    const checkpoint = (await prefetched.saved) ?? (await this.startCheckpoint(job, events, waitOut, reserveTools));
    if (checkpoint.step === 0)
      assertOpeningFits({ messages: checkpoint.messages, ...this.openingLimits(job, reserveTools), maxTokens: job.budget?.max_tokens });
    const stream = job.stream
      ? new TokenStream({ intervalMs: 100, publish: (text, index, step) => events.tokenDelta(job, attempt, step, index, text) })
      : undefined;
    const timer = this.o.stepTiming ? stepTimer((t) => log.debug({ step_timing: t }, 'step timing')) : undefined;
    const compact = memoryCompactor({ bus: this.o.bus, waitOut });
    const loop = new AgentLoop({
      llm: seams.llm,
      tools: seams.tools,
      ...(this.o.toolErrorDetail ? { toolErrorDetail: this.o.toolErrorDetail } : {}),
      checkpoints: prefetched.checkpoint,
      events,
      waitOut,
      compact,
      ...(timer ? { timer } : {}),
    });
    const outcome = await loop.run({
      job,
      checkpoint,
      tools,
      limits: { ...this.o.limits, ...(job.budget?.max_steps ? { maxSteps: job.budget.max_steps } : {}) },
      priority: callPriority(job, attempt),
      ...(stream ? { onDelta: (t: string, step: number) => stream.push(t, step) } : {}),
      ...(signal ? { signal } : {}),
    });
    await stream?.flush();
    return outcome;
  }

  /**
   * Plan, compose and review jobs are one LLM call each, without tools or a checkpoint: a redelivered one
   * simply asks again. A plan's or verdict's JSON is parsed (and repaired) here and validated by the dispatcher.
   */
  private async runSingleCall(
    job: RuntimeJob,
    attempt: number,
    events: StepEvents,
    waitOut: WaitOut,
    llm: ChatSeam,
    signal?: AbortSignal,
  ): Promise<SingleCallOutcome> {
    let messages;
    if (job.kind === 'plan') {
      const tools = await waitOut('toolbus', () => listTools(this.o.bus, job));
      messages = planMessages(job, tools.tools);
    } else {
      messages = job.kind === 'review' ? reviewMessages(job) : composeMessages(job);
    }
    // The opening check counts the last message; the system prompt before it is kept free.
    const encoding = encodingFor(this.o.llm.modelFor(job.model_role));
    const before = messages
      .slice(0, -1)
      .reduce((sum, m) => sum + countMessage({ content: typeof m.content === 'string' ? m.content : JSON.stringify(m.content ?? '') }, encoding), 0);
    assertOpeningFits({ messages, ...this.openingLimits(job, before) });
    // A plan is asked for in the plan schema where the provider can hold the model to it; parsed and repaired either way.
    const plan = job.kind === 'plan' ? { responseSchema: { name: 'plan', schema: Plan } } : {};
    const answer = await llm.chat({ role: job.model_role, step: 1, priority: callPriority(job, attempt), messages, ...plan, ...(signal ? { signal } : {}) });
    events.llmCall(job, 1, answer);
    const output = answer.content ?? '';
    if (job.kind === 'plan') return { output, plan: parseJsonAnswer(output), answer };
    return job.kind === 'review' ? { output, verdict: parseJsonAnswer(output), answer } : { output, answer };
  }

  /** The window and what is kept free in it: the answer's tokens, and the prompt's beyond the conversation (system prompt, tool schemas). */
  private openingLimits(job: RuntimeJob, reservePromptTokens: number) {
    return { contextTokens: this.contextTokens(job), reserveTokens: RESERVE_OUTPUT_TOKENS + reservePromptTokens };
  }

  /** The job's model's window: its pool's `context_tokens` for the model, else MODEL_CONTEXT_TOKENS. */
  private contextTokens(job: RuntimeJob): number {
    return this.o.llm.contextTokensFor(job.model_role) ?? this.o.contextTokens ?? 128_000;
  }

  private async startCheckpoint(job: RuntimeJob, events: StepEvents, waitOut: WaitOut, reserveTools: number): Promise<Checkpoint> {
    const background = traceMemoryRecall(() =>
      recallBackground({
        bus: this.o.bus,
        job,
        logger: this.o.logger.child({ task_id: job.task_id, job_id: job.job_id }),
        onTimeout: (timeoutMs) => events.warning(job, 1, 'memory_recall_timed_out', { timeout_ms: timeoutMs, started_without: 'long_term_memories' }),
      }),
    );
    const history = await traceMemoryContext(job, () =>
      waitOut('memory', () =>
        request(this.o.bus, contracts.sessionContext, {
          ...ownerFields(job),
          session_id: job.session_id,
          model: this.o.llm.modelFor('worker'),
          context_limit: this.contextTokens(job),
          reserve_output: RESERVE_OUTPUT_TOKENS,
          reserve_tools: reserveTools,
        }),
      ),
    );
    return {
      job_id: job.job_id,
      step: 0,
      messages: openingMessages(job, history.messages, await background),
      usage: { input_tokens: 0, output_tokens: 0 },
      calls: [],
      pending: false,
    };
  }

  private async writeSession(job: RuntimeJob, fence: JobCheckpoint, cp: Checkpoint, output: string, waitOut: WaitOut): Promise<void> {
    if (cp.session_written) return;
    await waitOut('memory', () =>
      request(this.o.bus, contracts.sessionAppend, {
        ...ownerFields(job),
        session_id: job.session_id,
        messages: [
          { role: 'user', content: job.goal },
          { role: 'assistant', content: output },
        ],
      }),
    );
    cp.session_written = true;
    await fence.save(cp);
  }

  private async publishStarted(job: RuntimeJob, attempt: number): Promise<void> {
    const id = `${job.job_id}:started:${attempt}`;
    await this.o.bus.publish(
      contracts.taskEvents,
      makeTaskEvent('started', {
        id,
        source: this.o.bus.eventSource('runtime'),
        taskId: job.task_id,
        data: { task_id: job.task_id, subtask_id: job.subtask_id, attempt },
      }),
      { subject: this.o.bus.subjects.taskEvents(ownerOf(job).team, job.task_id), msgId: id },
    );
  }

  private async report(job: RuntimeJob, attempt: number, r: Pick<RuntimeResult, 'outcome'> & Partial<RuntimeResult>): Promise<void> {
    const result: RuntimeResult = {
      job_id: job.job_id,
      task_id: job.task_id,
      subtask_id: job.subtask_id,
      attempt,
      ...r,
      // A resumed job's checkpoint counts the asking jobs' tokens too, which they reported already.
      usage: usageSince(r.usage ?? { input_tokens: 0, output_tokens: 0 }, job.input_answer?.usage_before),
    };
    recordAgentOutcome(result);
    // One result per job: a runtime that dies after publishing and is redelivered is de-duplicated.
    await this.o.bus.publish(contracts.runtimeResults, result, { msgId: `${job.job_id}:result`, span: true });
  }
}

/** The tools a job may offer its model: the user's, by the roles the dispatcher gave the job, within its allow-list. */
function listTools(bus: Bus, job: RuntimeJob): Promise<{ tools: ToolDefinition[] }> {
  return request(bus, contracts.toolsList, { ...ownerFields(job), roles: jobRoles(job), ...(job.tools ? { allow: job.tools } : {}) });
}

/** How a delivery ends for the work queue: `done` acks it, `leave` leaves it to the job's current holder. */
export type JobDisposition = HandlerOutcome;

interface Prefetched {
  tools: Promise<{ tools: ToolDefinition[] }>;
  /** This delivery's checkpoint handle: its fence. */
  checkpoint: JobCheckpoint;
  saved: Promise<Checkpoint | undefined>;
}

function usageSince(total: RuntimeResult['usage'], before: RuntimeResult['usage'] | undefined): RuntimeResult['usage'] {
  if (!before) return total;
  return { input_tokens: Math.max(0, total.input_tokens - before.input_tokens), output_tokens: Math.max(0, total.output_tokens - before.output_tokens) };
}

function toWire(err: unknown): WireError {
  const wire = errorAsWire(err);
  // A code only our own errors carry reaches the task; anything else (a client library's) is internal.
  return wire.code in ERROR_CODES ? wire : { ...wire, code: 'internal' };
}
