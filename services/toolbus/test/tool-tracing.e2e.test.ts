import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { context, trace, type Span } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { contracts } from '@hermes/contracts';
import { request } from '@hermes/bus';
import { installPropagation } from '@hermes/telemetry';
import { cleanupAll, eventually, startNatsServer } from '@hermes/testkit';
import { callRequest, callTool, connect, freshPrefix, remoteTool, startStandInProvider, startTestToolbus, waitForTool } from './helpers.js';

const exporter = new InMemorySpanExporter();
let natsUrl: string;
const cleanups: (() => Promise<void> | void)[] = [];

beforeAll(async () => {
  installPropagation();
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
  natsUrl = (await startNatsServer()).url;
});

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

afterAll(async () => {
  trace.disable();
  await cleanupAll();
});

/** Runs `fn` inside a new recording span (a trace of its own) and returns the span. */
async function inNewTrace<T>(name: string, fn: () => Promise<T>): Promise<{ span: Span; result: T }> {
  const span = trace.getTracer('test').startSpan(name, { root: true });
  try {
    return { span, result: await context.with(trace.setSpan(context.active(), span), fn) };
  } finally {
    span.end();
  }
}

const finished = (name: string): Promise<ReadableSpan> =>
  eventually(() => exporter.getFinishedSpans().find((s) => s.name === name), 5000, `a finished span "${name}"`);

/** A span's parent, once it has finished too: a parent ends after its children, so it is exported later (a loaded machine shows the gap). */
const parentOf = (s: ReadableSpan): Promise<ReadableSpan> =>
  eventually(() => exporter.getFinishedSpans().find((p) => p.spanContext().spanId === s.parentSpanContext?.spanId), 5000, `the parent of span "${s.name}"`);

describe('toolbus spans', () => {
  it('a call runs in an execute_tool span, child of the request, with the model tool call id and no content by default', async () => {
    const bus = await connect(natsUrl, freshPrefix());
    const toolbus = await startTestToolbus(bus);
    cleanups.push(async () => (await toolbus.stop(2000), await bus.drain()));
    const req = callRequest({ tool: 'echo', arguments: '{"text":"hello"}', tool_call_id: 'call_model_7' });

    const { span: caller } = await inNewTrace('agent step', () => callTool(bus, req));

    const exec = await finished('execute_tool echo');
    expect(exec.spanContext().traceId).toBe(caller.spanContext().traceId);
    expect((await parentOf(exec)).name).toBe('process toolCall');
    expect(exec.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'echo',
      'gen_ai.tool.call.id': 'call_model_7',
      'hermes.tool.provider': 'builtin',
    });
    expect(exec.attributes['gen_ai.tool.call.arguments']).toBeUndefined();
    expect(exec.attributes['gen_ai.tool.call.result']).toBeUndefined();
  });

  it("an approved call runs in the trace of the request that parked it, linked to the approver's", async () => {
    const bus = await connect(natsUrl, freshPrefix());
    await bus.ensureStreams(['taskEvents']);
    const toolbus = await startTestToolbus(bus);
    const provider = await startStandInProvider(bus, {
      provider: 'bank',
      tools: [
        {
          ...remoteTool('wire_money'),
          require_confirm: true,
          parameters: { type: 'object', properties: { amount: { type: 'integer' } }, required: ['amount'] },
        },
      ],
      run: async (r) => ({ sent: r.arguments.amount }),
    });
    cleanups.push(async () => (provider.stop(), await toolbus.stop(2000), await bus.drain()));
    await waitForTool(bus, 'wire_money');
    const req = callRequest({ task_id: 't_pay', tool: 'wire_money', arguments: '{"amount": 5}', tool_call_id: 'call_pay' });

    const { span: agent, result: pending } = await inNewTrace('agent step', () => callTool(bus, req));
    expect(pending.status).toBe('pending_approval');
    const { span: approver } = await inNewTrace('approval request', () =>
      request(bus, contracts.toolApprovalDecide, { task_id: 't_pay', call_id: pending.call_id, decision: 'approve', decided_by: 'alice' }),
    );

    const exec = await finished('execute_tool wire_money');
    const run = await parentOf(exec);
    expect(exec.spanContext().traceId).toBe(agent.spanContext().traceId);
    expect(exec.attributes['gen_ai.tool.call.id']).toBe('call_pay');
    expect(run.name).toBe('run approved call');
    expect(run.attributes['hermes.tool.decided_by']).toBe('alice');
    expect(run.links.map((l) => l.context.traceId)).toEqual([approver.spanContext().traceId]);
    expect(provider.received).toHaveLength(1);
  });
});
