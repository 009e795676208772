import type { JsMsg } from '@nats-io/jetstream';
import {
  contracts,
  decodeCloudEvent,
  makeTaskEvent,
  requestDigest,
  sourceAndId,
  taskIdFor,
  teamField,
  teamOfSubject,
  validate,
  wireError,
  TaskSubmitEvent,
  type TaskRejectedEvent,
  type TraceContext,
  type ValidationIssue,
  type WireError,
  contextFromTraceparent,
} from '@hermes/contracts';
import type { Static } from '@sinclair/typebox';
import { admissionOf, deadLetter, type Admission, type AdmissionBounds, type Bus, type QueueGauge } from '@hermes/bus';
import { context, trace } from '@opentelemetry/api';
import { inSpan, withTaskFields, type Logger } from '@hermes/telemetry';
import type { TaskStore } from './task-store.js';
import { emitTaskEvent } from './task-events.js';
import type { TaskIndex } from './task-index.js';
import type { PlanCoordinator } from './plan-coordinator.js';
import { initialPlan, singlePlan } from './plan-scheduler.js';
import type { TaskMetrics } from './task-metrics.js';
import { activeTraceContext } from './task-trace.js';

/**
 * Turns a submission into a task: decode (structured or binary CloudEvent), validate, create the
 * task state and start it through the coordinator (which announces `accepted` and sends the first
 * job). Every step is idempotent, so a redelivered submission (dispatcher died half-way) finishes
 * the work instead of duplicating it.
 */
export class TaskIntake {
  constructor(
    private readonly o: {
      bus: Bus;
      store: TaskStore;
      logger: Logger;
      /** Lists tasks per user and marks them active for the timers. */
      index: TaskIndex;
      /** `auto`: a planner splits the task into subtasks; `single`: the goal is a one-node plan. */
      planMode: 'auto' | 'single';
      coordinator: PlanCoordinator;
      /** Deadline of a task without budget.timeout_ms (TASK_TIMEOUT_MS); without it only budget.timeout_ms sets one. */
      taskTimeoutMs?: number;
      metrics?: TaskMetrics;
      /** Admission control: the runtime job queue and the bounds it is held to (without them every task is admitted). */
      admission?: { gauge: Pick<QueueGauge, 'estimate'>; bounds: AdmissionBounds };
    },
  ) {}

  async handle(msg: JsMsg): Promise<void> {
    const header = (name: string) => headerIgnoringCase(msg, name);
    const submission = { stream_seq: msg.seq, ...(header('Nats-Msg-Id') ? { msg_id: header('Nats-Msg-Id')! } : {}) };
    // The team is the subject's, never the payload's: a team's account can publish only on its own.
    const team = teamOfSubject(msg.subject, this.o.bus.subjects.taskSubmitLegacy);
    if (team === undefined) return this.refuseTeamless(msg, submission);
    const decoded = decodeCloudEvent(msg.data, header);
    // A binary-mode event names its task in the headers even when its body is unreadable.
    if (!decoded.ok) {
      // An event over a payload limit names its task from its top-level source and id, and its rejection the limit and path.
      const ref = decoded.ref ?? sourceAndId({ source: header('ce-source'), id: header('ce-id') });
      return this.reject(msg, team, ref, submission, decoded.error ? { error: decoded.error, issues: decoded.issues } : rejection(decoded.issues));
    }
    const ref = sourceAndId(decoded.event);
    const checked = validate(TaskSubmitEvent, decoded.event);
    if (!checked.ok) return this.reject(msg, team, ref, submission, rejection(checked.issues));
    const event = checked.value;
    const taskId = taskIdFor(team, event.source, event.id);
    await acceptSpan(event, taskId, () => this.accept(msg, team, event, taskId, submission));
  }

