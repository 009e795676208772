import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskEvent } from '@hermes/contracts';
import type { ChildService } from '@hermes/testkit';
import { callTools, ModelScript } from './model-script.js';
import { startStack, type Stack } from './stack.js';
import { outcomeOf, submit, watchTask } from './tasks.js';
import { Ledger, startToolProvider } from './tool-fixtures.js';

/**
 * A rolling upgrade as Kubernetes does it, one service at a time under load: a new replica is
 * started, then the old one gets SIGTERM. Every task must complete, and every side effect of a
 * tool call happen exactly once per idempotency key.
 */
const TASKS = 40;
let stack: Stack;
let model: ModelScript;
let ledger: Ledger;
let provider: ChildService;

beforeAll(async () => {
  stack = await startStack({ runtimeReplicas: 2 });
  model = new ModelScript(stack.llm);
  ledger = new Ledger();
  provider = await startToolProvider({ natsUrl: stack.natsUrl, bus: stack.bus, ledger });
}, 120_000);

afterAll(async () => {
  await provider?.stop(3000);
  await stack?.stop();
  ledger?.remove();
});

/**
 * Starts a replacement for the named replica, then stops the old one gracefully (SIGTERM). With
 * `recreate`, the old one stops first, as a Recreate deployment does: the memory service's
 * embedded store has one owner at a time, and its outage is waited out.
 */
async function roll(
  name: string,
  kind: 'dispatcher' | 'runtime' | 'toolbus' | 'memory' | 'gateway',
  next: string,
  opts: { recreate?: boolean } = {},
): Promise<void> {
  const old = stack.services.get(name)!;
  if (opts.recreate) await old.stop(10_000);
  await stack.startReplica(kind, next);
  if (!opts.recreate) await old.stop(10_000);
  stack.services.delete(name);
}

describe('a rolling restart of every service under load', () => {
  it(`${TASKS} tasks with a side-effecting tool call each all complete, and each effect happens once`, async () => {
    const goals = Array.from({ length: TASKS }, (_, i) => `rolling task ${i}`);
    for (const [i, goal] of goals.entries()) {
      model.on(goal, [
        { ...callTools({ name: 'ledger_append', arguments: { entry: `roll-${i}` } }), delayMs: 300 },
        { content: `done ${i}`, delayMs: 200 },
      ]);
    }
    const watches: Promise<TaskEvent[]>[] = [];
    const submitting = (async () => {
      for (const goal of goals) {
        const taskId = await submit(stack.bus, { user_id: `roller${goal.length % 3}`, goal });
        // Generous: the whole roll takes tens of seconds on a loaded 2-core machine.
        watches.push(watchTask(stack.bus, taskId, 240_000).done);
        await new Promise((r) => setTimeout(r, 400));
      }
    })();

    await new Promise((r) => setTimeout(r, 1500));
    await roll('toolbus', 'toolbus', 'toolbus-r');
    await roll('memory', 'memory', 'memory-r', { recreate: true });
    await roll('dispatcher', 'dispatcher', 'dispatcher-r');
    await roll('runtime-1', 'runtime', 'runtime-r1');
    await roll('runtime-2', 'runtime', 'runtime-r2');
    // The stack's gateway listens on one fixed port (pods would each have their own address).
    await roll('gateway', 'gateway', 'gateway-r', { recreate: true });
    await submitting;
    const outcomes = (await Promise.all(watches)).map(outcomeOf);

    expect(outcomes.filter((o) => o.kind !== 'completed')).toEqual([]);
    const counts = Object.values(ledger.countByKey());
    expect(counts).toHaveLength(TASKS);
    expect(counts.filter((n) => n !== 1)).toEqual([]);
  }, 300_000);
});
