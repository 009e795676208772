import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from '@hermes/bus';
import { contracts, taskEventData, taskEventKind, type TaskEvent, type TaskView } from '@hermes/contracts';
import { API_KEY, BOB_KEY, replicasOf, runtimeHolding, startStack, type Stack } from './stack.js';
import { callTools, ModelScript, toolMessages, type Turn } from './model-script.js';
import { outcomeOf, submit, watchTask } from './tasks.js';
import { readSse } from './events.js';
import { hermesCli } from './tool-fixtures.js';
import { spawnHermes } from './cli-bin.js';

// ask_user through real processes: runtime ⇄ scripted model, dispatcher, gateway, CLI, two
// runtime replicas (one is SIGKILLed while a task waits). Questions wait ASK_USER_TIMEOUT_MS =
// 8 s, ample for the tests that answer at once (their answers follow within a second or two even
// on a loaded machine), short enough for the one that lets it run out.
let stack: Stack;
let model: ModelScript;

beforeAll(async () => {
  stack = await startStack({ runtimeReplicas: 2, env: { ASK_USER_TIMEOUT_MS: '8000', ASK_USER_TIMEOUT_POLICY: 'fail' } });
  model = new ModelScript(stack.llm);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

const ask = (id: string, question: string, choices?: string[]) => callTools({ id, name: 'ask_user', arguments: { question, ...(choices ? { choices } : {}) } });

/** The model's last turn: it repeats the answer it read for the call, so the test sees what reached it. */
const echoAnswer =
  (callId: string): Turn =>
  (req) => {
    const result = toolMessages(req.body).find((m) => m.tool_call_id === callId)?.content as { result?: { answer?: string } } | undefined;
    return { content: `answer was: ${result?.result?.answer ?? '(none)'}` };
  };

const isInputRequired = (e: TaskEvent) => taskEventKind(e) === 'input_required';

async function http(method: string, path: string, key: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${stack.gatewayUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('ask_user', () => {
  it('round trip over HTTP: the question reaches the bus and SSE, only the owner answers, the task resumes with the answer', async () => {
    const goal = 'ask: which region to deploy';
    model.on(goal, [ask('q_region', 'Which region?', ['eu', 'us']), echoAnswer('q_region')]);
    const submitted = await http('POST', '/v1/tasks', API_KEY, { goal });
    expect(submitted.status).toBe(202);
    const taskId = submitted.body.task_id as string;
    const watch = watchTask(stack.bus, taskId);

    const asked = taskEventData(await watch.next(isInputRequired), 'input_required')!;
    expect(asked).toMatchObject({ task_id: taskId, subtask_id: 'main', call_id: 'q_region', question: 'Which region?', choices: ['eu', 'us'] });
    const waiting = await http('GET', `/v1/tasks/${taskId}`, API_KEY);
    expect(waiting.body.status).toBe('input_required');
    expect((waiting.body as unknown as TaskView).plan?.subtasks[0]).toMatchObject({ status: 'input_required', input: { question: 'Which region?' } });

    // Another user of the team: the same 404 as for no task, and the task still waits.
    expect(await http('POST', `/v1/tasks/${taskId}/input`, BOB_KEY, { answer: 'us' })).toMatchObject({ status: 404, body: { code: 'not_found' } });
    expect((await http('GET', `/v1/tasks/${taskId}`, API_KEY)).body.status).toBe('input_required');
    expect(await http('POST', `/v1/tasks/${taskId}/input`, API_KEY, { answer: '' })).toMatchObject({ status: 400, body: { code: 'invalid_payload' } });

    const answered = await http('POST', `/v1/tasks/${taskId}/input`, API_KEY, { answer: 'eu' });
    expect(answered.status).toBe(200);
    expect(answered.body.status).toBe('running');
    const events = await watch.done;
    expect(outcomeOf(events)).toEqual({ kind: 'completed', output: 'answer was: eu' });
    // Resumed where it stopped: the first turn was not asked again.
    expect(model.requests(goal)).toHaveLength(2);
    expect(await http('POST', `/v1/tasks/${taskId}/input`, API_KEY, { answer: 'again' })).toMatchObject({
      status: 409,
      body: { code: 'not_waiting_for_input' },
    });

    const sse = await fetch(`${stack.gatewayUrl}/v1/tasks/${taskId}/events`, { headers: { authorization: `Bearer ${API_KEY}` } });
    const kinds = (await readSse(sse)).map((e) => e.event);
    expect(kinds).toContain('input_required');
    expect(kinds.at(-1)).toBe('completed');
  });

  it('round trip over the CLI: hermes answer as another user is refused, as the owner it resumes the task', async () => {
    const goal = 'ask: cli round trip';
    model.on(goal, [ask('q_cli', 'Proceed?'), echoAnswer('q_cli')]);
    const taskId = await submit(stack.bus, { user_id: 'alice', goal });
    const watch = watchTask(stack.bus, taskId);
    await watch.next(isInputRequired);

    await expect(hermesCli(stack.natsUrl, ['answer', taskId, 'no', '--user', 'bob'])).rejects.toMatchObject({ stderr: expect.stringContaining('not found') });
    const { stdout } = await hermesCli(stack.natsUrl, ['answer', taskId, 'yes, go', '--user', 'alice']);
    expect(stdout).toMatch(/status\s+running/);
    expect(outcomeOf(await watch.done)).toEqual({ kind: 'completed', output: 'answer was: yes, go' });
  });

  it('hermes run and hermes status print the question with its choices and the hermes answer hint; hermes run follows the task to its answer', async () => {
    const goal = 'ask: cli shows the question';
    model.on(goal, [ask('q_shown', 'Which environment?', ['staging', 'prod']), echoAnswer('q_shown')]);
    const run = spawnHermes(stack.natsUrl, {}, 'run', goal, '--user', 'alice');
    try {
      // Generous: the bin starts, connects and the task runs its first turn on a loaded machine.
      const printed = await run.waitForOutput(/input required/, 30_000);
      const taskId = /^task (\S+)$/m.exec(printed)?.[1];
      expect(taskId).toBeDefined();
      expect(printed).toContain(`input required subtask=main: Which environment? [staging | prod] (answer with: hermes answer ${taskId} "<text>")`);
      // hermes status of the waiting task says the same.
      const status = (await hermesCli(stack.natsUrl, ['status', taskId!])).stdout;
      expect(status).toMatch(/status\s+input_required/);
      expect(status).toContain(`question  main: Which environment? [staging | prod] (answer with: hermes answer ${taskId} "<text>")`);
      expect(status).toMatch(/\? main input_required: /);
      // The hint, run as printed, resumes the task that hermes run still follows.
      const { stdout } = await hermesCli(stack.natsUrl, ['answer', taskId!, 'staging', '--user', 'alice']);
      expect(stdout).toMatch(/status\s+running/);
      expect(stdout).not.toMatch(/^question/m);
      const ended = await run.exited;
      expect(ended.code).toBe(0);
      expect(ended.out.trimEnd().split('\n').at(-1)).toBe('completed: answer was: staging');
    } finally {
      run.kill();
    }
  });

  it('the runtime that asked is SIGKILLed while the task waits: the answer resumes it on the other replica, its sibling call replayed', async () => {
    const goal = 'ask: survive a runtime kill';
    model.on(goal, [
      callTools(
        { id: 'c_date', name: 'date_add', arguments: { date: '2025-01-31', months: 1 } },
        { id: 'q_kill', name: 'ask_user', arguments: { question: 'Book it?' } },
      ),
      echoAnswer('q_kill'),
    ]);
    const taskId = await submit(stack.bus, { user_id: 'alice', goal });
    const watch = watchTask(stack.bus, taskId);
    const asker = await runtimeHolding(stack, taskId, 15_000);
    expect(asker).toBeDefined();
    await watch.next(isInputRequired);
    await asker!.kill();

    const view = await request(stack.bus, contracts.taskInput, { task_id: taskId, user_id: 'alice', answer: 'book it' });
    expect(view.status).toBe('running');
    const events = await watch.done;
    expect(outcomeOf(events)).toEqual({ kind: 'completed', output: 'answer was: book it' });
    // The second request holds the turn's two results in call order: the date from the first job, the answer from the second.
    const asked = model.requests(goal);
    expect(asked).toHaveLength(2);
    const results = toolMessages(asked[1]!.body);
    expect(results.map((m) => m.tool_call_id)).toEqual(['c_date', 'q_kill']);
    expect(results[0]!.content).toMatchObject({ ok: true, result: { date: '2025-02-28' } });
    expect(events.filter((e) => taskEventKind(e) === 'started')).toHaveLength(2);
  });

  it('a question nobody answers ends the task input_timeout after ASK_USER_TIMEOUT_MS (policy fail)', async () => {
    const goal = 'ask: nobody answers';
    model.on(goal, [ask('q_late', 'Anyone there?')]);
    const taskId = await submit(stack.bus, { user_id: 'alice', goal });
    // 8 s of waiting plus the sweep: 30 s leaves room for a slow machine.
    const watch = watchTask(stack.bus, taskId, 30_000);
    await watch.next(isInputRequired);
    const events = await watch.done;
    expect(outcomeOf(events)).toEqual({ kind: 'failed', error: 'input_timeout' });
    expect(taskEventData(events.at(-1)!, 'failed')!.error.details).toMatchObject({ call_id: 'q_late', question: 'Anyone there?' });
    expect(model.requests(goal)).toHaveLength(1);
    await expect(request(stack.bus, contracts.taskInput, { task_id: taskId, answer: 'too late' })).rejects.toMatchObject({ code: 'not_waiting_for_input' });
  }, 40_000);

  // Last in the file: it swaps the dispatchers for one with the other policy.
  it('policy continue: a question nobody answers resumes the task after ASK_USER_TIMEOUT_MS, the model told nobody answered', async () => {
    for (const d of await replicasOf(stack, 'dispatcher')) await d.stop(5000);
    await stack.startReplica('dispatcher', 'dispatcher-continue', { ASK_USER_TIMEOUT_POLICY: 'continue' });
    const goal = 'ask: nobody answers, carry on';
    model.on(goal, [
      ask('q_gone', 'Which colour?', ['red', 'blue']),
      // Repeats what the model read for the question, so the test sees it.
      (req) => {
        const read = toolMessages(req.body).find((m) => m.tool_call_id === 'q_gone')?.content as { result?: { answered?: boolean; note?: string } } | undefined;
        return { content: `answered: ${String(read?.result?.answered)}; note: ${read?.result?.note ?? '(none)'}` };
      },
    ]);
    const taskId = await submit(stack.bus, { user_id: 'alice', goal });
    // 8 s of waiting plus the sweep and one more model turn: 40 s leaves room for a slow machine.
    const watch = watchTask(stack.bus, taskId, 40_000);
    await watch.next(isInputRequired);
    const events = await watch.done;
    const outcome = outcomeOf(events);
    expect(outcome).toMatchObject({ kind: 'completed' });
    expect(outcome.output).toMatch(/^answered: false; note: The user did not answer in time\. Continue without the answer/);
    // The model was asked once before the question and once after the timeout, no more.
    expect(model.requests(goal)).toHaveLength(2);
    expect(events.filter(isInputRequired)).toHaveLength(1);
    await expect(request(stack.bus, contracts.taskInput, { task_id: taskId, answer: 'red' })).rejects.toMatchObject({ code: 'not_waiting_for_input' });
  }, 90_000);
});
