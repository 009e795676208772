import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TEAM, TERMINAL_EVENT_KINDS, taskEventData, taskEventKind, taskIdFor, type TaskEvent } from '@hermes/contracts';
import { eventually } from '@hermes/testkit';
import { collectTaskEvents } from './events.js';
import { startStack, type Stack } from './stack.js';
import { outcomeOf, submit, watchTask } from './tasks.js';
import { hermesCli } from './tool-fixtures.js';
import { natsHandles } from '@hermes/bus/internal';

// The default mode, as users run it: each task is planned (one call), then its subtask runs.
const TASKS = 500;
let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ env: { PLAN_MODE: 'auto' } });
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

describe('poison submissions', () => {
  it('1,000 submissions nested 5,000 deep, then a good one: the good one completes, each poison one is rejected and dead-lettered with its reason, and hermes deadletter list shows them', async () => {
    const POISON = 1000;
    const deep = '{"a":'.repeat(5000) + '1' + '}'.repeat(5000);
    const ids = Array.from({ length: POISON }, (_, i) => `poison-${i}-${Date.now()}`);
    // A buggy publisher of another team: valid CloudEvents whose inputs nest past any sane depth.
    await Promise.all(
      ids.map((id) =>
        natsHandles(stack.bus).js.publish(
          stack.bus.subjects.taskSubmit(DEFAULT_TEAM),
          new TextEncoder().encode(
            `{"specversion":"1.0","type":"io.hermes.task.submit","source":"/buggy-team","id":"${id}","data":{"user_id":"victim","goal":"poison","inputs":{"x":${deep}}}}`,
          ),
        ),
      ),
    );
    const good = await submit(stack.bus, { user_id: 'alice', goal: 'the good task after the poison' });
    // Generous: a thousand rejections and dead letters ahead of it on a loaded 2-core machine.
    const events = await watchTask(stack.bus, good, 180_000).done;
    expect(outcomeOf(events)).toMatchObject({ kind: 'completed' });

    const deadLetters = async () => (await natsHandles(stack.bus).jsm.streams.info(stack.bus.subjects.streams.deadLetters)).state.messages;
    await eventually(async () => (await deadLetters()) >= POISON, 60_000, 'every poison submission to be dead-lettered');
    const rejected = (await collectTaskEvents(stack.bus, taskIdFor(DEFAULT_TEAM, '/buggy-team', ids[0]!), 5_000)).map((e) => taskEventData(e, 'rejected'));
    expect(rejected).toMatchObject([{ error: { code: 'payload_limit', details: { limit: 'maxDepth' } } }]);
    // The table (--json would print every record's body, 1,000 of 67 KB).
    const { stdout } = await hermesCli(stack.natsUrl, ['deadletter', 'list', '--limit', String(POISON)]);
    const rows = stdout.trim().split('\n').slice(1);
    expect(rows).toHaveLength(POISON);
    expect(rows.filter((r) => r.includes(stack.bus.subjects.streams.taskSubmit) && r.includes('payload_limit'))).toHaveLength(POISON);
    // Nothing of them is left in the submit queue holding a slot.
    expect((await natsHandles(stack.bus).jsm.streams.info(stack.bus.subjects.streams.taskSubmit)).state.messages).toBe(0);
  }, 300_000);
});

describe('task events under a burst', () => {
  it(`${TASKS} tasks at once: a core-subject subscriber sees exactly one accepted and one terminal event per task`, async () => {
    const seen = new Map<string, TaskEvent[]>();
    // A plain core subscription, as the AsyncAPI document tells submitters they may use: it sees
    // every publish, including repeats the stream's de-duplication hides from stream readers.
    const sub = natsHandles(stack.bus).nc.subscribe(stack.bus.subjects.taskEventsAll, {
      callback: (_err, msg) => {
        const event = msg.json<TaskEvent>();
        seen.set(event.subject, [...(seen.get(event.subject) ?? []), event]);
      },
    });
    await natsHandles(stack.bus).nc.flush();

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
