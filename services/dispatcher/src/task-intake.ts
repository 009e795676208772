import type { JsMsg } from '@nats-io/jetstream';
import {
  contracts,
  decodeCloudEvent,
  makeTaskEvent,
  sourceAndId,
  taskIdFor,
  validate,
  wireError,
  TaskSubmitEvent,
  type TaskRejectedEvent,
  type TaskView,
  type TraceContext,
  type ValidationIssue,
  type WireError,
} from '@hermes/contracts';
import type { Static } from '@sinclair/typebox';
import { contextFromTraceparent, type Bus } from '@hermes/bus';
import { context, trace } from '@opentelemetry/api';
import { inSpan, withTaskFields, type Logger } from '@hermes/telemetry';
import type { TaskStore } from './task-store.js';
import { emitTaskEvent } from './task-events.js';
import type { TaskIndex } from './task-index.js';
import type { PlanCoordinator } from './plan-coordinator.js';
import { initialPlan } from './plan-scheduler.js';
import type { TaskMetrics } from './task-metrics.js';
import { activeTraceContext } from './task-trace.js';

/**
 * Turns a submission into a task: decode (structured or binary CloudEvent), validate, create the
 * task state, announce `accepted`, hand the job to the runtime pool. Every step is idempotent, so a
 * redelivered submission (dispatcher died half-way) finishes the work instead of duplicating it.
 */
export class TaskIntake {
  constructor(
    private readonly o: {
      bus: Bus;
      store: TaskStore;
      logger: Logger;
      rolesOf?: (userId: string) => string[];
      /** Lists tasks per user and marks them for the sweep; without it tasks are not indexed. */
      index?: TaskIndex;
      /** `auto`: a planner splits the task into subtasks (needs `coordinator`); `single` (default): one job with the goal. */
      planMode?: 'auto' | 'single';
      coordinator?: PlanCoordinator;
      /** Deadline of a task without budget.timeout_ms (TASK_TIMEOUT_MS); without it only budget.timeout_ms sets one. */
      taskTimeoutMs?: number;
      metrics?: TaskMetrics;
    },
  ) {}

  async handle(msg: JsMsg): Promise<void> {
    const header = (name: string) => headerIgnoringCase(msg, name);
    const decoded = decodeCloudEvent(msg.data, header);
    // A binary-mode event names its task in the headers even when its body is unreadable.
    if (!decoded.ok) return this.reject(decoded.ref ?? sourceAndId({ source: header('ce-source'), id: header('ce-id') }), decoded.issues, decoded.error);
    const ref = sourceAndId(decoded.event);
    const checked = validate(TaskSubmitEvent, decoded.event);
    if (!checked.ok) return this.reject(ref, checked.issues);
    const event = checked.value;
    const taskId = taskIdFor(event.source, event.id);
    await acceptSpan(event, taskId, () => this.accept(event, taskId));
  }

