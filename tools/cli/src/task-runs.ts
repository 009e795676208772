import { followTaskEvents, submitTask, type Bus } from '@hermes/bus';
import { TERMINAL_EVENT_KINDS, taskEventData, taskEventKind, taskIdFor, type TaskRequest } from '@hermes/contracts';
import { CliError, EXIT } from './command.js';

/** How a task the CLI ran ended. */
export interface TaskRun {
  taskId: string;
  status: string;
  output?: string;
  errorCode?: string;
  /** From the submit to the terminal event, as the CLI saw it. */
  latencyMs: number;
}

/** The id a submission will get, so a script can be stored for the task before it is submitted. */
export function plannedTaskId(team: string, source: string, id: string): string {
  return taskIdFor(team, source, id);
}

/** Submits a task and follows its events until the terminal one (or `timeoutMs`, then it is an error: the task goes on). */
export async function runToEnd(
  bus: Bus,
  o: { team: string; source: string; id: string; request: TaskRequest; timeoutMs: number; signal?: AbortSignal },
): Promise<TaskRun> {
  const started = performance.now();
  const { taskId } = await submitTask(bus, o.request, { team: o.team, source: o.source, id: o.id });
  const timeout = AbortSignal.timeout(o.timeoutMs);
  const signal = o.signal ? AbortSignal.any([o.signal, timeout]) : timeout;
  let run: TaskRun | undefined;
  for await (const { event } of followTaskEvents(bus, { team: o.team, task_id: taskId }, { signal })) {
    const kind = taskEventKind(event);
    if (!TERMINAL_EVENT_KINDS.includes(kind)) continue;
    const completed = taskEventData(event, 'completed');
    const failed = taskEventData(event, 'failed');
    run = {
      taskId,
      status: kind,
      ...(completed ? { output: completed.result.output } : {}),
      ...(failed ? { errorCode: failed.error.code } : {}),
      latencyMs: Math.round(performance.now() - started),
    };
    break;
  }
  if (!run) throw new CliError(`task ${taskId} did not end within ${o.timeoutMs} ms`, EXIT.failed);
  return run;
}
