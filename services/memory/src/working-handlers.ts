import { contracts } from '@hermes/contracts';
import { serve, type Bus } from '@hermes/bus';
import { answer } from './reply-errors.js';
import { scopeOf } from './owner-scope.js';
import type { WorkingMemory } from './working-memory.js';

type Subscription = ReturnType<typeof serve>;

/** Answers workingSet, workingGet and workingClear. */
export function serveWorkingHandlers(o: { bus: Bus; working: WorkingMemory }): Subscription[] {
  const { bus, working } = o;
  return [
    serve(bus, contracts.workingSet, (req) => answer(bus, async () => ({ entries: await working.set(scopeOf(req).user, req.task_id, req.entries) }))),
    serve(bus, contracts.workingGet, (req) => answer(bus, async () => ({ entries: await working.get(scopeOf(req).user, req.task_id, req.subtask_id) }))),
    serve(bus, contracts.workingClear, (req) => answer(bus, async () => ({ cleared: await working.clear(scopeOf(req).user, req.task_id) }))),
  ];
}
