import { performance } from 'node:perf_hooks';
import { connect } from '@nats-io/transport-node';
import { Kvm, type KV } from '@nats-io/kv';
import { contracts, DEFAULT_TEAM, makeTaskEvent, taskIdFor } from '@hermes/contracts';
import { request, type Bus } from '@hermes/bus';
import type { HermesStack } from '@hermes/devstack';
import { DistributedSemaphore } from '@hermes/semaphore';
import { BenchError } from './bench-errors.js';
import { toolMessageContent } from './direct-agent.js';
import { round, summarise, type LatencySummary } from './stats.js';
import type { StepOverheadOptions } from './step-overhead-options.js';
import type { TaskRun } from './step-overhead-bench.js';
import { natsHandles } from '@hermes/bus/internal';

/** Phases of one step as the runtime timed them (RUNTIME_STEP_TIMING), p50 over the measured steps. */
export interface RuntimePhases {
  steps: number;
  /** From one LLM call's start to the next one's. */
  step_p50_ms: number;
  /** `LlmClient.chat`: permit acquire, the HTTP call, permit release. */
  llm_p50_ms: number;
  /** Checkpoint of the answer with its tool calls, before they run. */
  checkpoint_calls_p50_ms: number;
  /** The toolCall requests (in parallel; one here) until every reply is in. */
  tools_p50_ms: number;
  /** Checkpoint of the tool results, before the next LLM call. */
  /** The rest: building messages, events, validation, the event loop. */
  other_p50_ms: number;
  /** The LLM phase split at the model's clock: from the call's start to the request reaching the model (permit acquire, waiting for the results checkpoint, the SDK, the network)... */
  llm_to_model_p50_ms?: number;
  /** ...and from the request reaching the model to the answer being the loop's (the model answering, the SDK, the event loop). */
  llm_from_model_p50_ms?: number;
}

export interface StepBreakdown {
  /** Each bus hop on a step's path, measured alone from the bench process against the idle stack. */
  hops: Record<string, LatencySummary>;
  /** The runtime's own timings of real steps (a replica started with RUNTIME_STEP_TIMING and LOG_LEVEL=debug). */
  runtime?: RuntimePhases;
  /** ms per step of the timed tasks (timing on), p50, to compare with the untimed run. */
  timed_hermes_ms_per_step_p50?: number;
  /** The direct loop's LLM call, client side, p50 (the HTTP share of `llm_p50_ms`), split the same way at the model's clock. */
  direct_llm_call_p50_ms?: number;
  direct_llm_to_model_p50_ms?: number;
  direct_llm_from_model_p50_ms?: number;
  /** Sizes that set the cost of the KV writes. */
  checkpoint_bytes_mid_task: number;
  notes: string[];
}

interface BreakdownInput {
  stack: HermesStack;
  bus: Bus;
  options: StepOverheadOptions;
  stamp: string;
  log: (line: string) => void;
  hermesTask: (runId: string) => Promise<TaskRun>;
  directTask: (runId: string) => Promise<TaskRun>;
}