  private async accept(event: TaskSubmitEvent, taskId: string): Promise<void> {
    const { bus, store } = this.o;
    const nowMs = Date.now();
    const now = new Date(nowMs).toISOString();
    const d = event.data;
    const timeoutMs = d.budget?.timeout_ms ?? this.o.taskTimeoutMs;
    const planned = this.o.planMode === 'auto' && this.o.coordinator !== undefined;
    const options = {
      ...(d.inputs ? { inputs: d.inputs } : {}),
      ...(d.tools ? { tools: d.tools } : {}),
      ...(d.budget ? { budget: d.budget } : {}),
      ...(d.stream !== undefined ? { stream: d.stream } : {}),
      ...(d.priority ? { priority: d.priority } : {}),
    };
    const { view, created } = await store.createOrGet({
      task_id: taskId,
      user_id: event.data.user_id,
      session_id: event.data.session_id ?? taskId,
      goal: event.data.goal,
      status: 'accepted',
      created_at: now,
      updated_at: now,
      source_event: { source: event.source, id: event.id },
      attempts: 0,
      usage: { input_tokens: 0, output_tokens: 0 },
      options,
      ...(timeoutMs !== undefined ? { deadline_at: new Date(nowMs + timeoutMs).toISOString() } : {}),
      ...(planned ? { plan: initialPlan(taskId, nowMs) } : {}),
      ...traceField(),
    });
    const log = this.o.logger.child({ task_id: taskId, user_id: view.user_id });
    if (!created && view.status !== 'accepted') {
      log.info({ status: view.status }, 'duplicate submission ignored');
      return;
    }
    if (created) this.o.metrics?.taskSubmitted();
    // Both before the job goes out (its `started` must follow `accepted`), neither needs the other.
    await Promise.all([
      emitTaskEvent(bus, 'accepted', taskId, {
        task_id: taskId,
        user_id: view.user_id,
        session_id: view.session_id,
        goal: view.goal,
        source_event: view.source_event,
        ...(view.trace_context ? { trace_id: view.trace_context.trace_id } : {}),
      }),
      this.o.index?.add(view),
    ]);
    if (view.plan && this.o.coordinator) {
      await this.o.coordinator.begin(view);
      log.info('task accepted; planning');
      return;
    }
    await this.dispatch(view, event);
    await store.update(taskId, (v) => (v.status === 'accepted' ? { ...v, status: 'running' } : undefined));
    log.info('task accepted and dispatched');
  }

  private async dispatch(view: TaskView, event: TaskSubmitEvent): Promise<void> {
    const jobId = `${view.task_id}-main`;
    const d = event.data;
    await this.o.bus.publish(
      contracts.runtimeJobs,
      {
        job_id: jobId,
        task_id: view.task_id,
        subtask_id: 'main',
        user_id: view.user_id,
        // Roles come from the dispatcher's directory, never from the submitter's own claim.
        roles: this.o.rolesOf?.(view.user_id) ?? ['user'],
        session_id: view.session_id,
        goal: d.goal,
        model_role: 'worker',
        ...(d.inputs ? { inputs: d.inputs } : {}),
        ...(d.tools ? { tools: d.tools } : {}),
        ...(d.budget ? { budget: d.budget } : {}),
        ...(d.stream !== undefined ? { stream: d.stream } : {}),
      },
      { msgId: jobId, span: true },
    );
  }

  /** `limitError`: the payload_limit error naming the limit and path, when a payload limit refused it. */
  private async reject(ref: { source?: string; id?: string }, issues: ValidationIssue[], limitError?: WireError): Promise<void> {
    const taskId = ref.source && ref.id ? taskIdFor(ref.source, ref.id) : undefined;
    const error = limitError ?? wireError('invalid_task_event', `task submission rejected: ${issues.length} problem(s)`, { issues });
    this.o.logger.warn({ task_id: taskId, source_event: ref, issues }, 'submission rejected');
    const eventId = taskId ? `${taskId}:rejected` : `rejected:${Date.now()}:${Math.random().toString(36).slice(2)}`;
    const data = { ...(taskId ? { task_id: taskId } : {}), source_event: ref, error, issues };
    if (taskId && (await this.o.store.get(taskId))) {
      // A malformed resend of an existing task must not end that task's event stream.
      this.o.logger.warn({ task_id: taskId }, 'invalid resubmission of an existing task ignored');
    } else if (taskId) {
      await emitTaskEvent(this.o.bus, 'rejected', taskId, data);
    } else {
      // No task to name: report on the catch-all subject so the submitter still hears why.
      const event = makeTaskEvent('rejected', { id: eventId, source: 'hermes/dispatcher', taskId: 'unknown', data }) as Static<typeof TaskRejectedEvent>;
      await this.o.bus.publish(contracts.taskRejected, event, { msgId: eventId });
    }
  }
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
  const options = { attributes: { 'hermes.task.id': taskId, 'enduser.id': event.data.user_id }, ...(joinEvent && delivery ? { links: [{ context: delivery }] } : {}) };
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
