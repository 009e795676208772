import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TERMINAL_EVENT_KINDS, taskEventKind, type TaskEvent } from '@hermes/contracts';
import { natsHandles } from '@hermes/bus/internal';
import { eventually } from '@hermes/testkit';
import { startStack, type Stack } from './stack.js';
import { submit } from './tasks.js';

// Two dispatcher replicas fire the same timers (task deadlines here: the model never answers, so
// every task ends task_timeout); the compare-and-set on the task lets one change through. The
// counts come from a core subscription, which sees every publish, repeats included.
const TAKEOVER_MS = 2000;
// Long enough for 40 submissions to be accepted on a loaded machine before the pause.
const PAUSE_DEADLINE_MS = 10_000;
let stack: Stack;
const seen = new Map<string, TaskEvent[]>();

beforeAll(async () => {
  // Generous readiness: this file starts three dispatchers on a machine shared with other suites.
  stack = await startStack({ env: { DISPATCHER_TAKEOVER_MS: String(TAKEOVER_MS) }, readyTimeoutMs: 180_000 });
  await stack.startReplica('dispatcher', 'dispatcher-2');
  stack.llm.setResponder(() => ({ hang: true }));
  const nc = natsHandles(stack.bus).nc;
  nc.subscribe(stack.bus.subjects.taskEventsAll, {
    callback: (_err, msg) => {
      const event = msg.json<TaskEvent>();
      seen.set(event.subject, [...(seen.get(event.subject) ?? []), event]);
    },
  });
  await nc.flush();
}, 400_000);

afterAll(async () => {
  await stack?.stop();
});

const eventsOf = (id: string) => seen.get(id) ?? [];
const timeouts = (id: string) =>
  eventsOf(id).filter((e) => taskEventKind(e) === 'failed' && (e.data as { error?: { code?: string } }).error?.code === 'task_timeout');
const ends = (id: string) => eventsOf(id).filter((e) => TERMINAL_EVENT_KINDS.includes(taskEventKind(e)));
const timedOut = (ids: string[]) => ids.filter((id) => timeouts(id).length > 0).length;

/** Submits `n` tasks whose deadlines fall one after another, `stepMs` apart, and waits until each was accepted. */
async function tasksWithDeadlines(label: string, n: number, firstMs: number, stepMs: number): Promise<string[]> {
  const ids = await Promise.all(
    Array.from({ length: n }, (_, i) => submit(stack.bus, { user_id: `timer${i % 5}`, goal: `${label} ${i}`, budget: { timeout_ms: firstMs + i * stepMs } })),
  );
  // Generous: a burst of submissions through intake on a loaded 2-core machine.
  await eventually(
    () => ids.every((id) => eventsOf(id).some((e) => taskEventKind(e) === 'accepted')),
    60_000,
    () =>
      `all ${n} ${label} tasks accepted: ${JSON.stringify(ids.filter((id) => !eventsOf(id).some((e) => taskEventKind(e) === 'accepted')).map((id) => [id, eventsOf(id).map(taskEventKind)]))}`,
  );
  return ids;
}

/** Waits until every task ended, then for a quiet spell longer than a takeover, so that a late repeat would be counted too. */
async function settle(ids: string[]): Promise<void> {
  // Generous: every deadline passed long before; this is a loaded 2-core machine.
  await eventually(
    () => ids.every((id) => ends(id).length > 0),
    120_000,
    () => `all ${ids.length} tasks to end (${timedOut(ids)} timed out)`,
  );
  await new Promise((r) => setTimeout(r, 2 * TAKEOVER_MS + 2000));
}

function expectExactlyOneTimeoutEach(ids: string[]): void {
  expect(ids.filter((id) => timeouts(id).length !== 1).map((id) => ({ id, timeouts: timeouts(id).length }))).toEqual([]);
  expect(ids.filter((id) => ends(id).length !== 1).map((id) => ({ id, ends: ends(id).map(taskEventKind) }))).toEqual([]);
}

describe('dispatcher timers with two replicas', () => {
  it('120 tasks with short deadlines, one dispatcher SIGKILLed mid-way: every task gets exactly one task_timeout', async () => {
    const ids = await tasksWithDeadlines('kill', 120, 4000, 60);
    // Mid-way: some deadlines were handled with both replicas up, the rest by the survivor alone.
    await eventually(
      () => timedOut(ids) >= 30,
      60_000,
      () => `30 timeouts before the kill (${timedOut(ids)})`,
    );
    await stack.services.get('dispatcher')!.kill();
    const atKill = timedOut(ids);
    stack.services.delete('dispatcher');
    await settle(ids);
    expect(atKill).toBeLessThan(ids.length);
    expectExactlyOneTimeoutEach(ids);
  }, 300_000);

  // The pauses land before the first deadline: a replica frozen between its write and its publish
  // for longer than a takeover is the one case left where an end can be published twice (docs/architecture.md).
  it('40 deadlines pass while one dispatcher is SIGSTOPped, then SIGCONTed: exactly one task_timeout each', async () => {
    // A new replica loads the active index at start; the survivor of the kill is the one paused.
    await stack.startReplica('dispatcher', 'dispatcher-3');
    const paused = stack.services.get('dispatcher-2')!;
    const ids = await tasksWithDeadlines('pause', 40, PAUSE_DEADLINE_MS, 50);
    await paused.pause();
    try {
      expect(timedOut(ids)).toBe(0);
      // Generous: the other replica times them out while this one is frozen.
      await eventually(
        () => timedOut(ids) === ids.length,
        120_000,
        () => `all 40 timed out while paused (${timedOut(ids)})`,
      );
    } finally {
      // Its overdue timers fire now, on tasks already ended.
      paused.resume();
    }
    await settle(ids);
    expectExactlyOneTimeoutEach(ids);
  }, 300_000);

  it('40 deadlines pass while both dispatchers are SIGSTOPped: on SIGCONT both catch up and each task gets exactly one task_timeout', async () => {
    const replicas = [stack.services.get('dispatcher-2')!, stack.services.get('dispatcher-3')!];
    const submitted = Date.now();
    const ids = await tasksWithDeadlines('frozen', 40, PAUSE_DEADLINE_MS, 50);
    await Promise.all(replicas.map((r) => r.pause()));
    try {
      expect(timedOut(ids)).toBe(0);
      // Past the last deadline (counted from intake, after `submitted`) with nobody to act on it.
      await new Promise((r) => setTimeout(r, Math.max(0, submitted + PAUSE_DEADLINE_MS + 39 * 50 + 1000 - Date.now())));
      expect(timedOut(ids)).toBe(0);
    } finally {
      // Both resume at once: each fires all 40 overdue timers, racing on every task.
      for (const r of replicas) r.resume();
    }
    await settle(ids);
    expectExactlyOneTimeoutEach(ids);
  }, 300_000);
});
