import { Bus, ReplyError, serve } from '@hermes/bus';
import { contracts, wireError, type ApprovalDecision, type ToolAuditRecord } from '@hermes/contracts';
import { createLogger } from '@hermes/telemetry';
import { cleanupAll, startNatsServer } from '@hermes/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/index.js';
import { captureOutput } from './cli-runner.js';
import { natsHandles } from '@hermes/bus/internal';

const logger = createLogger({ service: 'cli-test', level: 'silent' });
let natsUrl: string;
let bus: Bus;
const decisions: ApprovalDecision[] = [];
/** Calls the stand-in toolbus holds for approval, as `task_id/call_id`. */
const parked = new Set<string>();

beforeAll(async () => {
  const nats = await startNatsServer();
  natsUrl = nats.url;
  bus = await Bus.connect({ servers: natsUrl, name: 'cli-tool-test', logger });
  // The toolbus declares this stream in a deployment; here the test does.
  await natsHandles(bus).jsm.streams.add({ name: bus.subjects.streams.toolAudit, subjects: [`${bus.subjects.prefix}.toolbus.audit.>`] });
  serve(bus, contracts.toolApprovalDecide, async (req) => {
    decisions.push(req);
    if (!parked.delete(`${req.task_id}/${req.call_id}`)) throw new ReplyError(wireError('not_found', `no call ${req.call_id} is waiting`));
    return { call_id: req.call_id, status: req.decision === 'approve' ? ('approved' as const) : ('denied' as const) };
  });
});

afterAll(async () => {
  await bus?.drain();
  await cleanupAll();
});

async function hermes(argv: string[], env: NodeJS.ProcessEnv = { HERMES_USER: 'carol' }) {
  const stdout = captureOutput();
  const stderr = captureOutput();
  const code = await runCli(argv, { stdout: stdout.stream, stderr: stderr.stream, env: { NATS_URL: natsUrl, ...env } });
  return { code, stdout, stderr };
}

describe('hermes approve', () => {
  it('approves a parked call, deciding as HERMES_USER', async () => {
    parked.add('t_cli_1/c1');
    const { code, stdout } = await hermes(['approve', 't_cli_1', 'c1']);
    expect(code).toBe(0);
    expect(stdout.lines()).toEqual(['approved call c1 of task t_cli_1']);
    expect(decisions.filter((d) => d.call_id === 'c1')).toEqual([{ task_id: 't_cli_1', call_id: 'c1', decision: 'approve', decided_by: 'carol' }]);
  });

  it('denies with --deny and --reason, deciding as --user', async () => {
    parked.add('t_cli_1/c2');
    const { code, stdout } = await hermes(['approve', 't_cli_1', 'c2', '--deny', '--reason', 'not this account', '--user', 'dave', '--json']);
    expect(code).toBe(0);
    expect(JSON.parse(stdout.text())).toEqual({ call_id: 'c2', status: 'denied' });
    expect(decisions.filter((d) => d.call_id === 'c2')).toEqual([
      { task_id: 't_cli_1', call_id: 'c2', decision: 'deny', decided_by: 'dave', reason: 'not this account' },
    ]);
  });

  it('exits 1 naming the call when nothing waits for approval', async () => {
    const { code, stderr } = await hermes(['approve', 't_cli_1', 'c-none']);
    expect(code).toBe(1);
    expect(stderr.text()).toContain('no call c-none of task t_cli_1 waits for approval');
  });

  it('exits 2 when nobody is named as the decider, without asking the toolbus', async () => {
    const before = decisions.length;
    const { code, stderr } = await hermes(['approve', 't_cli_1', 'c3'], {});
    expect(code).toBe(2);
    expect(stderr.text()).toContain('--user <id> or HERMES_USER');
    expect(decisions.length).toBe(before);
    expect((await hermes(['approve', 't_cli_1'])).code).toBe(2);
  });
});

