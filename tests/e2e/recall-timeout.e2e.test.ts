import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelScript } from './model-script.js';
import { startStack, type Stack } from './stack.js';
import { outcomeOf, stepOf, submit, watchTask } from './tasks.js';

// Stops the memory service's process (SIGSTOP), so its recall reply never comes: a stack of its own.
let stack: Stack;
let script: ModelScript;

beforeAll(async () => {
  stack = await startStack();
  script = new ModelScript(stack.llm);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

describe('a long-term memory recall that times out', () => {
  it('is a warning event on the task, and the task still completes once memory is back', async () => {
    const memory = stack.services.get('memory')!;
    process.kill(memory.pid, 'SIGSTOP');
    let stopped = true;
    try {
      const goal = 'recall-timeout: answer without memories';
      script.on(goal, []);
      // Generous: the recall waits 2 s, then the session read waits out the stopped service.
      const watch = watchTask(stack.bus, await submit(stack.bus, { user_id: 'recall-alice', goal }), 90_000);
      const warning = await watch.next((e) => stepOf(e, 'warning') !== undefined, 60_000);
      expect(stepOf(warning, 'warning')?.detail).toMatchObject({ code: 'memory_recall_timed_out', timeout_ms: 2000 });
      process.kill(memory.pid, 'SIGCONT');
      stopped = false;
      const events = await watch.done;
      expect(outcomeOf(events)).toMatchObject({ kind: 'completed', output: `Done: ${goal}` });
      expect(events.filter((e) => stepOf(e, 'warning'))).toHaveLength(1);
    } finally {
      if (stopped) process.kill(memory.pid, 'SIGCONT');
    }
  }, 120_000);
});
