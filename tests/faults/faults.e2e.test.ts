import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildService } from '@hermes/testkit';
import { startStack, type Stack } from '../e2e/stack.js';
import { Ledger, startToolProvider } from '../e2e/tool-fixtures.js';
import { FaultModel, faultScale, runFault, saveReports, type FaultReport } from './fault-harness.js';

// The toolbus's own test fixture: an SDK-based MCP stdio server whose idempotency check precedes a
// wait, so a copy of a call left running in a dead toolbus's child would write its effect twice.
const ledgerMcpServer = fileURLToPath(new URL('../../services/toolbus/test/fixtures/ledger-mcp-server.mjs', import.meta.url));

/**
 * An operator's bad day, one fault after another on one Hermes: tasks of several side-effecting
 * tool calls (a provider built with @hermes/tool-sdk that appends one line per execution with its
 * idempotency key) run while a process is paused, killed or restarted. Each fault must cost time,
 * never work: every task completes, every step's side effect happens exactly once.
 * `npm run test:faults` runs the size (40 tasks of 5 calls); FAULT_SCALE=ci a smaller one.
 */
const scale = faultScale();
const reports: FaultReport[] = [];
let stack: Stack;
let ledger: Ledger;
let provider: ChildService;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  ledger = new Ledger();
  // Every toolbus also hosts an MCP stdio server with a side-effecting tool writing to the same ledger.
  const mcpConfig = join(dirname(ledger.path), 'mcp.json');
  writeFileSync(
    mcpConfig,
    JSON.stringify({ servers: { books: { transport: 'stdio', command: process.execPath, args: [ledgerMcpServer], env: { LEDGER_FILE: ledger.path } } } }),
  );
  stack = await startStack({
    // A paused runtime loses its jobs after 2 s; a dead toolbus its calls after 1 s; a call without a reply is asked again after 1.5 s.
    runtimeAckWaitMs: 2000,
    serviceEnv: { toolbus: { TOOL_CALL_LEASE_MS: '1000', MCP_CONFIG_FILE: mcpConfig }, runtime: { TOOL_REPLY_WAIT_MS: '1500', RUNTIME_CONCURRENCY: '16' } },
  });
  provider = await startToolProvider({ natsUrl: stack.natsUrl, bus: stack.bus, ledger });
}, 120_000);

afterAll(async () => {
  saveReports(reports);
  console.log(JSON.stringify(reports, null, 1));
  await provider?.stop(3000);
  await stack?.stop();
  ledger?.remove();
});

/** The live replica of a service (`runtime` finds `runtime-1`, ...). */
function replica(kind: string): [string, ChildService] {
  const found = [...stack.services].find(([n]) => n === kind || n.startsWith(`${kind}-`));
  if (!found) throw new Error(`no ${kind} is running`);
  return found;
}

async function kill(kind: string): Promise<void> {
  const [name, svc] = replica(kind);
  await svc.kill();
  stack.services.delete(name);
}

let replicas = 0;
const fresh = (kind: 'runtime' | 'toolbus' | 'memory') => stack.startReplica(kind, `${kind}-f${++replicas}`);

async function fault(
  scenario: string,
  inject: () => Promise<void>,
  opts: { varying?: boolean; tool?: { name: string; args?: Record<string, unknown> } } = {},
): Promise<FaultReport> {
  const model = new FaultModel({ scale, varying: opts.varying ?? false, ...(opts.tool ? { tool: opts.tool } : {}) });
  stack.llm.setResponder((req) => model.answer(req));
  const report = await runFault({ stack, ledger, model, scale, scenario, inject });
  reports.push(report);
  return report;
}

/**
 * `runtimeStopped`: a runtime was paused or killed with LLM calls in flight. Their answers reached
 * a process that could not checkpoint them, so the job's next holder asks those steps once more;
 * what must never happen is a step asked again after the task went past it.
 */
