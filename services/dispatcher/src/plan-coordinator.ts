import {
  contracts,
  goesAhead,
  isTerminalStatus,
  ownerKey,
  ownerOf,
  teamField,
  wireError,
  type Owner,
  type RuntimeResult,
  type TaskCancelRequest,
  type TaskInputRequest,
  type TaskView,
  type WireError,
} from '@hermes/contracts';
import { ReplyError, request, type Bus, type QueueEstimate } from '@hermes/bus';
import type { Logger } from '@hermes/telemetry';
import type { TaskStore } from './task-store.js';
import type { TaskIndex } from './task-index.js';
import { acceptedData, emitTaskEvent, taskEventsPublished } from './task-events.js';
import type { TaskMetrics } from './task-metrics.js';
import { visibleTo } from './task-visibility.js';
import { inTaskTrace } from './task-trace.js';
import { advance, answerInput, applyResult, begin, cancel, terminalActions, type Action, type PlanSettings, type Step } from './plan-scheduler.js';

export interface PlanCoordinatorOptions {
  bus: Bus;
  store: TaskStore;
  index: TaskIndex;
  logger: Logger;
  settings: PlanSettings;
  /** The roles of a user of a team (a user id means something only inside its team). */
  rolesOf: (owner: Owner) => string[];
  metrics?: TaskMetrics;
}

/**
 * The one way a task moves: every change — start, a result, a cancel, the timers' retries and
 * timeouts (task-timers.ts) — is computed by the pure scheduler and written with compare-and-set, and only the
 * replica whose write won performs what follows (jobs, events). A task therefore reaches a
 * terminal state once, and its `accepted` and terminal events are published once. Jobs are
 * published with their job id as `Nats-Msg-Id` and then marked dispatched, so a replica that dies
 * in between leaves a claim another replica publishes again after DISPATCHER_TAKEOVER_MS, harmlessly.
 */
/** `repeat`: re-announcing an end already counted; `queue`: the wait an `accepted` event tells. */
type PerformOptions = { repeat?: boolean; queue?: QueueEstimate };

export class PlanCoordinator {
  constructor(private readonly o: PlanCoordinatorOptions) {}

  /** Starts a task intake just created (or found still `accepted` after a dispatcher died). */
  /** Starts an accepted task; `queue`: how long it is expected to wait, told in its `accepted` event. */
  async begin(view: TaskView, queue?: QueueEstimate): Promise<void> {
    await this.transition(view.task_id, (v) => begin(v, this.ctx(v)), 'advance', { ...(queue ? { queue } : {}) });
  }

  /** Applies a runtime job's result; a result for an ended task or a job not waited for changes nothing. */
  async onResult(result: RuntimeResult): Promise<void> {
    this.o.metrics?.jobResult(result);
    const written = await this.transition(result.task_id, (v) => applyResult(v, result, this.ctx(v)));
    if (written) this.o.metrics?.taskTokens(result, ownerKey(ownerOf(written)));
  }

  /** Cancels a task of the caller (of `team` when the request came on a team's subject); an ended task is returned as it is. */
  async cancel(req: TaskCancelRequest, team?: string): Promise<TaskView> {
    const found = await this.o.store.get(req.task_id);
    if (!found || !visibleTo(found.view, req.user_id, team)) {
      throw new ReplyError(wireError('not_found', `no task ${req.task_id}`, { task_id: req.task_id }));
    }
    const written = await this.transition(req.task_id, (v) => cancel(v, req.reason), 'cancel');
    if (written) return written;
    const now = await this.o.store.get(req.task_id);
    if (!now) throw new ReplyError(wireError('not_found', `no task ${req.task_id}`, { task_id: req.task_id }));
    return now.view;
  }

  /**
   * The answer to a question a task of the caller asked (ask_user): the waiting subtask's resuming
   * job goes out. A task that waits for no answer is refused with not_waiting_for_input.
   */
  async answer(req: TaskInputRequest, team?: string): Promise<TaskView> {
    const found = await this.o.store.get(req.task_id);
    if (!found || !visibleTo(found.view, req.user_id, team)) {
      throw new ReplyError(wireError('not_found', `no task ${req.task_id}`, { task_id: req.task_id }));
    }
    let refused: WireError | undefined;
    const written = await this.transition(
      req.task_id,
      (v) => {
        const step = answerInput(v, { answer: req.answer, ...(req.call_id ? { callId: req.call_id } : {}) }, this.ctx(v));
        refused = 'code' in step ? step : undefined;
        return 'code' in step ? undefined : step;
      },
      'input',
    );
    if (refused) throw new ReplyError(refused);
    if (!written) throw new ReplyError(wireError('not_waiting_for_input', `task ${req.task_id} waits for no answer`, { task_id: req.task_id }));
    return written;
  }

