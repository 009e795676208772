import { followTaskEvents, type Bus } from '@hermes/bus';
import { DEFAULT_TEAM, taskEventKind, type TaskEvent } from '@hermes/contracts';

/** Collects a task's events until its terminal event (or fails after `timeoutMs`). */
export async function collectTaskEvents(bus: Bus, taskId: string, timeoutMs = 20_000): Promise<TaskEvent[]> {
  const signal = AbortSignal.timeout(timeoutMs);
  const events: TaskEvent[] = [];
  for await (const { event } of followTaskEvents(bus, { team: DEFAULT_TEAM, task_id: taskId }, { signal })) events.push(event);
  if (signal.aborted) throw new Error(`task ${taskId} did not end within ${timeoutMs} ms; saw ${events.map(taskEventKind).join(', ')}`);
  return events;
}

export const kinds = (events: TaskEvent[]) => events.map(taskEventKind);

/** Reads an SSE response to its end: one `{ id, event, data }` per message. */
export async function readSse(res: Response): Promise<{ id?: string; event?: string; data: unknown }[]> {
  const text = await res.text();
  return text
    .split('\n\n')
    .filter((block) => block.split('\n').some((l) => l.startsWith('data:')))
    .map((block) => {
      const fields: Record<string, string> = {};
      for (const line of block.split('\n')) {
        const m = /^(\w+): ?(.*)$/.exec(line);
        if (m) fields[m[1]!] = fields[m[1]!] ? `${fields[m[1]!]}\n${m[2]}` : m[2]!;
      }
      return { ...(fields.id ? { id: fields.id } : {}), ...(fields.event ? { event: fields.event } : {}), data: JSON.parse(fields.data ?? 'null') };
    });
}
