import { randomUUID } from 'node:crypto';
import { followTaskEvents, submitTask, type Bus } from '@hermes/bus';
import { DEFAULT_TEAM, taskEventData, taskEventKind, type TaskEvent, type TaskRequest } from '@hermes/contracts';

/** Submits a task on the bus under a fresh CloudEvent id and returns its id. */
export async function submit(bus: Bus, request: TaskRequest, team = DEFAULT_TEAM): Promise<string> {
  const { taskId } = await submitTask(bus, request, { team, source: '/e2e/tools', id: randomUUID() });
  return taskId;
}

/** A task's events as they arrive, for tests that act while the task runs (approve, kill a process). */
export interface TaskWatch {
  readonly taskId: string;
  /** Events seen so far, in stream order. */
  readonly events: TaskEvent[];
  /** Resolves with every event once the terminal one arrived; rejects after the watch's timeout. */
  readonly done: Promise<TaskEvent[]>;
  /** The first event, past or future, matching `predicate`; rejects after `timeoutMs` or when the task ended without one. */
  next(predicate: (e: TaskEvent) => boolean, timeoutMs?: number): Promise<TaskEvent>;
}

/** Follows a task's events (on its team's subject) from the start until its terminal event. */
export function watchTask(bus: Bus, taskId: string, timeoutMs = 30_000, team = DEFAULT_TEAM): TaskWatch {
  const events: TaskEvent[] = [];
  const listeners = new Set<() => void>();
  const signal = AbortSignal.timeout(timeoutMs);
  let ended = false;
  const done = (async () => {
    try {
      for await (const { event } of followTaskEvents(bus, { team, task_id: taskId }, { signal })) {
        events.push(event);
        listeners.forEach((l) => l());
      }
    } finally {
      ended = true;
      listeners.forEach((l) => l());
    }
    if (signal.aborted) throw new Error(`task ${taskId} did not end within ${timeoutMs} ms; saw ${describe(events)}`);
    return events;
  })();
  // A test that never awaits `done` (it failed earlier) must not leave an unhandled rejection behind.
  done.catch(() => undefined);

  const next = (predicate: (e: TaskEvent) => boolean, waitMs = 15_000) =>
    new Promise<TaskEvent>((resolve, reject) => {
      const check = () => {
        const found = events.find(predicate);
        if (found) finish(() => resolve(found));
        else if (ended) finish(() => reject(new Error(`task ${taskId} ended without the awaited event; saw ${describe(events)}`)));
      };
      const timer = setTimeout(
        () => finish(() => reject(new Error(`no awaited event for task ${taskId} within ${waitMs} ms; saw ${describe(events)}`))),
        waitMs,
      );
      const finish = (settle: () => void) => {
        clearTimeout(timer);
        listeners.delete(check);
        settle();
      };
      listeners.add(check);
      check();
    });
  return { taskId, events, done, next };
}

/** Submits a task and waits for its terminal event. */
export async function runTask(bus: Bus, request: TaskRequest, timeoutMs = 30_000, team = DEFAULT_TEAM): Promise<{ taskId: string; events: TaskEvent[] }> {
  const taskId = await submit(bus, request, team);
  return { taskId, events: await watchTask(bus, taskId, timeoutMs, team).done };
}

/** A step event's data, when `e` is a step of this kind. */
export function stepOf(e: TaskEvent, kind?: string) {
  const data = taskEventData(e, 'step');
  return data && (kind === undefined || data.kind === kind) ? data : undefined;
}

/** The step events of a kind, as their data. */
export function steps(events: TaskEvent[], kind: string) {
  return events.flatMap((e) => stepOf(e, kind) ?? []);
}

/** How the task ended: the kind of its last event with the answer or the error code. */
export function outcomeOf(events: TaskEvent[]): { kind: string; output?: string; error?: string } {
  const last = events.at(-1);
  if (!last) return { kind: 'none' };
  const completed = taskEventData(last, 'completed');
  if (completed) return { kind: 'completed', output: completed.result.output };
  const failed = taskEventData(last, 'failed');
  if (failed) return { kind: 'failed', error: failed.error.code };
  return { kind: taskEventKind(last) };
}

function describe(events: TaskEvent[]): string {
  return events.map((e) => (stepOf(e) ? `step:${stepOf(e)!.kind}` : taskEventKind(e))).join(', ') || 'nothing';
}