/** Times each hop alone, then runs tasks on a runtime replica that logs its per-step phase timings. */
export async function measureBreakdown(i: BreakdownInput): Promise<StepBreakdown> {
  i.log(`breakdown: each bus hop alone, ${i.options.hopIterations} times`);
  const cpBytes = checkpointBytes(Math.floor(i.options.steps / 2));
  const hops = await measureHops(i, cpBytes);
  for (const [name, s] of Object.entries(hops)) i.log(`  ${name}: p50 ${s.p50_ms} ms, p99 ${s.p99_ms} ms`);
  const out: StepBreakdown = { hops, checkpoint_bytes_mid_task: cpBytes, notes: [] };

  i.log('breakdown: runtime step timings (a runtime replica with RUNTIME_STEP_TIMING=true, LOG_LEVEL=debug)');
  const untimed = [...i.stack.services.keys()].filter((n) => n.startsWith('runtime'));
  for (const name of untimed) {
    await i.stack.services.get(name)!.stop(5000);
    i.stack.services.delete(name);
  }
  const timed = await i.stack.startReplica('runtime', 'runtime-timed', { LOG_LEVEL: 'debug', RUNTIME_STEP_TIMING: 'true' });
  const runs: TaskRun[] = [];
  const direct: TaskRun[] = [];
  for (let n = 0; n < Math.max(1, i.options.warmupTasks); n++) await i.hermesTask(`${i.stamp}-t-w${n}`);
  const before = timed.logs.length;
  for (let n = 0; n < i.options.tasks; n++) {
    runs.push(await i.hermesTask(`${i.stamp}-t${n}`));
    direct.push(await i.directTask(`${i.stamp}-td${n}`));
  }
  const lines = timed.logs.slice(before).flatMap(parseStepTiming);
  // Each step's LLM call lined up with its request reaching the model (both on the machine's clock).
  const arrivalsByTask = new Map(runs.map((r) => [r.taskId, r.arrivals]));
  const toModel: number[] = [];
  const fromModel: number[] = [];
  for (const l of lines) {
    const arrival = arrivalsByTask.get(l.task_id)?.[l.step - 1];
    if (arrival === undefined || l.llm_ms === undefined || l.step < 2) continue;
    toModel.push(arrival - l.started_at);
    fromModel.push(l.started_at + l.llm_ms - arrival);
  }
  if (lines.length === 0) {
    out.notes.push('the runtime logged no step timings (a runtime without RUNTIME_STEP_TIMING support?)');
  } else {
    // The final step has no tool call; the breakdown is of steps that made one.
    const steps = lines.filter((l) => l.tools_ms !== undefined);
    const p50 = (pick: (l: StepTimingLine) => number | undefined) => summarise(steps.map(pick).filter((x): x is number => x !== undefined)).p50_ms;
    out.runtime = {
      steps: steps.length,
      step_p50_ms: p50((l) => l.total_ms),
      llm_p50_ms: p50((l) => l.llm_ms),
      checkpoint_calls_p50_ms: p50((l) => l.checkpoint_ms),
      tools_p50_ms: p50((l) => l.tools_ms),
      other_p50_ms: p50((l) => l.other_ms),
      ...(toModel.length ? { llm_to_model_p50_ms: summarise(toModel).p50_ms, llm_from_model_p50_ms: summarise(fromModel).p50_ms } : {}),
    };
    i.log(`  ${JSON.stringify(out.runtime)}`);
  }
  out.timed_hermes_ms_per_step_p50 = summarise(runs.flatMap((r) => r.stepMs)).p50_ms;
  out.direct_llm_call_p50_ms = summarise(direct.flatMap((r) => r.callMs ?? [])).p50_ms;
  const directTo = direct.flatMap((r) => r.arrivals.slice(1).map((a, k) => a - r.callStartedAt![k + 1]!));
  const directFrom = direct.flatMap((r) => r.arrivals.slice(1).map((a, k) => r.callStartedAt![k + 1]! + r.callMs![k + 1]! - a));
  out.direct_llm_to_model_p50_ms = summarise(directTo).p50_ms;
  out.direct_llm_from_model_p50_ms = summarise(directFrom).p50_ms;
  return out;
}

/** One `step timing` debug line of the runtime. */
export interface StepTimingLine {
  task_id?: string;
  step: number;
  started_at: number;
  total_ms: number;
  llm_ms?: number;
  checkpoint_ms?: number;
  tools_ms?: number;
  other_ms?: number;
}

/** The step timing in a runtime log line, if it is one. */
export function parseStepTiming(line: string): StepTimingLine[] {
  if (!line.includes('step_timing')) return [];
  const json = line.slice(line.indexOf('{'));
  try {
    const parsed = JSON.parse(json) as { step_timing?: StepTimingLine; task_id?: string };
    const t = parsed.step_timing;
    return t && typeof t.total_ms === 'number' ? [{ ...t, ...(parsed.task_id ? { task_id: parsed.task_id } : {}) }] : [];
  } catch {
    return [];
  }
}

/** The size of a checkpoint half-way through a task, as the runtime writes it. */
function checkpointBytes(toolSteps: number): number {
  const messages: unknown[] = [{ role: 'user', content: 'x'.repeat(120) }];
  for (let n = 1; n <= toolSteps; n++) {
    messages.push({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: `call_scripted_${n}`, type: 'function', function: { name: 'echo', arguments: JSON.stringify({ text: `step ${n}` }) } }],
    });
    messages.push({ role: 'tool', tool_call_id: `call_scripted_${n}`, content: toolMessageContent(`step ${n}`) });
  }
  const calls = Array.from({ length: toolSteps }, (_, n) => `echo {"text":"step ${n + 1}"}`);
  return Buffer.byteLength(
    JSON.stringify({
      v: 1,
      job_id: 'j_0123456789abcdef0123456789abcdef:main',
      step: toolSteps,
      messages,
      usage: { input_tokens: 1000, output_tokens: 100 },
      calls,
      pending: true,
    }),
  );
}

export async function timeEach(iterations: number, run: (n: number) => Promise<unknown>): Promise<LatencySummary> {
  const warmup = Math.min(50, Math.ceil(iterations / 10));
  for (let n = 0; n < warmup; n++) await run(-1 - n);
  const samples: number[] = [];
  for (let n = 0; n < iterations; n++) {
    const t0 = performance.now();
    await run(n);
    samples.push(performance.now() - t0);
  }
  return summarise(samples);
}

