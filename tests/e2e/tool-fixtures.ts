import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { followSubject, request, type Bus } from '@hermes/bus';
import { contracts, type ToolAuditRecord } from '@hermes/contracts';
import { eventually, startChildService, type ChildService } from '@hermes/testkit';
import { natsHandles } from '@hermes/bus/internal';
import { ModelScript } from './model-script.js';
import type { SharedStack } from './shared-stack.js';

const providerEntry = fileURLToPath(new URL('./fixtures/tool-provider.mjs', import.meta.url));
const cliEntry = fileURLToPath(new URL('../../tools/cli/dist/main.js', import.meta.url));

/** One side effect of a fixture tool, as the provider appended it to the ledger file. */
export interface LedgerLine {
  tool: string;
  key: string;
  task_id: string;
  user_id: string;
  [field: string]: unknown;
}

/** The ledger file the fixture provider appends side effects to: one line per handler run. */
export class Ledger {
  private readonly dir = mkdtempSync(join(tmpdir(), 'hermes-e2e-ledger-'));
  readonly path = join(this.dir, 'ledger.jsonl');

  lines(taskId?: string): LedgerLine[] {
    if (!existsSync(this.path)) return [];
    // The provider appends a line per run while we read: a last line without its newline is still
    // being written, not a side effect yet (parsing it failed a fault run with "Unexpected end of JSON").
    const text = readFileSync(this.path, 'utf8');
    const all = text
      .slice(0, text.lastIndexOf('\n') + 1)
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as LedgerLine);
    return taskId === undefined ? all : all.filter((l) => l.task_id === taskId);
  }

  /** How many times each idempotency key was written (for a task). */
  countByKey(taskId?: string): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const l of this.lines(taskId)) counts[l.key] = (counts[l.key] ?? 0) + 1;
    return counts;
  }

  /** A gate for `ledger_append`'s `hold_until_file`: the handler waits until `open()` is called. */
  gate(name: string): { path: string; open(): void } {
    const path = join(this.dir, `${name}.gate`);
    return { path, open: () => writeFileSync(path, '') };
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The tools a caller with these roles is offered right now. */
export async function listedTools(bus: Bus, roles: string[] = ['user', 'finance']): Promise<string[]> {
  const reply = await request(bus, contracts.toolsList, { user_id: 'e2e-probe', roles });
  return reply.tools.map((t) => t.name);
}

/** Waits until every name in `present` is listed and none in `absent` is. */
export async function waitForToolList(bus: Bus, o: { present?: string[]; absent?: string[] }, timeoutMs = 10_000): Promise<void> {
  let names: string[] = [];
  await eventually(
    async () => {
      names = await listedTools(bus).catch(() => []);
      return (o.present ?? []).every((n) => names.includes(n)) && !(o.absent ?? []).some((n) => names.includes(n));
    },
    timeoutMs,
    () => `a tool list as ${JSON.stringify(o)}; the toolbus lists ${names.join(', ') || 'nothing'}`,
  );
}

export const FIXTURE_TOOLS = ['ledger_append', 'slow_op', 'restricted_op', 'confirm_transfer', 'lookup'] as const;

/**
 * Starts the fixture tool provider (tests/e2e/fixtures/tool-provider.mjs) as its own process and
 * waits until the toolbus lists its tools.
 */
export async function startToolProvider(o: {
  natsUrl: string;
  bus: Bus;
  ledger: Ledger;
  name?: string;
  tools?: readonly string[];
  ttlMs?: number;
}): Promise<ChildService> {
  const tools = o.tools ?? FIXTURE_TOOLS;
  const provider = await startChildService({
    name: o.name ?? 'e2e-tools',
    entry: providerEntry,
    env: {
      NATS_URL: o.natsUrl,
      PROVIDER_NAME: o.name ?? 'e2e-tools',
      PROVIDER_TOOLS: tools.join(','),
      LEDGER_FILE: o.ledger.path,
      ...(o.ttlMs ? { PROVIDER_TTL_MS: String(o.ttlMs) } : {}),
    },
  });
  await provider.waitForLog(/fixture provider ready/, 15_000);
  await waitForToolList(o.bus, { present: [...tools] });
  return provider;
}

/** The audit records of a task, in order; waits until there are at least `atLeast` (they are written asynchronously). */
export async function auditRecords(bus: Bus, taskId: string, atLeast = 1, timeoutMs = 5000): Promise<ToolAuditRecord[]> {
  let seen = 0;
  return eventually(
    async () => {
      const records = await readAudit(bus, taskId);
      seen = records.length;
      return records.length >= atLeast && records;
    },
    timeoutMs,
    () => `${atLeast} audit records of task ${taskId}; it has ${seen}`,
  );
}

async function readAudit(bus: Bus, taskId: string): Promise<ToolAuditRecord[]> {
  const stream = bus.subjects.streams.toolAudit;
  const subject = bus.subjects.toolAudit(taskId);
  const last = await natsHandles(bus)
    .jsm.streams.getMessage(stream, { last_by_subj: subject })
    .catch(() => null);
  if (!last) return [];
  const records: ToolAuditRecord[] = [];
  for await (const m of followSubject(bus, { stream, subject, signal: AbortSignal.timeout(5000) })) {
    records.push(m.value as ToolAuditRecord);
    if (m.seq >= last.seq) break;
  }
  return records;
}

/** Runs the built `hermes` CLI against the stack's NATS. */
export async function hermesCli(natsUrl: string, args: string[]): Promise<{ stdout: string; stderr: string }> {
  const run = promisify(execFile);
  return run(process.execPath, [cliEntry, ...args], { env: { ...process.env, NATS_URL: natsUrl }, timeout: 15_000 });
}

/** A stack with the fixture provider, a model script and a ledger, given back together by `stop`. */
export interface ToolStack {
  readonly stack: SharedStack;
  readonly model: ModelScript;
  readonly ledger: Ledger;
  stop(): Promise<void>;
}

/** Starts the fixture provider (all its stock tools, or `tools` under the provider name `name`) on a stack (shared or a file's own) and scripts its model. */
export async function withToolProvider(stack: SharedStack, opts: { name?: string; tools?: readonly string[] } = {}): Promise<ToolStack> {
  const ledger = new Ledger();
  const provider = await startToolProvider({ natsUrl: stack.natsUrl, bus: stack.bus, ledger, ...opts });
  return {
    stack,
    model: new ModelScript(stack.llm),
    ledger,
    async stop() {
      await provider.stop(3000);
      await stack.stop();
      ledger.remove();
    },
  };
}
