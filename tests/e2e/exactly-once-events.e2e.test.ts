import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TERMINAL_EVENT_KINDS, taskEventKind, type TaskEvent } from '@hermes/contracts';
import { eventually } from '@hermes/testkit';
import { startStack, type Stack } from './stack.js';
import { submit } from './tasks.js';

// The default mode, as users run it: each task is planned (one call), then its subtask runs.
const TASKS = 500;
let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ env: { PLAN_MODE: 'auto', DISPATCHER_SWEEP_MS: '250' } });
  stack.llm.setResponder((req) => {
    const system = req.body.messages?.find((m) => m.role === 'system');
    const planned = /^Goal to plan: (.*)$/m.exec(typeof system?.content === 'string' ? system.content : '')?.[1];
    if (planned !== undefined) return { content: JSON.stringify({ subtasks: [{ id: 'answer', intent: planned, depends_on: [] }] }) };
    return { content: 'burst answer' };
  });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

describe('task events under a burst', () => {
  it(`${TASKS} tasks at once: a core-subject subscriber sees exactly one accepted and one terminal event per task`, async () => {
    const seen = new Map<string, TaskEvent[]>();
    // A plain core subscription, as the AsyncAPI document tells submitters they may use: it sees
    // every publish, including repeats the stream's de-duplication hides from stream readers.
    const sub = stack.bus.nc.subscribe(stack.bus.subjects.taskEventsAll, {
      callback: (_err, msg) => {
        const event = msg.json<TaskEvent>();
        seen.set(event.subject, [...(seen.get(event.subject) ?? []), event]);
      },
    });
    await stack.bus.nc.flush();

    const ids = await Promise.all(Array.from({ length: TASKS }, (_, i) => submit(stack.bus, { user_id: `burst${i % 7}`, goal: `burst task ${i}` })));

    const ended = () => ids.filter((id) => (seen.get(id) ?? []).some((e) => TERMINAL_EVENT_KINDS.includes(taskEventKind(e)))).length;
    // Generous: 1,000 model calls and 500 plans through every service on a loaded 2-core machine.
    await eventually(() => ended() === TASKS, 240_000, `all ${TASKS} tasks to end`);
    // Past the sweep's quiet period (2 s) several times over: a late repeat would have arrived.
    await new Promise((r) => setTimeout(r, 6_000));
    sub.unsubscribe();

    const repeats: string[] = [];
    for (const id of ids) {
      const events = seen.get(id) ?? [];
      const count = (kind: string) => events.filter((e) => taskEventKind(e) === kind).length;
      const terminal = events.filter((e) => TERMINAL_EVENT_KINDS.includes(taskEventKind(e)));
      if (count('accepted') !== 1 || terminal.length !== 1 || count('planned') !== 1) repeats.push(`${id}: ${events.map(taskEventKind).join(',')}`);
      expect(terminal.map(taskEventKind)).toEqual(['completed']);
    }
    expect(repeats).toEqual([]);
  }, 300_000);
});