  private async accept(msg: JsMsg, team: string, event: TaskSubmitEvent, taskId: string, submission: Submission): Promise<void> {
    const { store } = this.o;
    const nowMs = Date.now();
    const now = new Date(nowMs).toISOString();
    const d = event.data;
    const timeoutMs = d.budget?.timeout_ms ?? this.o.taskTimeoutMs;
    const admission: Admission = this.o.admission ? admissionOf(this.o.admission.gauge.estimate(), this.o.admission.bounds, timeoutMs) : { admit: true };
    // Refused only if it is not stored yet: a redelivery of a task already accepted goes on.
    if (!admission.admit && !(await store.get(taskId))) return this.refuseOverloaded(team, event, taskId, submission, admission);
    const digest = requestDigest(d);
    const options = {
      ...(d.inputs ? { inputs: d.inputs } : {}),
      ...(d.tools ? { tools: d.tools } : {}),
      ...(d.budget ? { budget: d.budget } : {}),
      ...(d.stream !== undefined ? { stream: d.stream } : {}),
      ...(d.priority ? { priority: d.priority } : {}),
      ...(d.metadata ? { metadata: d.metadata } : {}),
      ...(d.require_evidence ? { require_evidence: true } : {}),
      ...(d.review ? { review: true, ...(d.review_rounds !== undefined ? { review_rounds: d.review_rounds } : {}) } : {}),
      ...(d.record !== undefined ? { record: d.record } : {}),
      ...(d.replay ? { replay: d.replay } : {}),
    };
    const { view, created } = await store.createOrGet({
      task_id: taskId,
      user_id: d.user_id,
      ...teamField(team),
      session_id: d.session_id ?? taskId,
      goal: d.goal,
      status: 'accepted',
      created_at: now,
      updated_at: now,
      source_event: { source: event.source, id: event.id },
      request_digest: digest,
      submit_seq: submission.stream_seq,
      attempts: 0,
      usage: { input_tokens: 0, output_tokens: 0 },
      options,
      ...(timeoutMs !== undefined ? { deadline_at: new Date(nowMs + timeoutMs).toISOString() } : {}),
      plan: this.o.planMode === 'single' ? singlePlan(d.goal) : initialPlan(taskId, nowMs),
      ...traceField(),
    });
    const log = this.o.logger.child({ task_id: taskId, user_id: view.user_id });
    if (!created && view.submit_seq !== undefined && view.submit_seq !== submission.stream_seq) {
      // Not a redelivery of the message that created the task but another publish of its id.
      const same = view.request_digest === undefined || view.request_digest === digest;
      log.info({ same_request: same }, 'submission re-used the id of an existing task');
      const error = same
        ? wireError('duplicate', `task ${taskId} was already submitted with this source and id`, { task_id: taskId })
        : wireError('duplicate_conflict', `the source and id of task ${taskId} were re-used with a different request`, { task_id: taskId });
      return this.reject(msg, team, { source: event.source, id: event.id }, submission, { error, issues: [] }, { taskExists: true });
    }
    if (!created && view.status !== 'accepted') {
      log.info({ status: view.status }, 'redelivered submission of a started task ignored');
      return;
    }
    if (created) this.o.metrics?.taskSubmitted();
    // Indexed before it starts, so a replica starting later loads its timers even if this one dies right after.
    await this.o.index.add(view);
    await this.o.coordinator.begin(view, admission.queue);
    log.info({ plan_mode: this.o.planMode, ...(admission.queue ? { queue: admission.queue } : {}) }, 'task accepted');
  }

  /**
   * More is queued than the runtimes start within the bound: the submission is answered
   * `overloaded` with when to try again, and not stored or dead-lettered (nothing is wrong with
   * it, and under overload a dead letter per refusal would bury the real ones).
   */
  private async refuseOverloaded(
    team: string,
    event: TaskSubmitEvent,
    taskId: string,
    submission: Submission,
    admission: Extract<Admission, { admit: false }>,
  ): Promise<void> {
    this.o.metrics?.taskRefused('overloaded');
    const error = wireError(
      'overloaded',
      `${admission.queue.jobs_ahead} jobs are queued ahead, about ${Math.round((admission.queue.estimated_wait_ms ?? 0) / 1000)} s of work; submit again later`,
      {
        task_id: taskId,
        retry_after_ms: admission.retryAfterMs,
        ...admission.queue,
      },
    );
    await this.announceRejection(team, { source: event.source, id: event.id }, submission, { error, issues: [] }, {});
  }

  /**
   * Tells the submitter why a submission was refused. A task named by a readable source and id
   * gets `rejected` on its own subject — unless it exists: its stream is another submission's,
   * so the answer goes to the catch-all rejected subject, as for a submission naming no task.
   * The message is then dead-lettered with the same error (a plain re-send of an existing task's
   * request, `duplicate`, is not: nothing is wrong with it), so ops find what was refused and why
   * with `hermes deadletter list`, and can replay it once the publisher is fixed.
   */
  private async reject(
    msg: JsMsg,
    team: string,
    ref: { source?: string; id?: string },
    submission: Submission,
    why: { error: WireError; issues: ValidationIssue[] },
    opts: { taskExists?: boolean } = {},
  ): Promise<void> {
    await this.announceRejection(team, ref, submission, why, opts);
    if (why.error.code !== 'duplicate') await deadLetter(this.o.bus, msg, why.error);
  }