describe('hermes audit', () => {
  let n = 0;
  function record(taskId: string, overrides: Partial<ToolAuditRecord> = {}): ToolAuditRecord {
    n++;
    return {
      time: new Date(Date.UTC(2025, 0, 1, 12, 0, n)).toISOString(),
      call_id: `call-${n}`,
      idempotency_key: `${taskId}:st1:1:${n}`,
      task_id: taskId,
      subtask_id: 'st1',
      step: 1,
      call_index: n,
      user_id: 'alice',
      roles: ['user'],
      tool: 'time_now',
      arguments: '{}',
      outcome: 'ok',
      duration_ms: 12.4,
      replayed: false,
      cached: false,
      ...overrides,
    };
  }
  const publish = (r: ToolAuditRecord) => bus.publish(contracts.toolAudit, r, { subject: bus.subjects.toolAudit(r.task_id) });

  it("prints one line per call of the task, in order, and stops at the task's last record", async () => {
    const records = [
      record('t_audit_1'),
      record('t_audit_1', { tool: 'send_email', outcome: 'pending_approval', duration_ms: 3 }),
      record('t_audit_1', { tool: 'send_email', outcome: 'denied', decided_by: 'ops', error_code: 'approval_denied', duration_ms: 0 }),
      record('t_audit_1', { tool: 'http_get', outcome: 'error', error_code: 'tool_timeout', duration_ms: 30000.2 }),
      record('t_audit_1', { replayed: true, cached: true, duration_ms: 0.4 }),
    ];
    for (const r of records) {
      await publish(r);
      await publish(record('t_audit_other'));
    }
    const started = Date.now();
    const { code, stdout } = await hermes(['audit', 't_audit_1']);
    expect(code).toBe(0);
    expect(Date.now() - started).toBeLessThan(1500);
    const [header, ...lines] = stdout.lines().map((l) => l.split(/ {2,}/));
    expect(header).toEqual(['TIME', 'TOOL', 'OUTCOME', 'DURATION', 'FLAGS', 'ERROR']);
    expect(lines).toEqual([
      [records[0]!.time, 'time_now', 'ok', '12ms', '-', '-'],
      [records[1]!.time, 'send_email', 'pending_approval', '3ms', '-', '-'],
      [records[2]!.time, 'send_email', 'denied', '0ms', '-', 'approval_denied', 'by ops'],
      [records[3]!.time, 'http_get', 'error', '30000ms', '-', 'tool_timeout'],
      [records[4]!.time, 'time_now', 'ok', '0ms', 'replayed,cached', '-'],
    ]);
  });

  it('prints each record as a JSON line with --json', async () => {
    const records = [record('t_audit_2'), record('t_audit_2', { outcome: 'error', error_code: 'invalid_arguments' })];
    for (const r of records) await publish(r);
    const { code, stdout } = await hermes(['audit', 't_audit_2', '--json']);
    expect(code).toBe(0);
    expect(stdout.lines().map((l) => JSON.parse(l) as unknown)).toEqual(records);
  });

  it('says so when the task has no tool calls', async () => {
    const { code, stdout, stderr } = await hermes(['audit', 't_audit_none']);
    expect(code).toBe(0);
    expect(stdout.text()).toBe('');
    expect(stderr.text()).toContain('no tool calls recorded for task t_audit_none');
  });

  it('exits 1 when there is no audit stream on this NATS', async () => {
    const { code, stderr } = await hermes(['audit', 't_audit_1'], { HERMES_SUBJECT_PREFIX: 'elsewhere' });
    expect(code).toBe(1);
    expect(stderr.text()).toContain('no audit stream ELSEWHERE_TOOL_AUDIT');
  });
});

describe('usage', () => {
  it('lists approve and audit', async () => {
    const { stdout } = await hermes(['--help']);
    expect(stdout.text()).toMatch(/^ {2}approve <task-id> <call-id> /m);
    expect(stdout.text()).toMatch(/^ {2}audit <task-id> /m);
    const help = await hermes(['approve', '--help']);
    expect(help.stdout.text()).toContain('--reason <text>');
  });
});
