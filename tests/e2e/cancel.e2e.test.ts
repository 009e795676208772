import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TEAM, contracts, taskEventKind, type TaskEvent } from '@hermes/contracts';
import { request, submitTask } from '@hermes/bus';
import { lastUserMessageText } from '@hermes/testkit';
import { API_KEY, startStack, type Stack } from './stack.js';
import { collectTaskEvents } from './events.js';

let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ runtimeReplicas: 1 });
}, 90_000);

afterAll(async () => {
  await stack?.stop();
});

async function until(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('cancellation', () => {
  it('DELETE /v1/tasks/:id stops a running task at once: its LLM call is aborted and it ends cancelled', async () => {
    const goal = 'think for a very long time';
    stack.llm.setResponder(({ body }) => (lastUserMessageText(body) === goal ? { content: 'too late', delayMs: 30_000 } : { content: 'ok' }));
    const { taskId } = await submitTask(stack.bus, { user_id: 'alice', goal }, { team: DEFAULT_TEAM, source: '/e2e/cancel', id: 'cancel-1' });
    await until(() => stack.llm.inFlight === 1, 15_000);

    const res = await fetch(`${stack.gatewayUrl}/v1/tasks/${taskId}?reason=${encodeURIComponent('changed my mind')}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${API_KEY}` },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ task_id: taskId, status: 'cancelled', error: { code: 'cancelled', message: 'changed my mind' } });

    // The runtime aborts the HTTP call to the model rather than waiting 30 s for it.
    await until(() => stack.llm.inFlight === 0, 5_000);
    const events: TaskEvent[] = await collectTaskEvents(stack.bus, taskId);
    expect(events.map(taskEventKind).at(-1)).toBe('cancelled');

    // Nothing arrives after the cancellation, and the state stays cancelled.
    await new Promise((r) => setTimeout(r, 500));
    const view = await request(stack.bus, contracts.taskGet, { task_id: taskId });
    expect(view.status).toBe('cancelled');
    expect(view.result).toBeUndefined();
  });

  it("cancelling another user's task looks like a missing task, and an ended task is returned unchanged", async () => {
    stack.llm.setResponder(() => ({ content: 'done quickly' }));
    const { taskId } = await submitTask(stack.bus, { user_id: 'bob', goal: 'quick one' }, { team: DEFAULT_TEAM, source: '/e2e/cancel', id: 'cancel-2' });
    const events = await collectTaskEvents(stack.bus, taskId);
    expect(events.map(taskEventKind).at(-1)).toBe('completed');

    const foreign = await fetch(`${stack.gatewayUrl}/v1/tasks/${taskId}`, { method: 'DELETE', headers: { authorization: `Bearer ${API_KEY}` } });
    expect(foreign.status).toBe(404);

    const view = await request(stack.bus, contracts.taskCancel, { task_id: taskId, reason: 'too late' });
    expect(view.status).toBe('completed');
  });
});