function expectNothingLost(r: FaultReport, o: { runtimeStopped?: boolean } = {}): void {
  expect({ completed: r.completed, failed: r.failed, stuck: r.stuck }).toEqual({ completed: r.tasks, failed: [], stuck: 0 });
  expect(r.duplicate_keys).toBe(0);
  expect(r.wrong_effect_counts).toBe(0);
  // An LLM answer that reached a live runtime is checkpointed through the fault, never asked for again.
  expect(r.reasked_after_checkpoint).toBe(0);
  if (!o.runtimeStopped) expect(r.reasked_steps).toBe(0);
  // A tool error is a step the model gave up on: none of these faults may cause one.
  expect(r.tool_errors).toEqual({});
}

// Generous: a fault, its recovery and every task's end on a loaded 2-core machine.
describe(`faults under load (${scale.tasks} tasks of ${scale.callsPerTask} side-effecting calls)`, { timeout: 240_000 }, () => {
  it('the only runtime paused (SIGSTOP) 8 s, past its ack wait, with a model that varies its arguments', async () => {
    const [, runtime] = replica('runtime');
    expectNothingLost(
      await fault(
        'runtime paused 8 s',
        async () => {
          await runtime.pause();
          await sleep(8000);
          runtime.resume();
        },
        { varying: true },
      ),
    );
  });

  it('runtime-1 paused while a second runtime takes its jobs over, then the second killed, then runtime-1 resumed', async () => {
    const [, first] = replica('runtime');
    const second = await fresh('runtime');
    expectNothingLost(
      await fault(
        'runtime paused, other killed',
        async () => {
          await first.pause();
          await sleep(4000);
          await second.kill();
          stack.services.delete(second.name);
          await sleep(2000);
          first.resume();
        },
        { varying: true },
      ),
      { runtimeStopped: true },
    );
  });

  it('nats-server killed and restarted on the same store after 2 s, with a model that varies its arguments', async () => {
    expectNothingLost(
      await fault(
        'nats-server restart',
        async () => {
          await stack.nats!.kill();
          await sleep(2000);
          await stack.nats!.restart();
        },
        { varying: true },
      ),
    );
  });

  it('the only toolbus killed mid-call and started again after 2 s', async () => {
    expectNothingLost(
      await fault('toolbus killed', async () => {
        await kill('toolbus');
        await sleep(2000);
        await fresh('toolbus');
      }),
    );
  });

  it('a rolling toolbus upgrade: SIGTERM, then a new one', async () => {
    expectNothingLost(
      await fault('toolbus SIGTERM', async () => {
        const [name, toolbus] = replica('toolbus');
        await toolbus.stop(10_000);
        stack.services.delete(name);
        await fresh('toolbus');
      }),
    );
  });

  it('one of two toolbuses killed mid-call', async () => {
    await fresh('toolbus');
    expectNothingLost(await fault('one of two toolbuses killed', () => kill('toolbus')));
  });

  it('one of two toolbuses killed mid-call, with a side-effecting MCP stdio tool', async () => {
    const [, first] = replica('toolbus');
    const second = await fresh('toolbus');
    // Generous: each replica starts its own MCP server, slow on a loaded 2-core machine.
    await Promise.all([first, second].map((t) => t.waitForLog(/MCP server ready/, 30_000)));
    // Each call is in its server's hands 300 ms: the kill finds calls there, whose child must die with it.
    const tool = { name: 'books_ledger_append', args: { delay_ms: 300 } };
    expectNothingLost(await fault('one of two toolbuses killed, MCP stdio tool', () => kill('toolbus'), { tool }));
  });

  it('the memory service killed and back after 3 s', async () => {
    expectNothingLost(
      await fault('memory killed', async () => {
        await kill('memory');
        await sleep(3000);
        await fresh('memory');
      }),
    );
  });

  it('redis-server killed and restarted without persistence', async () => {
    expectNothingLost(
      await fault('redis restarted empty', async () => {
        await stack.redis!.kill();
        await sleep(1000);
        await stack.redis!.restart();
      }),
    );
  });
});
