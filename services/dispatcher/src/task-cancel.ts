import { contracts, wireError, type TaskCancelRequest, type TaskView } from '@hermes/contracts';
import { ReplyError, type Bus } from '@hermes/bus';
import type { Logger } from '@hermes/telemetry';
import type { TaskStore } from './task-store.js';
import { emitTaskEvent } from './task-events.js';
import type { TaskIndex } from './task-index.js';
import type { TaskMetrics } from './task-metrics.js';
import { inTaskTrace } from './task-trace.js';

const ENDED = new Set(['completed', 'failed', 'cancelled']);

/**
 * Cancels a task: the state moves to `cancelled` (compare-and-set, so it races safely with a
 * result arriving), the submitter gets `cancelled`, and runtimes are told to stop its jobs.
 * Results that arrive later are ignored because the task has ended.
 */
export class TaskCancel {
  constructor(private readonly o: { bus: Bus; store: TaskStore; logger: Logger; index?: TaskIndex; metrics?: TaskMetrics }) {}

  async cancel(req: TaskCancelRequest): Promise<TaskView> {
    const found = await this.o.store.get(req.task_id);
    if (!found || (req.user_id && found.view.user_id !== req.user_id)) {
      throw new ReplyError(wireError('not_found', `no task ${req.task_id}`, { task_id: req.task_id }));
    }
    let changed = false;
    const view = await this.o.store.update(req.task_id, (v) => {
      if (ENDED.has(v.status)) return undefined;
      changed = true;
      return { ...v, status: 'cancelled', error: wireError('cancelled', req.reason ?? 'cancelled on request') };
    });
    if (!view) throw new ReplyError(wireError('not_found', `no task ${req.task_id}`, { task_id: req.task_id }));
    if (changed) await inTaskTrace(view, 'cancel', () => this.announce(view, req));
    return view;
  }

  private async announce(view: TaskView, req: TaskCancelRequest): Promise<void> {
    await emitTaskEvent(this.o.bus, 'cancelled', view.task_id, { task_id: view.task_id, ...(req.reason ? { reason: req.reason } : {}) });
    await this.o.bus.publish(contracts.taskCancelled, { task_id: view.task_id, ...(req.reason ? { reason: req.reason } : {}) }, {
      subject: this.o.bus.subjects.taskCancelled(view.task_id),
    });
    await this.o.index?.deactivate(view.task_id);
    this.o.logger.info({ task_id: view.task_id, reason: req.reason }, 'task cancelled');
    this.o.metrics?.taskEnded(view, 'cancelled');
  }
}