  /**
   * A message on a submit subject whose last token is no team name (upper case, say): no team's
   * account can publish there, so nobody could read an answer; it is only dead-lettered, for ops.
   */
  private async refuseTeamless(msg: JsMsg, submission: Submission): Promise<void> {
    const error = wireError('invalid_task_event', `${msg.subject} names no team`, { subject: msg.subject });
    this.o.logger.warn({ subject: msg.subject, submission }, 'submission on a subject naming no team');
    await deadLetter(this.o.bus, msg, error);
  }

  private async announceRejection(
    team: string,
    ref: { source?: string; id?: string },
    submission: Submission,
    why: { error: WireError; issues: ValidationIssue[] },
    opts: { taskExists?: boolean },
  ): Promise<void> {
    const taskId = ref.source && ref.id ? taskIdFor(team, ref.source, ref.id) : undefined;
    this.o.logger.warn({ task_id: taskId, source_event: ref, code: why.error.code, issues: why.issues, submission }, 'submission rejected');
    const data = { ...(taskId ? { task_id: taskId } : {}), source_event: ref, error: why.error, issues: why.issues, submission };
    const ownSubject = taskId !== undefined && !opts.taskExists && !(await this.o.store.get(taskId));
    if (ownSubject) {
      await emitTaskEvent(this.o.bus, 'rejected', { task_id: taskId, ...teamField(team) }, data);
      return;
    }
    const eventId = `${taskId ?? 'unknown'}:rejected:${submission.stream_seq}`;
    const event = makeTaskEvent('rejected', { id: eventId, source: this.o.bus.eventSource('dispatcher'), taskId: taskId ?? 'unknown', data }) as Static<
      typeof TaskRejectedEvent
    >;
    await this.o.bus.publish(contracts.taskRejected, event, { subject: this.o.bus.subjects.taskRejected(team), msgId: eventId });
  }
}

type Submission = { stream_seq: number; msg_id?: string };

function rejection(issues: ValidationIssue[]): { error: WireError; issues: ValidationIssue[] } {
  return { error: wireError('invalid_task_event', `task submission rejected: ${issues.length} problem(s)`, { issues }), issues };
}

/**
 * Accepts a task inside an `accept task` span naming the task (and user) for every log line and
 * message that follows. Its parent is the delivery's span (trace context from the NATS headers);
 * a submission whose CloudEvent `traceparent` names another trace (a publisher that set the
 * extension but no header) joins that trace instead, linked to the delivery.
 */
function acceptSpan(event: TaskSubmitEvent, taskId: string, fn: () => Promise<void>): Promise<void> {
  const delivery = trace.getSpanContext(context.active());
  const fromEvent = event.traceparent ? contextFromTraceparent(event.traceparent, event.tracestate) : undefined;
  const eventTrace = fromEvent ? trace.getSpanContext(fromEvent)?.traceId : undefined;
  const joinEvent = fromEvent !== undefined && eventTrace !== undefined && eventTrace !== delivery?.traceId;
  const parent = withTaskFields(joinEvent ? fromEvent : context.active(), { task_id: taskId, user_id: event.data.user_id });
  const options = {
    attributes: { 'hermes.task.id': taskId, 'enduser.id': event.data.user_id },
    ...(joinEvent && delivery ? { links: [{ context: delivery }] } : {}),
  };
  return inSpan('accept task', options, fn, parent);
}

/** The accepting span's trace context, stored with the task so later jobs continue its trace. */
function traceField(): { trace_context?: TraceContext } {
  const tc = activeTraceContext();
  return tc ? { trace_context: tc } : {};
}

/** NATS keeps header names as sent, so `Ce-Id` and `ce-id` must both be found (HeaderLookup is case-insensitive). */
function headerIgnoringCase(msg: JsMsg, name: string): string | undefined {
  const lower = name.toLowerCase();
  const key = msg.headers?.keys().find((k) => k.toLowerCase() === lower);
  return (key !== undefined && msg.headers?.get(key)) || undefined;
}