async function measureHops(i: BreakdownInput, cpBytes: number): Promise<Record<string, LatencySummary>> {
  const { bus, stamp } = i;
  const n = i.options.hopIterations;
  const kvm = new Kvm(natsHandles(bus).js);
  const hops: Record<string, LatencySummary> = {};

  // A core NATS round trip between two connections: the floor under every request and KV write.
  const responder = await connect({ servers: i.stack.natsUrl, name: 'bench-hop-responder' });
  try {
    const subject = `bench.hop.${stamp}.ping`;
    responder.subscribe(subject, {
      callback: (_e, m) => {
        m.respond(m.data);
      },
    });
    await responder.flush();
    hops.nats_request_reply = await timeEach(n, () => natsHandles(bus).nc.request(subject, new Uint8Array(64), { timeout: 5000 }));
  } finally {
    await responder.close();
  }

  // Checkpoints: a compare-and-set write of a mid-task checkpoint.
  const checkpoints: KV = await kvm.open(bus.subjects.buckets.checkpoints);
  const cpKey = `job.bench_hop_${stamp}`;
  const cpValue = 'x'.repeat(cpBytes);
  let cpRev = await checkpoints.create(cpKey, cpValue);
  hops.checkpoint_save = await timeEach(n, async () => {
    cpRev = await checkpoints.update(cpKey, cpValue, cpRev);
  });
  await checkpoints.purge(cpKey).catch(() => undefined);

  // The toolbus's record of one call: read (absent), create as running, update to done.
  const calls: KV = await kvm.open(bus.subjects.buckets.toolCalls);
  const record = JSON.stringify({
    call_id: 'x',
    origin: { idempotency_key: 'x'.repeat(60), task_id: 'x'.repeat(34), tool: 'echo', raw_arguments: '{"text":"step 1"}' },
    state: 'running',
    attempt: 1,
    pad: 'x'.repeat(300),
  });
  const keyOf = (k: number) => `bench_hop_${stamp}.${k < 0 ? `w${-k}` : k}`;
  hops.tool_record_get_absent = await timeEach(n, (k) => calls.get(keyOf(k)));
  const revs = new Map<number, number>();
  hops.tool_record_create = await timeEach(n, async (k) => revs.set(k, await calls.create(keyOf(k), record)));
  hops.tool_record_update = await timeEach(n, (k) => calls.update(keyOf(k), record, revs.get(k) ?? 0));

  // Step events: one JetStream publish, awaiting the ack, with validation and de-duplication id.
  const taskId = taskIdFor(DEFAULT_TEAM, '/bench/hops', stamp);
  hops.step_event_publish = await timeEach(n, (k) =>
    bus.publish(
      contracts.taskEvents,
      makeTaskEvent('step', {
        id: `bench-hop-${stamp}-${k}`,
        source: 'hermes/bench',
        taskId,
        data: { task_id: taskId, subtask_id: 'main', step: 1, kind: 'tool_call', detail: { tool: 'echo', arguments: '{"text":"step 1"}' } },
      }),
      {
        subject: bus.subjects.taskEvents(DEFAULT_TEAM, taskId),
        msgId: `bench-hop-${stamp}-${k}`,
      },
    ),
  );

  // The LLM semaphore, uncontended, on the stack's own bucket (a pool of its own).
  const sem = await DistributedSemaphore.open({
    kv: await kvm.open(bus.subjects.buckets.llmSemaphore),
    poolSettings: () => ({ capacity: 1_000_000 }),
    leaseMs: 15_000,
  });
  try {
    const acquire: number[] = [];
    const release: number[] = [];
    for (let k = -20; k < n; k++) {
      const t0 = performance.now();
      const permit = await sem.acquire(`bench_hop_${stamp}`);
      const t1 = performance.now();
      await permit.release({ tokens: 100 });
      if (k >= 0) {
        acquire.push(t1 - t0);
        release.push(performance.now() - t1);
      }
    }
    hops.semaphore_acquire = summarise(acquire);
    hops.semaphore_release = summarise(release);
  } finally {
    await sem.close();
  }

  // A whole tool call through the live toolbus (a new idempotency key each time).
  hops.tool_call_request = await timeEach(n, (k) =>
    request(bus, contracts.toolCall, {
      idempotency_key: `${taskId}:main:${k < 0 ? 1000 - k : k + 1}:0`,
      task_id: taskId,
      subtask_id: 'main',
      step: k < 0 ? 1000 - k : k + 1,
      call_index: 0,
      tool_call_id: `call_${k}`,
      user_id: 'bench',
      roles: ['user'],
      tool: i.options.tool,
      arguments: JSON.stringify(i.options.tool === 'echo' ? { text: `hop ${k}` } : { timezone: 'UTC' }),
    }).then((r) => {
      if (r.status !== 'ok') throw new BenchError('tool_call_failed', `tool call answered ${JSON.stringify(r)}`);
    }),
  );
  for (const s of Object.values(hops)) Object.assign(s, { p50_ms: round(s.p50_ms), p99_ms: round(s.p99_ms) });
  return hops;
}