  /**
   * Moves one task on (due retries, timeouts, lost dispatches, a start that never happened). For a
   * task that ended but is still listed active, the replica that ended it is announcing it — unless
   * it died: after a grace the end is announced here, if the task's stream does not already end with it.
   */
  async kick(taskId: string): Promise<void> {
    const found = await this.o.store.get(taskId);
    if (!found) {
      await this.o.index.deactivate(taskId);
      return;
    }
    const view = found.view;
    const quiet = Date.now() - Date.parse(view.updated_at) >= this.o.settings.redispatchAfterMs;
    if (isTerminalStatus(view.status)) {
      // Off the list: its end was announced (events a job published since may follow it on the stream).
      if (!quiet || !(await this.o.index.isActive(taskId))) return;
      const published = await taskEventsPublished(this.o.bus, view);
      if (published.lastKind === view.status) await this.o.index.deactivate(taskId);
      else await this.perform(view, terminalActions(view), 'announce', { repeat: true });
      return;
    }
    if (view.status === 'accepted') {
      // Created but never started: the replica taking it in died (or stalls) before `begin`; starting it
      // here announces `accepted` first, as intake would, and the compare-and-set lets one start through.
      if (quiet) await this.begin(view);
      return;
    }
    if (quiet && firstJobUnsent(view) && !(await taskEventsPublished(this.o.bus, view)).any) {
      // The replica that started the task died before announcing it: `accepted` comes first.
      await this.perform(view, [{ kind: 'accepted' }], 'announce');
    }
    await this.transition(taskId, (v) => advance(v, this.ctx(v)));
  }

  private ctx(v: TaskView) {
    return { now: Date.now(), settings: this.o.settings, roles: this.o.rolesOf(ownerOf(v)) };
  }

  /** Writes the scheduler's step with compare-and-set and, if this write won, performs its actions. */
  private async transition(
    taskId: string,
    change: (v: TaskView) => Step | undefined,
    what = 'advance',
    opts: PerformOptions = {},
  ): Promise<TaskView | undefined> {
    let step: Step | undefined;
    const written = await this.o.store.update(taskId, (v) => {
      step = change(v);
      if (!step || (step.actions.length === 0 && JSON.stringify(step.view) === JSON.stringify(v))) {
        step = undefined;
        return undefined;
      }
      return step.view;
    });
    if (!written || !step) return undefined;
    await this.perform(written, step.actions, what, opts);
    return written;
  }

  /**
   * Publishes what a state change calls for, inside the task's trace (see inTaskTrace): the timers
   * run outside it. `repeat`: re-announcing an end already counted.
   */
  private async perform(view: TaskView, actions: Action[], what: string, opts: PerformOptions = {}): Promise<void> {
    if (!actions.length) return;
    await inTaskTrace(view, what, () => this.performActions(view, actions, opts));
  }

