import { Bus, ReplyError, serve } from '@hermes/bus';
import { DEFAULT_TEAM, contracts, makeTaskEvent, wireError, type TaskEvent, type TaskView, type ToolAuditRecord } from '@hermes/contracts';
import { createLogger } from '@hermes/telemetry';
import { cleanupAll, startNatsServer } from '@hermes/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runHermes } from './cli-runner.js';
import { natsHandles } from '@hermes/bus/internal';

const logger = createLogger({ service: 'cli-test', level: 'silent' });
const TASK = 't_trace_cli_1';
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const T0 = Date.parse('2026-01-01T10:00:00.000Z');
let natsUrl: string;
let bus: Bus;

const at = (ms: number) => new Date(T0 + ms);

const view: TaskView = {
  task_id: TASK,
  user_id: 'alice',
  session_id: TASK,
  goal: 'add numbers',
  status: 'completed',
  created_at: at(0).toISOString(),
  updated_at: at(2500).toISOString(),
  source_event: { source: '/test', id: 'e1' },
  attempts: 2,
  usage: { input_tokens: 120, output_tokens: 30 },
  result: { output: 'The sum is 42.' },
  trace_context: { trace_id: TRACE_ID, traceparent: `00-${TRACE_ID}-00f067aa0ba902b7-01` },
};

function auditRecord(ms: number): ToolAuditRecord {
  return {
    time: at(ms).toISOString(),
    call_id: 'c1',
    idempotency_key: `${TASK}:work:1:0`,
    task_id: TASK,
    subtask_id: 'work',
    step: 1,
    call_index: 0,
    user_id: 'alice',
    roles: ['user'],
    tool: 'everything_get-sum',
    provider: 'mcp:everything',
    arguments: '{"a":19,"b":23}',
    outcome: 'ok',
    duration_ms: 12,
    replayed: false,
    cached: false,
  };
}

async function publishEvent(event: TaskEvent): Promise<void> {
  await bus.publish(contracts.taskEvents, event, { subject: bus.subjects.taskEvents(DEFAULT_TEAM, TASK), msgId: event.id });
}

beforeAll(async () => {
  const nats = await startNatsServer();
  natsUrl = nats.url;
  bus = await Bus.connect({ servers: natsUrl, name: 'cli-trace-test', logger });
  await bus.ensureStreams(['taskEvents']);
  await natsHandles(bus).jsm.streams.add({ name: bus.subjects.streams.toolAudit, subjects: [bus.subjects.toolAuditAll] });
  serve(bus, contracts.taskGet, async (req) => {
    if (req.task_id !== TASK) throw new ReplyError(wireError('not_found', `no task ${req.task_id}`));
    return view;
  });
  // Published out of time order on purpose: the timeline sorts by each entry's own time.
  const d = { task_id: TASK };
  await publishEvent(
    makeTaskEvent('accepted', {
      id: 'a',
      source: 'hermes/dispatcher',
      taskId: TASK,
      time: at(0),
      data: { ...d, user_id: 'alice', session_id: TASK, goal: 'add numbers', source_event: {}, trace_id: TRACE_ID },
    }),
  );
  await publishEvent(
    makeTaskEvent('planned', {
      id: 'p',
      source: 'hermes/dispatcher',
      taskId: TASK,
      time: at(400),
      data: { ...d, subtasks: [{ id: 'work', intent: 'add', depends_on: [] }], replans: 0 },
    }),
  );
  await publishEvent(
    makeTaskEvent('started', { id: 's', source: 'hermes/runtime', taskId: TASK, time: at(500), data: { ...d, subtask_id: 'work', attempt: 1 } }),
  );
  await publishEvent(
    makeTaskEvent('step', {
      id: 'd',
      source: 'hermes/runtime',
      taskId: TASK,
      time: at(600),
      data: { ...d, subtask_id: 'work', step: 1, kind: 'token_delta', detail: { text: 'x' } },
    }),
  );
  await publishEvent(
    makeTaskEvent('step', {
      id: 'l',
      source: 'hermes/runtime',
      taskId: TASK,
      time: at(900),
      data: { ...d, subtask_id: 'work', step: 1, kind: 'llm_call', model: 'm1', usage: { input_tokens: 100, output_tokens: 10 } },
    }),
  );
  await publishEvent(
    makeTaskEvent('completed', {
      id: 'c',
      source: 'hermes/dispatcher',
      taskId: TASK,
      time: at(2500),
      data: { ...d, result: { output: 'The sum is 42.' }, usage: view.usage },
    }),
  );
  await bus.publish(contracts.toolAudit, auditRecord(1200), { subject: bus.subjects.toolAudit(TASK) });
});

afterAll(async () => {
  await bus?.drain();
  await cleanupAll();
});

describe('hermes trace', () => {
  it("prints the task's status, trace id and a timeline of events and tool calls in time order, offsets from the first", async () => {
    const { code, stdout } = await runHermes(natsUrl, ['trace', TASK]);

    expect(code).toBe(0);
    const lines = stdout.split('\n').filter(Boolean);
    expect(lines.slice(0, 3)).toEqual([
      `task ${TASK}: completed in 2.500s`,
      `trace ${TRACE_ID} (search for it in Jaeger, Tempo or any OTLP backend)`,
      'tokens in 120 / out 30',
    ]);
    expect(lines[3]).toMatch(/^OFFSET\s+SOURCE\s+SUBTASK\s+WHAT$/);
    const rows = lines.slice(4).map((l) => l.split(/\s{2,}/));
    expect(rows).toEqual([
      ['+0.000s', 'dispatcher', '-', `accepted session=${TASK} trace=${TRACE_ID}`],
      ['+0.400s', 'dispatcher', '-', 'planned: 1 subtask(s) work'],
      ['+0.500s', 'runtime', 'work', 'started subtask=work attempt=1'],
      ['+0.900s', 'runtime', 'work', 'step llm_call model=m1 tokens=100+10 subtask=work#1'],
      ['+1.200s', 'toolbus', 'work#1', 'tool everything_get-sum ok 12ms'],
      ['+2.500s', 'dispatcher', '-', 'completed: The sum is 42.'],
    ]);
  });

  it('--json prints one entry per line, and --deltas keeps the token deltas', async () => {
    const plain = await runHermes(natsUrl, ['trace', TASK, '--json']);
    const withDeltas = await runHermes(natsUrl, ['trace', TASK, '--json', '--deltas']);

    const entries = plain.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { time: string; source: string; what: string });
    expect(entries).toHaveLength(6);
    expect(entries[4]).toEqual({ time: at(1200).toISOString(), source: 'toolbus', subtask: 'work#1', what: 'tool everything_get-sum ok 12ms' });
    expect(withDeltas.stdout.split('\n').filter(Boolean)).toHaveLength(7);
  });

  it('hermes status shows the trace id too', async () => {
    const { code, stdout } = await runHermes(natsUrl, ['status', TASK]);

    expect(code).toBe(0);
    expect(stdout).toMatch(new RegExp(`^trace\\s+${TRACE_ID}$`, 'm'));
  });

  it('a task with neither state nor events is reported not found', async () => {
    const { code, stderr } = await runHermes(natsUrl, ['trace', 't_no_such_task']);

    expect(code).toBe(1);
    expect(stderr).toContain('task t_no_such_task not found');
  });
});
