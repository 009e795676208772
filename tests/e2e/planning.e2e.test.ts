import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { contracts, taskEventData, type TaskEvent } from '@hermes/contracts';
import { request } from '@hermes/bus';
import { lastUserMessageText, type ChatRequestBody, type RecordedRequest, type ScriptedResponse, eventually } from '@hermes/testkit';
import { API_KEY, replicasOf, startStack, type Stack } from './stack.js';
import { goalOf } from './model-script.js';
import { kinds } from './events.js';
import { outcomeOf, submit, watchTask } from './tasks.js';
import { logIn, openBrowser, WAIT } from './console-browser-kit.js';

const PLANNER = 'scripted-planner';
let stack: Stack;

/** Planner answers by the goal being planned; worker answers by the subtask intent its system prompt anchors. */
const planners = new Map<string, (req: RecordedRequest, n: number) => ScriptedResponse>();
const workers = new Map<string, (req: RecordedRequest) => ScriptedResponse>();
const plannedGoal = (body: ChatRequestBody) => {
  const system = body.messages?.find((m) => m.role === 'system');
  return /^Goal to plan: (.*)$/m.exec(typeof system?.content === 'string' ? system.content : '')?.[1];
};
const isPlanner = (r: RecordedRequest) => r.body.model === PLANNER;
const planRequests = (goal: string) => stack.llm.requests.filter((r) => isPlanner(r) && plannedGoal(r.body) === goal);
const workRequests = (intent: string) => stack.llm.requests.filter((r) => !isPlanner(r) && goalOf(r.body) === intent);
const plan = (...subtasks: { id: string; intent: string; depends_on?: string[] }[]) => ({
  content: JSON.stringify({ subtasks: subtasks.map((s) => ({ depends_on: [], ...s })) }),
});