  private async performActions(view: TaskView, actions: Action[], opts: PerformOptions): Promise<void> {
    const { bus, logger } = this.o;
    const taskId = view.task_id;
    const log = logger.child({ task_id: taskId });
    // `accepted` must be out before any job, whose `started` would otherwise come first; a
    // review's events before the job or the end they lead to.
    for (const a of actions) {
      if (a.kind === 'accepted') await emitTaskEvent(bus, 'accepted', view, { ...acceptedData(view), ...(opts.queue ? { queue: opts.queue } : {}) });
      if (a.kind === 'review_started' || a.kind === 'review_verdict') {
        await emitTaskEvent(bus, a.kind, view, a.data as never, `${taskId}:${a.kind}:${a.data.round}`);
        log.info({ round: a.data.round, ...(a.kind === 'review_verdict' ? { verdict: a.data.verdict } : {}) }, a.kind.replace('_', ' '));
      }
    }
    const sent: string[] = [];
    await Promise.all(
      actions.map(async (a) => {
        switch (a.kind) {
          case 'accepted':
          case 'review_started':
          case 'review_verdict':
            return;
          case 'job':
            // The ahead lane's jobs take runtime slots before new tasks' (docs/operations.md#admission).
            await bus.publish(goesAhead(a.job) ? contracts.runtimeJobsAhead : contracts.runtimeJobs, a.job, { msgId: a.job.job_id, span: true });
            this.o.metrics?.jobDispatched(a.job, isRetry(view, a.job.job_id));
            sent.push(a.job.job_id);
            log.info({ job_id: a.job.job_id, kind: a.job.kind, subtask_id: a.job.subtask_id }, 'job dispatched');
            return;
          case 'input_required':
            await emitTaskEvent(bus, 'input_required', view, a.data, `${taskId}:input_required:${a.data.subtask_id}:${a.data.call_id}`);
            log.info({ subtask_id: a.data.subtask_id, call_id: a.data.call_id }, 'task waits for input');
            return;
          case 'planned':
            await emitTaskEvent(bus, 'planned', view, a.data, `${taskId}:planned:${a.data.replans}`);
            if (a.data.replans > 0) this.o.metrics?.replanned();
            log.info({ subtasks: a.data.subtasks.map((s) => s.id), replans: a.data.replans }, 'task planned');
            return;
          case 'completed':
          case 'failed':
          case 'cancelled':
            await emitTaskEvent(bus, a.kind, view, a.data as never);
            if (!opts.repeat)
              this.o.metrics?.taskEnded(
                { status: a.kind, created_at: view.created_at },
                a.kind === 'failed' ? a.data.error.code : a.kind === 'cancelled' ? 'cancelled' : undefined,
              );
            await this.o.index.deactivate(taskId);
            // Best effort: entries also expire on their own (MEMORY_WORKING_TTL_MS).
            await request(bus, contracts.workingClear, { user_id: a.userId, ...teamField(ownerOf(view).team), task_id: taskId }).catch((err: unknown) =>
              log.debug({ err }, 'working memory not cleared; it will expire'),
            );
            log.info({ status: a.kind }, 'task ended');
            return;
          case 'stop_jobs':
            await bus.publish(contracts.taskCancelled, { task_id: taskId, reason: a.reason }, { subject: bus.subjects.taskCancelled(taskId) });
            return;
        }
      }),
    );
    await this.markDispatched(taskId, sent);
  }

  /** Marks the jobs of one step sent, in one write whatever their number. */
  private async markDispatched(taskId: string, jobIds: readonly string[]): Promise<void> {
    if (!jobIds.length) return;
    const now = new Date().toISOString();
    const ids = new Set(jobIds);
    await this.o.store.update(taskId, (v) => {
      const plan = v.plan;
      if (!plan) return undefined;
      const job = plan.job && ids.has(plan.job.job_id) && !plan.job.dispatched_at ? { ...plan.job, dispatched_at: now } : plan.job;
      let marked = job !== plan.job;
      const subtasks = plan.subtasks.map((s) => {
        if (!s.job_id || !ids.has(s.job_id) || s.status !== 'running' || s.dispatched_at) return s;
        marked = true;
        return { ...s, dispatched_at: now };
      });
      return marked ? { ...v, plan: { ...plan, ...(job ? { job } : {}), subtasks } } : undefined;
    });
  }
}

/** Whether a job is a second or later attempt of its subtask or coordination job. */
function isRetry(view: TaskView, jobId: string): boolean {
  const plan = view.plan;
  const s = plan?.subtasks.find((x) => x.job_id === jobId);
  if (s) return s.attempts > 1;
  return plan?.job?.job_id === jobId ? plan.job.attempt > 1 : false;
}

/** The task's first job was claimed but never marked sent: whoever started it may have died before `accepted`. */
function firstJobUnsent(v: TaskView): boolean {
  const plan = v.plan;
  if (!plan) return false;
  if (plan.stage === 'planning' && plan.replans === 0 && plan.subtasks.length === 0) return plan.job?.attempt === 1 && !plan.job.dispatched_at;
  return (
    plan.origin === 'single' &&
    plan.subtasks.length === 1 &&
    plan.subtasks[0]!.attempts === 1 &&
    !plan.subtasks[0]!.dispatched_at &&
    plan.subtasks[0]!.status === 'running'
  );
}
