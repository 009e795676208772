import { contracts, type RuntimeResult, type TaskView } from '@hermes/contracts';
import { request, type Bus } from '@hermes/bus';
import type { Logger } from '@hermes/telemetry';
import type { TaskStore } from './task-store.js';
import type { TaskIndex } from './task-index.js';
import { emitTaskEvent } from './task-events.js';
import type { TaskMetrics } from './task-metrics.js';
import { inTaskTrace } from './task-trace.js';
import { advance, applyResult, coordinationJob, terminalActions, type Action, type PlanSettings, type Step } from './plan-scheduler.js';

export interface PlanCoordinatorOptions {
  bus: Bus;
  store: TaskStore;
  index: TaskIndex;
  logger: Logger;
  settings: PlanSettings;
  rolesOf: (userId: string) => string[];
  metrics?: TaskMetrics;
}

const ENDED = new Set(['completed', 'failed', 'cancelled']);

/**
 * Runs planned tasks: every change is computed by the pure scheduler, written with
 * compare-and-set, and only the replica whose write won performs what follows (publishing jobs,
 * events). Jobs are published with their job id as `Nats-Msg-Id` and then marked dispatched, so a
 * replica that dies in between leaves a claim the sweep publishes again, harmlessly.
 */
export class PlanCoordinator {
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(private readonly o: PlanCoordinatorOptions) {}

  /** Handles a result of a planned task; false when the task has no plan (the caller handles it). */
  async onResult(result: RuntimeResult): Promise<boolean> {
    const found = await this.o.store.get(result.task_id);
    if (!found?.view.plan) return false;
    await this.transition(result.task_id, (v) => applyResult(v, result, this.ctx(v)));
    return true;
  }

  /** Publishes the planning job of a task intake just created (a redelivered submission does it again, de-duplicated). */
  async begin(view: TaskView): Promise<void> {
    await this.transition(view.task_id, (v) => (v.status === 'accepted' ? { view: { ...v, status: 'running' }, actions: [] } : undefined));
    const job = view.plan?.job;
    if (job) await this.perform(view, advanceJobAction(view, this.ctx(view)), 'plan');
  }

  /** Moves one task on (due retries, timeouts, lost dispatches), or re-announces its end. */
  async kick(taskId: string): Promise<void> {
    const found = await this.o.store.get(taskId);
    if (!found) {
      await this.o.index.deactivate(taskId);
      return;
    }
    if (ENDED.has(found.view.status)) {
      // A replica may have died between ending the task and announcing it; the event id de-duplicates.
      await this.perform(found.view, terminalActions(found.view), 'announce', { repeat: true });
      await this.o.index.deactivate(taskId);
      return;
    }
    await this.transition(taskId, (v) => advance(v, this.ctx(v)));
  }

  /** One pass over the active tasks; every replica runs it periodically. */
  async sweep(): Promise<void> {
    for (const taskId of await this.o.index.active()) {
      try {
        await this.kick(taskId);
      } catch (err) {
        this.o.logger.warn({ err, task_id: taskId }, 'sweep could not move a task');
      }
    }
  }