beforeAll(async () => {
  stack = await startStack({
    runtimeReplicas: 2,
    env: {
      PLAN_MODE: 'auto',
      HERMES_MODEL_PLANNER: PLANNER,
      SUBTASK_RETRY_BASE_MS: '100',
      // The runtime reports a failed LLM call at once, so the dispatcher's retries are what is tested.
      RUNTIME_MAX_ATTEMPTS: '1',
    },
    // One job per runtime at a time: two subtasks in flight together means two replicas.
    serviceEnv: { runtime: { RUNTIME_CONCURRENCY: '1' } },
  });
  const counts = new Map<string, number>();
  stack.llm.setResponder((req) => {
    if (isPlanner(req)) {
      const goal = plannedGoal(req.body) ?? '';
      const n = counts.get(goal) ?? 0;
      counts.set(goal, n + 1);
      return planners.get(goal)?.(req, n) ?? plan({ id: 'only', intent: goal });
    }
    const intent = goalOf(req.body) ?? '';
    return workers.get(intent)?.(req) ?? { content: `out:${intent}` };
  });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

const completedData = (events: TaskEvent[]) => {
  const last = events.at(-1);
  return last ? taskEventData(last, 'completed') : undefined;
};

describe('planned tasks', () => {
  it('a diamond DAG: B and C run at once on two runtimes, D gets both outputs and answers', async () => {
    const goal = 'diamond: fetch, two analyses, one report';
    planners.set(goal, () =>
      plan(
        { id: 'a', intent: 'dia-fetch' },
        { id: 'b', intent: 'dia-left', depends_on: ['a'] },
        { id: 'c', intent: 'dia-right', depends_on: ['a'] },
        { id: 'd', intent: 'dia-report', depends_on: ['b', 'c'] },
      ),
    );
    workers.set('dia-left', () => ({ content: 'left result', delayMs: 800 }));
    workers.set('dia-right', () => ({ content: 'right result', delayMs: 800 }));
    workers.set('dia-report', (req) => ({
      content: `report from [${lastUserMessageText(req.body).includes('left result') ? 'L' : ''}${lastUserMessageText(req.body).includes('right result') ? 'R' : ''}]`,
    }));

    const taskId = await submit(stack.bus, { user_id: 'alice', goal });
    const events = await watchTask(stack.bus, taskId, 30_000).done;
    expect(outcomeOf(events)).toEqual({ kind: 'completed', output: 'report from [LR]' });
    expect(kinds(events).slice(0, 2)).toEqual(['accepted', 'started']);
    // D read B's and C's outputs from the task's working memory, which is cleared once the task ends.
    let remaining: unknown[] = [undefined];
    for (let i = 0; i < 40 && remaining.length > 0; i++) {
      remaining = (await request(stack.bus, contracts.workingGet, { user_id: 'alice', task_id: taskId })).entries;
      if (remaining.length > 0) await new Promise((r) => setTimeout(r, 50));
    }
    expect(remaining).toEqual([]);
    const planned = events.flatMap((e) => taskEventData(e, 'planned') ?? []);
    expect(planned).toEqual([
      {
        task_id: taskId,
        replans: 0,
        subtasks: [
          { id: 'a', intent: 'dia-fetch', depends_on: [] },
          { id: 'b', intent: 'dia-left', depends_on: ['a'] },
          { id: 'c', intent: 'dia-right', depends_on: ['a'] },
          { id: 'd', intent: 'dia-report', depends_on: ['b', 'c'] },
        ],
      },
    ]);

    // B and C overlapped: each was asked before the other was answered (800 ms each).
    const [left] = workRequests('dia-left');
    const [right] = workRequests('dia-right');
    expect(Math.abs(left!.receivedAt - right!.receivedAt)).toBeLessThan(700);
    // With one job per runtime, that means both replicas ran one each.
    for (const r of await replicasOf(stack, 'runtime')) {
      expect(
        r.logs.some((l) => l.includes(`${taskId}-b-1`) || l.includes(`${taskId}-c-1`)),
        r.name,
      ).toBe(true);
    }
    for (const intent of ['dia-fetch', 'dia-left', 'dia-right', 'dia-report']) expect(workRequests(intent), intent).toHaveLength(1);
    expect(workRequests('dia-left')[0]!.body.messages?.some((m) => typeof m.content === 'string' && m.content.includes('out:dia-fetch'))).toBe(true);

    const done = completedData(events)!;
    expect(done.subtasks?.map((s) => [s.id, s.status, s.attempts])).toEqual([
      ['a', 'succeeded', 1],
      ['b', 'succeeded', 1],
      ['c', 'succeeded', 1],
      ['d', 'succeeded', 1],
    ]);
    expect(done.usage.input_tokens).toBeGreaterThan(0);

    // The API shows the plan with each node's state.
    const res = await fetch(`${stack.gatewayUrl}/v1/tasks/${taskId}`, { headers: { authorization: `Bearer ${API_KEY}` } });
    const view = (await res.json()) as { plan: { subtasks: { id: string; status: string }[] } };
    expect(view.plan.subtasks.map((s) => `${s.id}:${s.status}`)).toEqual(['a:succeeded', 'b:succeeded', 'c:succeeded', 'd:succeeded']);

    // `hermes status` draws the DAG: B and C one level under A, D under both.
    const cli = fileURLToPath(new URL('../../tools/cli/dist/main.js', import.meta.url));
    const { stdout } = await promisify(execFile)(process.execPath, [cli, 'status', taskId], { env: { ...process.env, NATS_URL: stack.natsUrl } });
    expect(stdout).toMatch(/✓ a succeeded: dia-fetch\n {4}✓ b succeeded ← a: dia-left\n {4}✓ c succeeded ← a: dia-right\n {6}✓ d succeeded ← b, c: dia-report/);

    // GET /v1/tasks lists the caller's own tasks, filtered and paginated.
    const list = async (query: string) => {
      const r = await fetch(`${stack.gatewayUrl}/v1/tasks${query}`, { headers: { authorization: `Bearer ${API_KEY}` } });
      expect(r.status).toBe(200);
      return (await r.json()) as { tasks: { task_id: string; status: string; user_id: string }[]; next_cursor?: string };
    };
    const other = await submit(stack.bus, { user_id: 'bob', goal: "not alice's" });
    await watchTask(stack.bus, other, 20_000).done;
    const second = await submit(stack.bus, { user_id: 'alice', goal: 'a second one for the list' });
    await watchTask(stack.bus, second, 20_000).done;
    const mine = await list('?status=completed');
    expect(mine.tasks.map((t) => t.task_id)).toEqual([second, taskId]);
    const page1 = await list('?limit=1');
    expect(page1.tasks.map((t) => t.task_id)).toEqual([second]);
    const page2 = await list(`?limit=1&cursor=${page1.next_cursor!}`);
    expect(page2.tasks.map((t) => t.task_id)).toEqual([taskId]);
    expect((await list('?status=failed')).tasks).toEqual([]);
  });

  it('a failing subtask is retried, then re-planned; its completed sibling is not run again; the console draws the retries and the re-plan', async () => {
    const goal = 'flaky: two parts and a summary';
    planners.set(goal, (req) =>
      lastUserMessageText(req.body).includes('"replan"')
        ? plan({ id: 'bad_alt', intent: 'flaky-alt' }, { id: 'sum2', intent: 'flaky-sum2', depends_on: ['ok', 'bad_alt'] })
        : plan({ id: 'ok', intent: 'flaky-ok' }, { id: 'bad', intent: 'flaky-bad' }, { id: 'sum', intent: 'flaky-sum', depends_on: ['ok', 'bad'] }),
    );
    workers.set('flaky-bad', () => ({ status: 503, message: 'model overloaded' }));
    workers.set('flaky-sum2', (req) => ({
      content:
        lastUserMessageText(req.body).includes('out:flaky-alt') && lastUserMessageText(req.body).includes('out:flaky-ok')
          ? 'summary ok'
          : 'summary missing inputs',
    }));

    const taskId = await submit(stack.bus, { user_id: 'alice', goal });
    const events = await watchTask(stack.bus, taskId, 40_000).done;
    expect(outcomeOf(events)).toEqual({ kind: 'completed', output: 'summary ok' });
    // 1 try + SUBTASK_MAX_RETRIES (2), then the re-plan; the sibling ran once and nothing ran the old summary.
    expect(workRequests('flaky-bad')).toHaveLength(3);
    expect(workRequests('flaky-ok')).toHaveLength(1);
    expect(workRequests('flaky-sum')).toHaveLength(0);
    expect(planRequests(goal)).toHaveLength(2);
    const replan = JSON.parse(lastUserMessageText(planRequests(goal)[1]!.body).split('Planning context (JSON):\n')[1]!) as {
      replan: { replace: string[]; completed: Record<string, unknown>; failed: { id: string; error: { code: string } } };
    };
    expect(replan.replan).toMatchObject({ replace: ['bad', 'sum'], failed: { id: 'bad', error: { code: 'llm_unavailable' } } });
    expect(Object.keys(replan.replan.completed)).toEqual(['ok']);

    const planned = events.flatMap((e) => taskEventData(e, 'planned') ?? []);
    expect(planned.map((p) => [p.replans, p.subtasks.map((s) => s.id), p.replaced])).toEqual([
      [0, ['ok', 'bad', 'sum'], undefined],
      [1, ['bad_alt', 'sum2'], ['bad', 'sum']],
    ]);
    expect(completedData(events)!.subtasks?.map((s) => [s.id, s.status, s.attempts])).toEqual([
      ['ok', 'succeeded', 1],
      ['bad', 'failed', 3],
      ['sum', 'skipped', 0],
      ['bad_alt', 'succeeded', 1],
      ['sum2', 'succeeded', 1],
    ]);

    // The console's plan DAG of the same task, in a real browser: retries, the re-plan and what it replaced.
    const browser = await openBrowser();
    try {
      await logIn(browser.page, stack.gatewayUrl, API_KEY);
      await browser.page.goto(`${stack.gatewayUrl}/console/#/tasks/${taskId}`);
      const node = (id: string) => browser.page.locator(`#plan [data-subtask="${id}"]`);
      await node('sum2').locator('[data-status="succeeded"]').waitFor(WAIT);
      expect(await node('bad').textContent()).toMatch(/attempts 3.*replaced/);
      expect(await node('bad').textContent()).toContain('llm_unavailable');
      // The old summary never ran: the re-plan's sum2 took its place.
      expect(await node('sum').locator('[data-status="skipped"]').count()).toBe(1);
      expect(await node('bad_alt').textContent()).toContain('re-plan 1');
      expect(await node('sum2').textContent()).toMatch(/re-plan 1.*after ok, bad_alt/);
      expect(await node('ok').textContent()).not.toContain('re-plan');
    } finally {
      await browser.close();
    }
  }, 90_000);

  it('an invalid plan is sent back once with the errors, then the task fails plan_invalid', async () => {
    const goal = 'cyclic: the planner keeps drawing a circle';
    planners.set(goal, () =>
      plan(
        { id: 'x', intent: 'cyc-x', depends_on: ['y'] },
        { id: 'y', intent: 'cyc-y', depends_on: ['x'] },
        { id: 'z', intent: 'cyc-z', depends_on: ['nope'] },
      ),
    );

    const taskId = await submit(stack.bus, { user_id: 'alice', goal });
    const events = await watchTask(stack.bus, taskId, 20_000).done;
    expect(outcomeOf(events)).toEqual({ kind: 'failed', error: 'plan_invalid' });
    const asked = planRequests(goal);
    expect(asked).toHaveLength(2);
    const resent = lastUserMessageText(asked[1]!.body);
    expect(resent).toMatch(/invalid_plan_errors/);
    expect(resent).toMatch(/depends on unknown subtask \\"nope\\"/);
    expect(resent).toMatch(/cycle/);
    expect(workRequests('cyc-x')).toHaveLength(0);
    const failed = taskEventData(events.at(-1)!, 'failed')!;
    expect(failed.error.details?.errors).toEqual(expect.arrayContaining([expect.stringMatching(/cycle/)]));
  });

  it('the later subtasks of a running task go ahead of tasks submitted after it started', async () => {
    const goal = 'lanes: three steps one after another';
    planners.set(goal, () =>
      plan({ id: 's1', intent: 'lane-1' }, { id: 's2', intent: 'lane-2', depends_on: ['s1'] }, { id: 's3', intent: 'lane-3', depends_on: ['s2'] }),
    );
    workers.set('lane-1', () => ({ content: 'one', delayMs: 800 }));
    const later = Array.from({ length: 6 }, (_, i) => `queued behind the lanes task ${i}`);
    for (const g of later) planners.set(g, () => ({ ...plan({ id: 'only', intent: g }), delayMs: 500 }));

    const taskId = await submit(stack.bus, { user_id: 'alice', goal });
    await eventually(() => workRequests('lane-1').length === 1 || undefined, 20_000, 'the chain under way');
    // Six new tasks queue their plan jobs while the chain's first step runs on one of the two
    // runtimes (users of their own: one user's tasks would also wait for each other's session).
    const ids = await Promise.all(later.map((g, i) => submit(stack.bus, { user_id: `queued-${i}`, goal: g })));
    const events = await watchTask(stack.bus, taskId, 60_000).done;
    expect(outcomeOf(events)).toMatchObject({ kind: 'completed' });
    const runs = await Promise.all(ids.map((id) => watchTask(stack.bus, id, 60_000).done));
    expect(runs.map((e) => outcomeOf(e).kind)).toEqual(later.map(() => 'completed'));

    // In stream order the chain's second step would wait behind all six plan jobs, published before
    // it; on the ahead lane it and the third start as soon as a runtime frees, so some of the
    // newer tasks' plans are asked only after the chain's last step.
    const lastStep = workRequests('lane-3')[0]!.receivedAt;
    const plannedBefore = later.filter((g) => planRequests(g)[0]!.receivedAt < lastStep);
    expect(plannedBefore.length).toBeLessThan(later.length);
    for (const g of later) expect(planRequests(g), g).toHaveLength(1);
  });

  it('cancelling a planned task mid-run aborts its running subtask and ends it cancelled', async () => {
    const goal = 'slow plan to cancel';
    planners.set(goal, () => plan({ id: 'slow', intent: 'cancel-slow' }));
    workers.set('cancel-slow', () => ({ content: 'too late', delayMs: 30_000 }));
    const taskId = await submit(stack.bus, { user_id: 'alice', goal });
    const watch = watchTask(stack.bus, taskId, 20_000);
    await watch.next((e) => taskEventData(e, 'started')?.subtask_id === 'slow');
    await eventually(() => stack.llm.inFlight === 1, 10_000, 'one model call in flight');

    const view = await request(stack.bus, contracts.taskCancel, { task_id: taskId, reason: 'enough' });
    expect(view.status).toBe('cancelled');
    await eventually(() => stack.llm.inFlight === 0, 5_000, 'no model call in flight');
    expect(kinds(await watch.done).at(-1)).toBe('cancelled');
    await new Promise((r) => setTimeout(r, 600));
    expect((await request(stack.bus, contracts.taskGet, { task_id: taskId })).status).toBe('cancelled');
  });

  it('two dispatchers, one SIGKILLed mid-task: the task completes once and no subtask runs twice', async () => {
    await stack.startReplica('dispatcher', 'dispatcher-2');
    const goal = 'chain: survive a dispatcher crash';
    planners.set(goal, () =>
      plan({ id: 's1', intent: 'chain-1' }, { id: 's2', intent: 'chain-2', depends_on: ['s1'] }, { id: 's3', intent: 'chain-3', depends_on: ['s2'] }),
    );
    workers.set('chain-1', () => ({ content: 'one', delayMs: 1500 }));
    workers.set('chain-3', (req) => ({ content: lastUserMessageText(req.body).includes('out:chain-2') ? 'chain done' : 'chain broken' }));

    const taskId = await submit(stack.bus, { user_id: 'alice', goal });
    const watch = watchTask(stack.bus, taskId, 60_000);
    await eventually(() => workRequests('chain-1').length === 1, 15_000, 'the first work request of chain-1');
    const dispatchers = await replicasOf(stack, 'dispatcher');
    const holder = dispatchers.find((d) => d.logs.some((l) => l.includes(taskId) && l.includes('job dispatched')));
    expect(holder, 'a dispatcher dispatched the first job').toBeDefined();
    await holder!.kill();

    const events = await watch.done;
    expect(outcomeOf(events)).toEqual({ kind: 'completed', output: 'chain done' });
    expect(kinds(events).filter((k) => k === 'completed')).toHaveLength(1);
    expect(kinds(events).filter((k) => k === 'planned')).toHaveLength(1);
    for (const intent of ['chain-1', 'chain-2', 'chain-3']) expect(workRequests(intent), intent).toHaveLength(1);
    expect(planRequests(goal)).toHaveLength(1);
  }, 90_000);
});
