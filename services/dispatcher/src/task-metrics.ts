import type { Counter, Histogram } from '@opentelemetry/api';
import type { RuntimeJob, RuntimeResult, TaskView } from '@hermes/contracts';
import { hermesMeter } from '@hermes/telemetry';

/**
 * The dispatcher's task metrics (docs/operations.md lists them). One instance per process, created
 * after telemetry start-up so it binds to the registered MeterProvider.
 */
export class TaskMetrics {
  private readonly submitted: Counter;
  private readonly ended: Counter;
  private readonly duration: Histogram;
  private readonly jobs: Counter;
  private readonly results: Counter;
  private readonly replans: Counter;
  private readonly tokens: Counter;
  private readonly refused: Counter;

  constructor() {
    const m = hermesMeter();
    this.submitted = m.createCounter('hermes.tasks.submitted', {
      unit: '{task}',
      description: 'tasks accepted (new task ids; duplicates and rejections not counted)',
    });
    this.ended = m.createCounter('hermes.tasks.ended', { unit: '{task}', description: 'tasks that ended, by status and error code' });
    this.duration = m.createHistogram('hermes.task.duration', {
      unit: 's',
      description: 'time from acceptance to the end of a task, by status',
      advice: { explicitBucketBoundaries: [0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600] },
    });
    this.jobs = m.createCounter('hermes.jobs.dispatched', {
      unit: '{job}',
      description: 'runtime jobs published, by kind (plan, agent: a subtask, compose) and whether a retry',
    });
    this.results = m.createCounter('hermes.jobs.results', { unit: '{job}', description: 'runtime job results received, by outcome and error code' });
    this.replans = m.createCounter('hermes.task.replans', { unit: '{replan}', description: 're-plans after subtasks failed for good' });
    // Per-user token totals: the user id is an attribute, so keep the number of users in mind.
    this.tokens = m.createCounter('hermes.task.tokens', { unit: '{token}', description: 'tokens used by finished jobs, per user and type' });
    this.refused = m.createCounter('hermes.tasks.refused', {
      unit: '{task}',
      description: 'submissions refused by admission control, by error code (overloaded)',
    });
  }

  taskSubmitted(): void {
    this.submitted.add(1);
  }

  taskRefused(code: string): void {
    this.refused.add(1, { 'error.type': code });
  }

  taskEnded(view: Pick<TaskView, 'status' | 'created_at'>, errorCode?: string): void {
    const attrs = { status: view.status, ...(errorCode ? { 'error.type': errorCode } : {}) };
    this.ended.add(1, attrs);
    const started = Date.parse(view.created_at);
    if (Number.isFinite(started)) this.duration.record(Math.max(0, Date.now() - started) / 1000, { status: view.status });
  }

  jobDispatched(job: RuntimeJob, retry: boolean): void {
    this.jobs.add(1, { kind: job.kind ?? 'agent', retry });
  }

  jobResult(r: RuntimeResult): void {
    this.results.add(1, { outcome: r.outcome, ...(r.error ? { 'error.type': r.error.code } : {}) });
  }

  /** Tokens of a single-job task's result (planned tasks: see gen_ai.client.token.usage per call). */
  taskTokens(r: RuntimeResult, userId: string): void {
    this.tokens.add(r.usage.input_tokens, { user_id: userId, 'gen_ai.token.type': 'input' });
    this.tokens.add(r.usage.output_tokens, { user_id: userId, 'gen_ai.token.type': 'output' });
  }

  replanned(): void {
    this.replans.add(1);
  }
}
