import type { RuntimeResult } from '@hermes/contracts';
import { wireError } from '@hermes/contracts';
import type { Bus } from '@hermes/bus';
import type { Logger } from '@hermes/telemetry';
import type { TaskMetrics } from './task-metrics.js';
import type { TaskStore } from './task-store.js';
import { emitTaskEvent } from './task-events.js';
import type { PlanCoordinator } from './plan-coordinator.js';
import type { TaskIndex } from './task-index.js';

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

/** Records a runtime job's outcome in the task state and tells the submitter how the task ended. */
export class ResultHandler {
  constructor(private readonly o: { bus: Bus; store: TaskStore; logger: Logger; coordinator?: PlanCoordinator; index?: TaskIndex; metrics?: TaskMetrics }) {}

  async handle(result: RuntimeResult): Promise<void> {
    this.o.metrics?.jobResult(result);
    // Planned tasks have a state machine of their own; single-job tasks end with their one result.
    if (this.o.coordinator && (await this.o.coordinator.onResult(result))) return;
    const log = this.o.logger.child({ task_id: result.task_id, job_id: result.job_id });
    let alreadyEnded = false;
    const view = await this.o.store.update(result.task_id, (v) => {
      if (TERMINAL.has(v.status)) {
        alreadyEnded = true;
        return undefined;
      }
      const usage = {
        input_tokens: v.usage.input_tokens + result.usage.input_tokens,
        output_tokens: v.usage.output_tokens + result.usage.output_tokens,
      };
      const attempts = Math.max(v.attempts, result.attempt);
      if (result.outcome === 'succeeded') {
        return { ...v, status: 'completed', usage, attempts, result: { output: result.output ?? '' } };
      }
      return { ...v, status: 'failed', usage, attempts, error: result.error ?? wireError('internal', 'runtime reported failure without an error') };
    });
    if (!view) {
      log.warn('result for an unknown task dropped');
      return;
    }
    if (alreadyEnded) {
      // Still re-emit: if we crashed after writing the state but before publishing, this is the
      // only chance; the stable event id makes a true duplicate disappear.
      log.debug({ status: view.status }, 'result for an ended task');
    }
    if (!alreadyEnded) {
      this.o.metrics?.taskTokens(result, view.user_id);
      this.o.metrics?.taskEnded(view, view.error?.code);
    }
    if (view.status === 'completed' && view.result) {
      await emitTaskEvent(this.o.bus, 'completed', view.task_id, { task_id: view.task_id, result: view.result, usage: view.usage });
    } else if (view.status === 'failed' && view.error) {
      await emitTaskEvent(this.o.bus, 'failed', view.task_id, { task_id: view.task_id, error: view.error, usage: view.usage });
    }
    if (view.status === 'completed' || view.status === 'failed') await this.o.index?.deactivate(view.task_id);
    log.info({ status: view.status }, 'task ended');
  }
}
