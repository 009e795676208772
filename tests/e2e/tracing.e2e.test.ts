import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TEAM, contracts, taskEventData, TASK_SUBMIT_TYPE, taskIdFor, type TaskEvent } from '@hermes/contracts';
import { encodeJson, request } from '@hermes/bus';
import { eventually, freePort, type RecordedRequest, type ScriptedResponse } from '@hermes/testkit';
import { API_KEY, startStack, type Stack } from './stack.js';
import { goalOf } from './model-script.js';
import { collectTaskEvents } from './events.js';
import { outcomeOf } from './tasks.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './otlp-receiver.js';
import { natsHandles } from '@hermes/bus/internal';

// All five services export spans over OTLP/HTTP to a receiver this test runs; one planned task with
// a built-in tool call and an MCP tool call must come out as one connected trace.
const everythingBin = fileURLToPath(new URL('../../node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url));
const PLANNER = 'scripted-planner';
const SERVICES = ['hermes-gateway', 'hermes-dispatcher', 'hermes-runtime', 'hermes-toolbus', 'hermes-memory'];
const CONTENT_KEYS = [
  'gen_ai.input.messages',
  'gen_ai.output.messages',
  'gen_ai.system_instructions',
  'gen_ai.tool.definitions',
  'gen_ai.tool.call.arguments',
  'gen_ai.tool.call.result',
];

let stack: Stack;
let otlp: OtlpReceiver;
let dir: string;
const metricsPorts: Record<'dispatcher' | 'runtime' | 'toolbus', number> = { dispatcher: 0, runtime: 0, toolbus: 0 };
const workerTurns = new Map<string, number>();

/** The planner makes one subtask of each goal; its worker calls echo, then the MCP server's get-sum, then answers. */
function respond(req: RecordedRequest): ScriptedResponse {
  if (req.body.model === PLANNER) {
    const system = req.body.messages?.find((m) => m.role === 'system');
    const goal = /^Goal to plan: (.*)$/m.exec(typeof system?.content === 'string' ? system.content : '')?.[1] ?? 'unknown';
    return { content: JSON.stringify({ subtasks: [{ id: 'work', intent: `${goal} (work)`, depends_on: [] }] }) };
  }
  const intent = goalOf(req.body);
  if (!intent) return { content: '[]' }; // other model users (e.g. memory extraction)
  const n = workerTurns.get(intent) ?? 0;
  workerTurns.set(intent, n + 1);
  if (n === 0) return { toolCalls: [{ id: 'call-echo', name: 'echo', arguments: { text: 'ping' } }] };
  if (n === 1) return { toolCalls: [{ id: 'call-sum', name: 'everything_get-sum', arguments: { a: 19, b: 23 } }] };
  return { content: 'The sum is 42.' };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hermes-tracing-e2e-'));
  const mcpConfig = join(dir, 'mcp.json');
  writeFileSync(
    mcpConfig,
    JSON.stringify({ servers: { everything: { transport: 'stdio', command: process.execPath, args: [everythingBin, 'stdio'], enabled_tools: ['get-sum'] } } }),
  );
  otlp = await startOtlpReceiver();
  for (const k of Object.keys(metricsPorts) as (keyof typeof metricsPorts)[]) metricsPorts[k] = await freePort();
  stack = await startStack({
    env: {
      PLAN_MODE: 'auto',
      HERMES_MODEL_PLANNER: PLANNER,
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_BSP_SCHEDULE_DELAY: '100',
      OTEL_METRIC_EXPORT_INTERVAL: '1000',
      MEMORY_DATA_DIR: join(dir, 'memory'),
    },
    serviceEnv: {
      dispatcher: { METRICS_PORT: String(metricsPorts.dispatcher) },
      runtime: { METRICS_PORT: String(metricsPorts.runtime) },
      toolbus: { METRICS_PORT: String(metricsPorts.toolbus), MCP_CONFIG_FILE: mcpConfig },
    },
  });
  stack.llm.setResponder(respond);
  await mcpReady();
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await otlp?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Waits until a toolbus offers the MCP server's tool (servers connect in the background). */
async function mcpReady(): Promise<void> {
  await eventually(
    async () =>
      (await request(stack.bus, contracts.mcpStatus, {}).catch(() => undefined))?.servers.some(
        (s) => s.state === 'ready' && s.tools.includes('everything_get-sum'),
      ),
    20_000,
    'the MCP server to be ready',
  );
}

async function submitHttp(goal: string, headers: Record<string, string> = {}): Promise<string> {
  const res = await fetch(`${stack.gatewayUrl}/v1/tasks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ goal }),
  });
  expect(res.status).toBe(202);
  return ((await res.json()) as { task_id: string }).task_id;
}

const traceIdOf = (events: TaskEvent[]) => taskEventData(events[0]!, 'accepted')?.trace_id;

/** Spans of a trace whose parents are not in the set (the roots, or spans of an unexported parent). */
const orphans = (spans: ReceivedSpan[]) => {
  const ids = new Set(spans.map((s) => s.spanId));
  return spans.filter((s) => !s.parentSpanId || !ids.has(s.parentSpanId));
};

/**
 * Waits for a task's trace to be complete: spans from every service, and every span's parent
 * received except the expected roots (parents end after their children, so they come later).
 */
async function traceOf(traceId: string, opts: { roots?: number; wants?: (spans: ReceivedSpan[]) => boolean } = {}): Promise<ReceivedSpan[]> {
  let spans: ReceivedSpan[] = [];
  // The caller asserts on what arrived, so a trace still incomplete after the wait is returned as it is.
  await eventually(() => {
    spans = otlp.spans.filter((s) => s.traceId === traceId);
    const services = new Set(spans.map((s) => s.service));
    return SERVICES.every((s) => services.has(s)) && orphans(spans).length === (opts.roots ?? 1) && (opts.wants?.(spans) ?? true);
  }, 20_000).catch(() => undefined);
  return spans;
}

const named = (spans: ReceivedSpan[], name: string, service?: string) => spans.filter((s) => s.name === name && (!service || s.service === service));
const byId = (spans: ReceivedSpan[]) => new Map(spans.map((s) => [s.spanId, s]));

/** Whether `span` descends from a span matching `ancestor`. */
function descendsFrom(spans: ReceivedSpan[], span: ReceivedSpan, ancestor: (s: ReceivedSpan) => boolean): boolean {
  const index = byId(spans);
  for (let p = span.parentSpanId ? index.get(span.parentSpanId) : undefined; p; p = p.parentSpanId ? index.get(p.parentSpanId) : undefined) {
    if (ancestor(p)) return true;
  }
  return false;
}

/** Service pairs (parent's service → child's service) where a span's parent lives in another service. */
function boundaries(spans: ReceivedSpan[]): Set<string> {
  const index = byId(spans);
  const out = new Set<string>();
  for (const s of spans) {
    const parent = s.parentSpanId ? index.get(s.parentSpanId) : undefined;
    if (parent && parent.service !== s.service) out.add(`${parent.service.replace('hermes-', '')}->${s.service.replace('hermes-', '')}`);
  }
  return out;
}

/** A service's JSON log lines that name the task. */
function taskLogLines(service: string, taskId: string): Record<string, unknown>[] {
  return stack.services
    .get(service)!
    .logs.filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.task_id === taskId);
}

const hasContent = (s: ReceivedSpan) => CONTENT_KEYS.some((k) => k in s.attributes);
const plannedTools = (spans: ReceivedSpan[]) =>
  named(spans, 'execute_tool everything_get-sum', 'hermes-toolbus').length > 0 && named(spans, 'execute_tool echo', 'hermes-toolbus').length > 0;

describe('one trace per task across every service', () => {
  it('a planned task with a built-in and an MCP tool call is one connected trace with GenAI spans, no content by default', async () => {
    const goal = `trace a planned task ${randomUUID().slice(0, 8)}`;
    const taskId = await submitHttp(goal);
    const events = await collectTaskEvents(stack.bus, taskId, 30_000);
    expect(outcomeOf(events)).toMatchObject({ kind: 'completed', output: 'The sum is 42.' });

    // The trace id is in the accepted event and in the task record.
    const traceId = traceIdOf(events);
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    const view = await request(stack.bus, contracts.taskGet, { task_id: taskId });
    expect(view.trace_context?.trace_id).toBe(traceId);

    // "task ended" is the dispatcher's last line for the task; the span it was logged in is exported
    // after the line is written, so the trace is complete only once every logged span has arrived.
    await eventually(() => taskLogLines('dispatcher', taskId).some((l) => l.msg === 'task ended'), 20_000, 'the dispatcher to log "task ended"');
    const loggedSpans = () => ['dispatcher', 'runtime-1'].flatMap((n) => taskLogLines(n, taskId).map((l) => l.span_id as string));
    const spans = await traceOf(traceId!, { wants: (s) => plannedTools(s) && loggedSpans().every((id) => s.some((x) => x.spanId === id)) });
    expect(otlp.contentTypes).toContain('application/json');
    // Every service contributes, and the only span without its parent in the set is the HTTP request.
    expect(new Set(spans.map((s) => s.service))).toEqual(new Set(SERVICES));
    expect(orphans(spans).map((s) => `${s.service} ${s.name}`)).toEqual(['hermes-gateway POST /v1/tasks']);
    expect(orphans(spans)[0]!.parentSpanId).toBeUndefined();
    expect(orphans(spans)[0]!.attributes).toMatchObject({ 'hermes.task.id': taskId, 'enduser.id': 'alice' });
    // No span that names this task lives in another trace.
    expect(otlp.spans.filter((s) => s.attributes['hermes.task.id'] === taskId && s.traceId !== traceId)).toEqual([]);
    // Parent and child across every service boundary the task crosses.
    expect([...boundaries(spans)]).toEqual(
      expect.arrayContaining(['gateway->dispatcher', 'dispatcher->runtime', 'runtime->toolbus', 'runtime->memory', 'runtime->dispatcher']),
    );

    // invoke_agent for the plan job and for the subtask's loop, each around its chat spans.
    const agents = named(spans, 'invoke_agent planner').concat(named(spans, 'invoke_agent worker'));
    expect(agents.map((a) => a.attributes['hermes.job.kind']).sort()).toEqual(['agent', 'plan']);
    // The scripted model is in no pool with a provider: a generic OpenAI-compatible server (docs/llm.md).
    for (const a of agents)
      expect(a.attributes).toMatchObject({
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.provider.name': 'openai_compatible',
        'gen_ai.conversation.id': taskId,
        'hermes.task.id': taskId,
      });
    // The runtime's model calls (the memory service may call a model for itself later, in the same trace).
    const chats = spans.filter((s) => s.name.startsWith('chat ') && s.service === 'hermes-runtime');
    expect(chats.map((c) => c.name).sort()).toEqual(['chat scripted-demo', 'chat scripted-demo', 'chat scripted-demo', `chat ${PLANNER}`]);
    for (const c of chats) {
      expect(c.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai_compatible',
        'gen_ai.request.model': expect.any(String),
        'gen_ai.response.model': expect.any(String),
        'gen_ai.usage.input_tokens': expect.any(Number),
        'gen_ai.usage.output_tokens': expect.any(Number),
        'gen_ai.response.finish_reasons': [expect.any(String)],
        'gen_ai.conversation.id': taskId,
      });
      expect(descendsFrom(spans, c, (p) => p.name.startsWith('invoke_agent '))).toBe(true);
    }
    expect(chats.flatMap((c) => c.attributes['gen_ai.response.finish_reasons'] as string[])).toEqual(expect.arrayContaining(['tool_calls', 'stop']));
    // The semaphore wait and the memory recall are spans of their own.
    expect(spans.some((s) => s.name === 'llm.permit.wait' && descendsFrom(spans, s, (p) => p.name.startsWith('chat ')))).toBe(true);
    expect(named(spans, 'memory context', 'hermes-runtime')).toHaveLength(1);
    const [recall] = named(spans, 'memory recall', 'hermes-runtime');
    expect(spans.some((s) => s.service === 'hermes-memory' && descendsFrom(spans, s, (p) => p.spanId === recall?.spanId))).toBe(true);
    // Inside it, the memory service's embedding and vector search each have a span.
    for (const op of ['memory.embed', 'memory.search']) {
      const inRecall = named(spans, op, 'hermes-memory').filter((s) => descendsFrom(spans, s, (p) => p.spanId === recall?.spanId));
      expect(inRecall.map((s) => s.attributes['hermes.memory.operation'])).toEqual([op.slice('memory.'.length)]);
    }

    // execute_tool in the runtime, and the toolbus's execute_tool as its descendant across the bus.
    for (const [tool, callId, provider] of [
      ['echo', 'call-echo', 'builtin'],
      ['everything_get-sum', 'call-sum', 'mcp:everything'],
    ] as const) {
      const [client] = named(spans, `execute_tool ${tool}`, 'hermes-runtime');
      const [server] = named(spans, `execute_tool ${tool}`, 'hermes-toolbus');
      expect(client?.attributes).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': tool, 'gen_ai.tool.call.id': callId });
      expect(server?.attributes).toMatchObject({
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': tool,
        'gen_ai.tool.call.id': callId,
        'hermes.tool.provider': provider,
      });
      expect(descendsFrom(spans, server!, (p) => p.spanId === client!.spanId)).toBe(true);
      expect(client!.attributes['error.type']).toBeUndefined();
    }
    // Messaging spans where work crosses the bus.
    // The plan job on the main queue; the subtasks, work of a task already running, on the ahead queue.
    expect(named(spans, 'publish runtimeJobs', 'hermes-dispatcher').length).toBeGreaterThanOrEqual(1);
    expect(named(spans, 'publish runtimeJobsAhead', 'hermes-dispatcher').length).toBeGreaterThanOrEqual(1);
    expect(named(spans, 'publish runtimeResults', 'hermes-runtime').length).toBeGreaterThanOrEqual(2);
    expect(spans.find((s) => s.name === 'publish runtimeJobs')?.attributes).toMatchObject({ 'messaging.system': 'nats', 'messaging.operation.type': 'send' });

    // Content is absent unless opted in.
    expect(spans.filter(hasContent).map((s) => s.name)).toEqual([]);

    // Every log line a service wrote about the task names its trace, span, task and user, and none holds the goal's content.
    const spanIds = new Set(spans.map((s) => s.spanId));
    for (const name of ['dispatcher', 'runtime-1']) {
      const lines = taskLogLines(name, taskId);
      expect(lines.length, `${name} log lines for the task`).toBeGreaterThan(0);
      for (const line of lines) {
        expect(line).toMatchObject({ trace_id: traceId, user_id: 'alice', task_id: taskId });
        expect(spanIds.has(line.span_id as string), `${name}: "${String(line.msg)}" logged in an exported span`).toBe(true);
      }
    }
    for (const svc of stack.services.values()) expect(svc.logs.filter((l) => l.includes(goal))).toEqual([]);
  }, 60_000);

  it('a task submitted over HTTP with a traceparent joins the submitter trace', async () => {
    const traceId = randomUUID().replace(/-/g, '');
    const parentSpanId = randomUUID().replace(/-/g, '').slice(0, 16);
    const taskId = await submitHttp(`trace a joined task ${randomUUID().slice(0, 8)}`, { traceparent: `00-${traceId}-${parentSpanId}-01` });
    const events = await collectTaskEvents(stack.bus, taskId, 30_000);
    expect(outcomeOf(events).kind).toBe('completed');
    expect(traceIdOf(events)).toBe(traceId);

    const spans = await traceOf(traceId, { wants: plannedTools });
    expect(new Set(spans.map((s) => s.service))).toEqual(new Set(SERVICES));
    // The gateway's request span is the child of the submitter's span; every other span's parent is in the trace.
    expect(orphans(spans).map((s) => [s.name, s.parentSpanId])).toEqual([['POST /v1/tasks', parentSpanId]]);
  }, 60_000);

  it('a CloudEvent published on the bus with only the traceparent extension joins that trace', async () => {
    const traceId = randomUUID().replace(/-/g, '');
    const parentSpanId = randomUUID().replace(/-/g, '').slice(0, 16);
    const id = randomUUID();
    const source = '/e2e/tracing';
    const taskId = taskIdFor(DEFAULT_TEAM, source, id);
    const event = {
      specversion: '1.0',
      type: TASK_SUBMIT_TYPE,
      source,
      id,
      datacontenttype: 'application/json',
      traceparent: `00-${traceId}-${parentSpanId}-01`,
      data: { user_id: 'alice', goal: `trace a bus task ${id.slice(0, 8)}` },
    };
    // Published raw: no trace headers, so only the CloudEvent names the trace.
    await natsHandles(stack.bus).js.publish(stack.bus.subjects.taskSubmit(DEFAULT_TEAM), encodeJson(event), { msgID: taskId });
    const events = await collectTaskEvents(stack.bus, taskId, 30_000);
    expect(outcomeOf(events).kind).toBe('completed');
    expect(traceIdOf(events)).toBe(traceId);

    // No gateway here: the dispatcher's accept span is the child of the submitter's span.
    let spans: ReceivedSpan[] = [];
    await eventually(() => {
      spans = otlp.spans.filter((s) => s.traceId === traceId);
      // Each service exports in batches of its own: the memory service's spans may come last.
      return orphans(spans).length === 1 && plannedTools(spans) && spans.some((s) => s.service === 'hermes-memory');
    }, 20_000).catch(() => undefined);
    expect(orphans(spans).map((s) => [s.service, s.name, s.parentSpanId])).toEqual([['hermes-dispatcher', 'accept task', parentSpanId]]);
    // The delivery's own span (a trace of its own, there being no header) is linked from the accept span.
    const accept = orphans(spans)[0]!;
    expect(accept.links).toHaveLength(1);
    expect(otlp.spans.find((s) => s.spanId === accept.links[0]!.spanId)?.name).toMatch(/^process /);
    expect(new Set(spans.map((s) => s.service))).toEqual(new Set(['hermes-dispatcher', 'hermes-runtime', 'hermes-toolbus', 'hermes-memory']));
  }, 60_000);
});

describe('metrics', () => {
  const scrape = async (port: number) => {
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    return res.text();
  };

  it('each service serves Prometheus text on METRICS_PORT with its task, LLM, tool, MCP and bus metrics', async () => {
    const dispatcher = await scrape(metricsPorts.dispatcher);
    expect(dispatcher).toMatch(/^hermes_tasks_submitted_total\{[^}]*\} [1-9]/m);
    expect(dispatcher).toMatch(/^hermes_tasks_ended_total\{status="completed"[^}]*\} [1-9]/m);
    expect(dispatcher).toMatch(/^hermes_task_duration_bucket\{status="completed"/m);
    expect(dispatcher).toMatch(/^hermes_jobs_dispatched_total\{kind="plan"/m);
    expect(dispatcher).toMatch(/^hermes_jobs_dispatched_total\{kind="agent"/m);
    expect(dispatcher).toMatch(/^hermes_jobs_results_total\{outcome="succeeded"/m);
    expect(dispatcher).toMatch(/^hermes_bus_consumer_pending\{[^}]*messaging_destination_name="HERMES_TASK_SUBMIT"[^}]*\} 0/m);
    expect(dispatcher).toMatch(/^hermes_bus_consumer_pending\{[^}]*messaging_destination_name="HERMES_RUNTIME_RESULTS"/m);

    const runtime = await scrape(metricsPorts.runtime);
    expect(runtime).toMatch(/^hermes_llm_calls_total\{[^}]*gen_ai_request_model="scripted-demo"[^}]*outcome="ok"/m);
    expect(runtime).toMatch(/^gen_ai_client_operation_duration_bucket\{[^}]*hermes_llm_pool=/m);
    expect(runtime).toMatch(/^gen_ai_client_token_usage_bucket\{[^}]*gen_ai_token_type="input"/m);
    expect(runtime).toMatch(/^hermes_llm_pool_capacity\{[^}]*\} [1-9]/m);
    expect(runtime).toMatch(/^hermes_llm_pool_in_use\{/m);
    expect(runtime).toMatch(/^hermes_llm_pool_waiters\{/m);
    expect(runtime).toMatch(/^hermes_bus_consumer_pending\{[^}]*messaging_destination_name="HERMES_RUNTIME_JOBS"/m);

    const toolbus = await scrape(metricsPorts.toolbus);
    expect(toolbus).toMatch(/^hermes_tool_calls_total\{[^}]*gen_ai_tool_name="echo"[^}]*outcome="ok"/m);
    expect(toolbus).toMatch(/^hermes_tool_calls_total\{[^}]*gen_ai_tool_name="everything_get-sum"/m);
    expect(toolbus).toMatch(/^hermes_tool_duration_bucket\{[^}]*gen_ai_tool_name="everything_get-sum"/m);
    expect(toolbus).toMatch(/^hermes_tool_approvals_pending\{[^}]*\} 0/m);
    expect(toolbus).toMatch(/^hermes_mcp_server_state\{[^}]*hermes_mcp_server="everything"[^}]*state="ready"[^}]*\} 1/m);
    expect(toolbus).toMatch(/^hermes_mcp_server_healthy\{[^}]*hermes_mcp_server="everything"/m);
  });
});

describe('content capture', () => {
  it('with OTEL_GENAI_CAPTURE_CONTENT=true, chat spans carry the messages and execute_tool spans the arguments and results', async () => {
    // Replace the runtime and toolbus with replicas that capture content.
    for (const name of ['runtime-1', 'toolbus']) await stack.services.get(name)!.stop(5000);
    await stack.startReplica('runtime', 'runtime-content', { OTEL_GENAI_CAPTURE_CONTENT: 'true' });
    await stack.startReplica('toolbus', 'toolbus-content', { OTEL_GENAI_CAPTURE_CONTENT: 'true' });
    await mcpReady();

    const goal = `trace with content ${randomUUID().slice(0, 8)}`;
    const taskId = await submitHttp(goal);
    const events = await collectTaskEvents(stack.bus, taskId, 30_000);
    expect(outcomeOf(events).kind).toBe('completed');
    const spans = await traceOf(traceIdOf(events)!, { wants: plannedTools });

    const worker = named(spans, 'chat scripted-demo', 'hermes-runtime');
    expect(worker.length).toBe(3);
    expect(worker[0]!.attributes['gen_ai.system_instructions']).toContain(goal);
    expect(worker.some((c) => String(c.attributes['gen_ai.output.messages']).includes('The sum is 42.'))).toBe(true);
    expect(worker.some((c) => String(c.attributes['gen_ai.input.messages']).includes('ping'))).toBe(true);
    for (const service of ['hermes-runtime', 'hermes-toolbus']) {
      const [sum] = named(spans, 'execute_tool everything_get-sum', service);
      expect(JSON.parse(String(sum!.attributes['gen_ai.tool.call.arguments']))).toEqual({ a: 19, b: 23 });
      expect(String(sum!.attributes['gen_ai.tool.call.result'])).toContain('42');
    }
    // Services that were not opted in still record none.
    expect(spans.filter((s) => s.service !== 'hermes-runtime' && s.service !== 'hermes-toolbus').filter(hasContent)).toEqual([]);
  }, 90_000);
});