  stop(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  private ctx(v: TaskView) {
    return { now: Date.now(), settings: this.o.settings, roles: this.o.rolesOf(v.user_id) };
  }

  private async transition(taskId: string, change: (v: TaskView) => Step | undefined): Promise<void> {
    let step: Step | undefined;
    const written = await this.o.store.update(taskId, (v) => {
      step = change(v);
      if (!step || (step.actions.length === 0 && JSON.stringify(step.view) === JSON.stringify(v))) {
        step = undefined;
        return undefined;
      }
      return step.view;
    });
    if (!written || !step) return;
    await this.perform(written, step.actions, 'advance');
    this.scheduleRetries(written);
  }

  /**
   * Publishes what a state change calls for, inside the task's trace (see inTaskTrace): the sweep
   * and retry timers run outside it. `repeat`: re-announcing an end already counted.
   */
  private async perform(view: TaskView, actions: Action[], what: string, opts: { repeat?: boolean } = {}): Promise<void> {
    if (!actions.length) return;
    await inTaskTrace(view, what, () => this.performActions(view, actions, opts));
  }

  private async performActions(view: TaskView, actions: Action[], opts: { repeat?: boolean }): Promise<void> {
    const { bus, logger } = this.o;
    const taskId = view.task_id;
    const log = logger.child({ task_id: taskId });
    await Promise.all(
      actions.map(async (a) => {
        switch (a.kind) {
          case 'job':
            await bus.publish(contracts.runtimeJobs, a.job, { msgId: a.job.job_id, span: true });
            this.o.metrics?.jobDispatched(a.job, isRetry(view, a.job.job_id));
            await this.markDispatched(taskId, a.job.job_id);
            log.info({ job_id: a.job.job_id, kind: a.job.kind, subtask_id: a.job.subtask_id }, 'job dispatched');
            return;
          case 'planned':
            await emitTaskEvent(bus, 'planned', taskId, a.data, `${taskId}:planned:${a.data.replans}`);
            if (a.data.replans > 0) this.o.metrics?.replanned();
            log.info({ subtasks: a.data.subtasks.map((s) => s.id), replans: a.data.replans }, 'task planned');
            return;
          case 'completed':
          case 'failed':
            await emitTaskEvent(bus, a.kind, taskId, a.data as never);
            if (!opts.repeat) this.o.metrics?.taskEnded({ status: a.kind, created_at: view.created_at }, a.kind === 'failed' ? a.data.error.code : undefined);
            await this.o.index.deactivate(taskId);
            // Best effort: entries also expire on their own (MEMORY_WORKING_TTL_MS).
            await request(bus, contracts.workingClear, { user_id: a.userId, task_id: taskId }).catch((err: unknown) =>
              log.warn({ err }, 'working memory not cleared; it will expire'),
            );
            log.info({ status: a.kind }, 'task ended');
            return;
          case 'stop_jobs':
            await bus.publish(contracts.taskCancelled, { task_id: taskId, reason: a.reason }, { subject: bus.subjects.taskCancelled(taskId) });
            return;
        }
      }),
    );
  }

  private async markDispatched(taskId: string, jobId: string): Promise<void> {
    const now = new Date().toISOString();
    await this.o.store.update(taskId, (v) => {
      const plan = v.plan;
      if (!plan) return undefined;
      if (plan.job?.job_id === jobId && !plan.job.dispatched_at) return { ...v, plan: { ...plan, job: { ...plan.job, dispatched_at: now } } };
      const i = plan.subtasks.findIndex((s) => s.job_id === jobId && s.status === 'running' && !s.dispatched_at);
      if (i < 0) return undefined;
      const subtasks = plan.subtasks.map((s, j) => (j === i ? { ...s, dispatched_at: now } : s));
      return { ...v, plan: { ...plan, subtasks } };
    });
  }

  /** A local timer for the earliest due retry; the sweep is the fallback if this replica dies. */
  private scheduleRetries(v: TaskView): void {
    const due = (v.plan?.subtasks ?? []).flatMap((s) => (s.status === 'pending' && s.retry_at ? [Date.parse(s.retry_at)] : []));
    if (!due.length || ENDED.has(v.status)) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.kick(v.task_id).catch((err: unknown) => this.o.logger.warn({ err, task_id: v.task_id }, 'retry kick failed'));
    }, Math.max(0, Math.min(...due) - Date.now()) + 5);
    timer.unref();
    this.timers.add(timer);
  }
}

/** Whether a job is a second or later attempt of its subtask or coordination job. */
function isRetry(view: TaskView, jobId: string): boolean {
  const plan = view.plan;
  const s = plan?.subtasks.find((x) => x.job_id === jobId);
  if (s) return s.attempts > 1;
  return plan?.job?.job_id === jobId ? plan.job.attempt > 1 : false;
}

/** The planning job of a fresh task as an action (it is claimed in the state intake created). */
function advanceJobAction(view: TaskView, ctx: { now: number; settings: PlanSettings; roles: string[] }): Action[] {
  const job = view.plan?.job;
  if (!job || job.dispatched_at) return [];
  return [{ kind: 'job', job: coordinationJob(view, job, ctx) }];
}
