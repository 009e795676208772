import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedStack } from './shared-stack.js';
import { ADMIN_KEY, API_KEY, BOB_KEY } from './stack.js';
import { callTools } from './model-script.js';
import { withToolProvider, type ToolStack } from './tool-fixtures.js';
import { openBrowser, WAIT, type ConsoleBrowser } from './console-browser-kit.js';

// The console in a real browser (Debian's Chromium driven by playwright-core) against the real
// services: log in, watch a task submitted over the API complete live with its steps and tool
// audit, approve a require_confirm call from the inbox, not see another user's task or memories,
// forget one memory and then all of a user's from the page, and, as an admin, filter the task list
// by user, see every user's tasks, the MCP servers and the LLM pools. With HERMES_SCREENSHOTS
// set to a folder (scripts/console-screenshots.sh: docs/img), it saves the pages it shows.
const SHOTS = process.env.HERMES_SCREENSHOTS;

let fx: ToolStack;
let browser: ConsoleBrowser;
let page: Page;
/** Bob's task of the second test: the admin's list shows it, alice's never. */
let bobsTask: string;

beforeAll(async () => {
  fx = await withToolProvider(await sharedStack());
  browser = await openBrowser();
  page = browser.page;
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await fx?.stop();
});

async function submitOverHttp(goal: string, key = API_KEY): Promise<string> {
  const res = await fetch(`${fx.stack.gatewayUrl}/v1/tasks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ goal }),
  });
  expect(res.status).toBe(202);
  return ((await res.json()) as { task_id: string }).task_id;
}

async function screenshot(name: string): Promise<void> {
  if (!SHOTS) return;
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

describe('the console in a browser', () => {
  it('logs in with an API key kept in sessionStorage, refusing a wrong one', async () => {
    await page.goto(`${fx.stack.gatewayUrl}/console/`);
    await page.fill('#api-key', 'not-a-key-of-anyone-000000');
    await page.click('#login button[type=submit]');
    await page.waitForSelector('#login-error:has-text("not valid")', WAIT);
    await page.fill('#api-key', API_KEY);
    await page.click('#login button[type=submit]');
    await page.waitForSelector('#task-rows', { state: 'attached', ...WAIT });
    // Evaluated in the page, where sessionStorage is the tab's.
    expect(await page.evaluate("sessionStorage.getItem('hermes.apiKey')")).toBe(API_KEY);
    expect(page.url()).not.toContain(API_KEY);
  }, 60_000);

  it('shows a task submitted over the API in the list, and its steps, plan and result live on its page; never bob’s task', async () => {
    const goal = 'console browser: look something up, then answer';
    // Arguments longer than the timeline shows (300 characters): cut, with "show all".
    const looked = `looked up ${'and found '.repeat(40)}the end`;
    fx.model.on(goal, [callTools({ id: 'b1', name: 'echo', arguments: { text: looked } }), { content: 'The answer is 42.', delayMs: 1500 }]);
    bobsTask = await submitOverHttp('console browser: bob keeps this to himself', BOB_KEY);
    const taskId = await submitOverHttp(goal);

    await page.goto(`${fx.stack.gatewayUrl}/console/#/tasks`);
    await page.waitForSelector(`tr[data-task="${taskId}"]`, WAIT);
    expect(await page.locator(`tr[data-task="${bobsTask}"]`).count()).toBe(0);

    await page.click(`tr[data-task="${taskId}"] a`);
    await page.waitForSelector('#timeline li[data-kind="tool_call"]', WAIT);
    await page.waitForSelector('#result:has-text("The answer is 42.")', WAIT);
    await page.waitForSelector('#task-head [data-status="completed"]', WAIT);
    await page.waitForSelector('#plan [data-subtask] [data-status="succeeded"]', WAIT);
    const kinds = await page.locator('#timeline li').evaluateAll((items) => items.map((li) => li.getAttribute('data-kind')));
    expect(kinds).toEqual(expect.arrayContaining(['accepted', 'llm_call', 'tool_call', 'tool_result', 'completed']));
    const call = page.locator('#timeline li[data-kind="tool_call"]');
    expect(await call.textContent()).not.toContain('the end');
    await call.locator('button:has-text("show all")').click();
    await page.waitForSelector('#timeline li[data-kind="tool_call"]:has-text("the end")', WAIT);
    // The toolbus's audit of the call, read from the audit stream through the gateway.
    await page.waitForSelector('#audit tr[data-tool="echo"][data-outcome="ok"]', WAIT);
    await screenshot('console-task');

    // The task's conversation is in alice's sessions.
    await page.goto(`${fx.stack.gatewayUrl}/console/#/sessions`);
    await page.waitForSelector('#who:has-text("default/alice")', WAIT);
    await page.click(`tr[data-session="${taskId}"] a`);
    await page.waitForSelector('#messages .message[data-role="assistant"]:has-text("The answer is 42.")', WAIT);

    // Bob's task is not found for alice, even by its id.
    await page.goto(`${fx.stack.gatewayUrl}/console/#/tasks/${bobsTask}`);
    await page.waitForSelector('main .error:has-text("not_found")', WAIT);
  }, 90_000);

  it('shows a require_confirm call in the inbox, approves it with a reason from the page, and the task completes', async () => {
    const goal = 'console browser: transfer 50 EUR to ACME once approved';
    fx.model.on(goal, [callTools({ id: 'b2', name: 'confirm_transfer', arguments: { to: 'ACME', amount_cents: 5000 } }), { content: 'Transferred.' }]);
    await page.goto(`${fx.stack.gatewayUrl}/console/#/approvals`);
    const taskId = await submitOverHttp(goal);

    const card = page.locator(`.approval[data-task="${taskId}"]`);
    await card.waitFor(WAIT);
    expect(await card.textContent()).toContain('confirm_transfer');
    expect(await card.textContent()).toContain('ACME');
    await screenshot('console-approvals');
    await card.locator('input.reason').fill('invoice checked');
    await card.locator('button.approve').click();
    await card.waitFor({ state: 'detached', ...WAIT });

    await page.goto(`${fx.stack.gatewayUrl}/console/#/tasks/${taskId}`);
    await page.waitForSelector('#result:has-text("Transferred.")', WAIT);
    const res = await fetch(`${fx.stack.gatewayUrl}/v1/tasks/${taskId}`, { headers: { authorization: `Bearer ${API_KEY}` } });
    expect(await res.json()).toMatchObject({ status: 'completed' });
  }, 90_000);

  it('cancels a running task from its page', async () => {
    const goal = 'console browser: think for a long time';
    // The answer comes after the test ends: the task is running while the page shows it.
    fx.model.on(goal, [{ content: 'Too late.', delayMs: 60_000 }]);
    const taskId = await submitOverHttp(goal);
    await page.goto(`${fx.stack.gatewayUrl}/console/#/tasks/${taskId}`);
    await page.waitForSelector('#timeline li[data-kind="started"]', WAIT);
    await page.click('#cancel');
    await page.waitForSelector('#task-head [data-status="cancelled"]', WAIT);
    expect(await page.locator('#cancel').count()).toBe(0);
    const res = await fetch(`${fx.stack.gatewayUrl}/v1/tasks/${taskId}`, { headers: { authorization: `Bearer ${API_KEY}` } });
    expect(await res.json()).toMatchObject({ status: 'cancelled', error: { code: 'cancelled' } });
  }, 60_000);

  it("lists the viewer's own memories with their provenance, never another user's, forgets one from the page while the others stay, then forgets them all", async () => {
    const facts = {
      alice: 'Alice reads the console every morning',
      aliceToo: 'Alice waters the office plants on Fridays',
      bob: 'Bob keeps his notes to himself',
    };
    for (const [who, fact] of Object.entries(facts)) {
      const goal = `console browser: remember something about ${who}`;
      fx.model.on(goal, [callTools({ id: `m-${who}`, name: 'remember', arguments: { content: fact } }), { content: 'Noted.' }]);
      await submitOverHttp(goal, who === 'bob' ? BOB_KEY : API_KEY);
    }
    // The remember writes are queued: wait until all are stored before looking.
    const memories = async (user: string) => {
      const res = await fetch(`${fx.stack.gatewayUrl}/v1/users/${user}/memory`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
      return ((await res.json()) as { memories: { content: string }[] }).memories.map((m) => m.content);
    };
    await expect.poll(() => memories('alice'), { timeout: 30_000, interval: 200 }).toEqual(expect.arrayContaining([facts.alice, facts.aliceToo]));
    await expect.poll(() => memories('bob'), { timeout: 30_000, interval: 200 }).toContain(facts.bob);

    await page.goto(`${fx.stack.gatewayUrl}/console/#/memory`);
    const card = page.locator(`.memory:has-text("${facts.alice}")`);
    const other = page.locator(`.memory:has-text("${facts.aliceToo}")`);
    await card.waitFor(WAIT);
    await other.waitFor(WAIT);
    // Written by the model's remember call with no untrusted tool result before it.
    expect(await card.locator('.provenance').textContent()).toContain('model');
    expect(await page.locator(`.memory:has-text("${facts.bob}")`).count()).toBe(0);
    expect(await page.locator('#memory-user').getAttribute('readonly')).not.toBeNull();

    // One memory, from its own button: that card goes, the other stays, on the page and in the API.
    await card.locator('button.forget-memory').click();
    await card.waitFor({ state: 'detached', ...WAIT });
    await page.waitForSelector('#forget-outcome:has-text("Forgot memory")', WAIT);
    expect(await other.count()).toBe(1);
    const left = await memories('alice');
    expect(left).not.toContain(facts.alice);
    expect(left).toContain(facts.aliceToo);
    expect(await memories('bob')).toContain(facts.bob);

    await page.click('#forget');
    await page.click('#forget-confirm');
    await page.waitForSelector('#forget-outcome:has-text("sessions")', WAIT);
    await page.waitForSelector('#no-memories', WAIT);
    expect(await memories('alice')).toEqual([]);
    expect(await memories('bob')).toContain(facts.bob);
  }, 90_000);

  it("shows an admin every user's tasks, where each tool runs, the MCP servers of the toolbus and the LLM pools", async () => {
    await page.click('#logout');
    await page.fill('#api-key', ADMIN_KEY);
    await page.click('#login button[type=submit]');
    await page.waitForSelector('#task-rows', { state: 'attached', ...WAIT });
    await page.check('#all-users');
    await page.waitForSelector(`tr[data-task="${bobsTask}"]`, WAIT);
    await page.fill('#user-filter', 'alice');
    await page.dispatchEvent('#user-filter', 'change');
    await page.waitForSelector(`tr[data-task="${bobsTask}"]`, { state: 'detached', ...WAIT });
    // The user filter is the API's (GET /v1/tasks?user=), not a filter of the admin's own page:
    // without "every user's", naming bob still lists bob's task.
    await page.uncheck('#all-users');
    await page.fill('#user-filter', 'bob');
    await page.dispatchEvent('#user-filter', 'change');
    await page.waitForSelector(`tr[data-task="${bobsTask}"]`, WAIT);
    expect(await page.locator('#task-rows tr').evaluateAll((rows) => rows.map((r) => r.children[1]?.textContent))).toEqual(
      expect.not.arrayContaining(['alice', 'ops']),
    );

    // Where each tool runs, and which wait for a person: a built-in, and the fixture provider's require_confirm tool.
    await page.goto(`${fx.stack.gatewayUrl}/console/#/tools`);
    const transfer = page.locator('#table tr:has-text("confirm_transfer")');
    await transfer.waitFor(WAIT);
    expect(await transfer.textContent()).toMatch(/provider e2e-tools.*required/);
    expect(await page.locator('#table tr:has-text("time_now")').textContent()).toContain('builtin');

    // The shared stack's toolbus has no MCP config: the page says so, naming the replica that answered.
    await page.goto(`${fx.stack.gatewayUrl}/console/#/mcp`);
    await page.waitForSelector('#mcp-servers:has-text("No MCP servers on toolbus")', WAIT);
    await page.goto(`${fx.stack.gatewayUrl}/console/#/pools`);
    await page.waitForSelector('#table th:has-text("capacity")', WAIT);
    expect(await page.locator('#table tbody tr').count()).toBeGreaterThan(0);
  }, 60_000);
});
