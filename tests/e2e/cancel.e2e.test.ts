import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TEAM, contracts, taskEventKind, type TaskEvent } from '@hermes/contracts';
import { request, submitTask } from '@hermes/bus';
import { eventually, lastUserMessageText } from '@hermes/testkit';
import { API_KEY } from './stack.js';
import { sharedStack, type SharedStack } from './shared-stack.js';
import { collectTaskEvents } from './events.js';

let stack: SharedStack;

beforeAll(async () => {
  stack = await sharedStack();
}, 90_000);

afterAll(async () => {
  await stack?.stop();
});

describe('cancellation', () => {
  it('DELETE /v1/tasks/:id stops a running task at once: its LLM call is aborted and it ends cancelled', async () => {
    const goal = 'think for a very long time';
    stack.llm.setResponder(({ body }) => (lastUserMessageText(body) === goal ? { content: 'too late', delayMs: 30_000 } : { content: 'ok' }));
    const { taskId } = await submitTask(stack.bus, { user_id: 'alice', goal }, { team: DEFAULT_TEAM, source: '/e2e/cancel', id: `cancel-1-${randomUUID()}` });
    const call = await eventually(() => stack.llm.requests.find((r) => lastUserMessageText(r.body) === goal), 15_000, "the task's LLM call");

    const res = await fetch(`${stack.gatewayUrl}/v1/tasks/${taskId}?reason=${encodeURIComponent('changed my mind')}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${API_KEY}` },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ task_id: taskId, status: 'cancelled', error: { code: 'cancelled', message: 'changed my mind' } });

    // The runtime aborts the HTTP call to the model rather than waiting 30 s for it.
    await eventually(() => call.endedAt !== undefined, 5_000, 'the LLM call to be aborted');
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
    const { taskId } = await submitTask(
      stack.bus,
      { user_id: 'bob', goal: 'quick one' },
      { team: DEFAULT_TEAM, source: '/e2e/cancel', id: `cancel-2-${randomUUID()}` },
    );
    const events = await collectTaskEvents(stack.bus, taskId);
    expect(events.map(taskEventKind).at(-1)).toBe('completed');

    const foreign = await fetch(`${stack.gatewayUrl}/v1/tasks/${taskId}`, { method: 'DELETE', headers: { authorization: `Bearer ${API_KEY}` } });
    expect(foreign.status).toBe(404);

    const view = await request(stack.bus, contracts.taskCancel, { task_id: taskId, reason: 'too late' });
    expect(view.status).toBe('completed');
  });
});
