import { setTimeout as sleep } from 'node:timers/promises';
import type { JsMsg } from '@nats-io/jetstream';
import { consumeContract, serve, type WorkConsumer } from '@hermes/bus';
import {
  contracts,
  taskEventData,
  type MemoryRecallReply,
  type MemoryRecallRequest,
  type RuntimeJob,
  type RuntimeResult,
  type SessionAppendRequest,
  type SessionMessage,
  type SessionContextRequest,
  type TaskEvent,
  type TaskEventDataByKind,
  type ToolCallReply,
  type ToolCallRequest,
  type ToolDefinition,
  type ToolsListRequest,
} from '@hermes/contracts';
import { LlmClient, PoolResolver, roleEndpoints, type PoolConfig } from '@hermes/llm';
import type { ScriptedLlm } from '@hermes/testkit';
import { CheckpointStore, JobCheckpoint, type Checkpoint } from '../src/checkpoint-store.js';
import { assembleRuntime, runtimeConfig } from '../src/runtime-service.js';
import { ToolCaller } from '../src/tool-caller.js';
import { connectBus, silentLogger, storedPayloads, taskEvents, uniquePrefix } from './support.js';
import { natsHandles } from '@hermes/bus/internal';

export const MODEL = 'test-worker';

let jobs = 0;
/** A job of a task of its own (task ids never repeat within a test file). */
export function makeJob(j: Partial<RuntimeJob> = {}): RuntimeJob {
  const taskId = `t_job${++jobs}p${process.pid}`;
  return {
    job_id: `${taskId}-main`,
    task_id: taskId,
    subtask_id: 'main',
    user_id: 'u_alice',
    session_id: 'sess_1',
    goal: 'summarise the incident',
    model_role: 'worker',
    ...j,
  };
}

export const toolDefinition = (name: string): ToolDefinition => ({
  name,
  description: `the ${name} tool`,
  parameters: { type: 'object', properties: {} },
});

/** The toolbus reply for a call that ran and returned `result`. */
export const okReply = (req: ToolCallRequest, result: unknown, extra: Partial<ToolCallReply> = {}): ToolCallReply => ({
  call_id: `call-${req.idempotency_key}`,
  status: 'ok',
  result,
  ...extra,
});

export interface ToolCallRecord {
  req: ToolCallRequest;
  /** When the stand-in received it (`Date.now()`). */
  at: number;
}

export interface FixtureOptions {
  /** Deliveries of one job before it fails (default 3). */
  maxAttempts?: number;
  /** Register the memory stand-in (default true); false leaves nobody answering memory requests. */
  memory?: boolean;
  history?: SessionMessage[];
  /** Answers memoryRecall (default: nobody does, so recall fails with no_responders). */
  onRecall?: (req: MemoryRecallRequest) => Promise<MemoryRecallReply>;
  /** Answers sessionAppend (default: records the request and replies with no messages). */
  onSessionAppend?: (req: SessionAppendRequest) => Promise<void>;
  /** What the toolbus stand-in lists (default: web_search). */
  tools?: ToolDefinition[];
  /** Answers toolCall (default: ok with `{ tool, arguments }`). */
  onToolCall?: (req: ToolCallRequest) => Promise<ToolCallReply>;
  /** Runtime default loop limits (default maxSteps 10, maxRepeats 2). */
  maxSteps?: number;
  maxRepeats?: number;
  toolRequestTimeoutMs?: number;
  approvalPollMs?: number;
  /** Each checkpoint write waits this long before it is sent (a slow KV), to order it against tool calls. */
  checkpointDelayMs?: number;
  /** Give jobs the cancellation signal the runtime's main gives them (default: none). */
  cancellable?: boolean;
  /** The memory stand-in answers sessionContext this much later (a slow memory service). */
  sessionContextDelayMs?: number;
  /** The model's context window (MODEL_CONTEXT_TOKENS; default the runtime's). */
  contextTokens?: number;
  /** LLM_KEEP_REASONING (default false). */
  keepReasoning?: boolean;
  /** LLM_POOLS (default none). */
  pools?: PoolConfig[];
}

/**
 * A runtime on streams and a checkpoint bucket of its own: the JobRunner with a real LlmClient
 * against the scripted model, and memory and toolbus stand-ins that are real responders on the bus.
 */
export async function runtimeFixture(natsUrl: string, llm: ScriptedLlm, opts: FixtureOptions = {}) {
  const bus = await connectBus(natsUrl, uniquePrefix('runtime'), { runtimeAckWaitMs: 5_000 });
  await bus.ensureStreams(['runtimeJobs', 'runtimeResults', 'taskEvents']);
  await bus.ensureConsumers(['runtimeJobs']);
  const kv = await bus.kv('checkpoints');

  const reads: SessionContextRequest[] = [];
  const appends: SessionAppendRequest[] = [];
  const toolLists: ToolsListRequest[] = [];
  const toolCalls: ToolCallRecord[] = [];
  const inFlight = { now: 0, max: 0 };
  // When each stand-in request arrived (Date.now()), in arrival order.
  const arrivals: { request: 'sessionContext' | 'toolsList'; at: number }[] = [];
  if (opts.memory !== false) {
    serve(bus, contracts.sessionContext, async (req) => {
      arrivals.push({ request: 'sessionContext', at: Date.now() });
      reads.push(req);
      if (opts.sessionContextDelayMs) await sleep(opts.sessionContextDelayMs);
      const messages = (opts.history ?? []).map((m) => ({
        role: m.role,
        content: m.content,
        message_id: m.message_id,
        kind: 'message' as const,
        tokens: m.tokens,
      }));
      return {
        messages,
        tokens: messages.reduce((sum, m) => sum + m.tokens, 0),
        budget: req.context_limit,
        summary_used: false,
        truncated_tool_results: 0,
        dropped_messages: 0,
      };
    });
    serve(bus, contracts.sessionAppend, async (req) => {
      await opts.onSessionAppend?.(req);
      appends.push(req);
      return { messages: [] };
    });
  }
  const recalls: MemoryRecallRequest[] = [];
  if (opts.onRecall) {
    const onRecall = opts.onRecall;
    serve(bus, contracts.memoryRecall, async (req) => {
      recalls.push(req);
      return onRecall(req);
    });
  }
  serve(bus, contracts.toolsList, async (req) => {
    arrivals.push({ request: 'toolsList', at: Date.now() });
    toolLists.push(req);
    return { tools: opts.tools ?? [toolDefinition('web_search')] };
  });
  serve(bus, contracts.toolCall, async (req) => {
    toolCalls.push({ req, at: Date.now() });
    inFlight.max = Math.max(inFlight.max, ++inFlight.now);
    try {
      return await (opts.onToolCall ?? (async (r) => okReply(r, { tool: r.tool, arguments: JSON.parse(r.arguments) as unknown })))(req);
    } finally {
      inFlight.now--;
    }
  });
  await natsHandles(bus).nc.flush();

  // The runtime's own settings and wiring (assembleRuntime), with the test's limits as env.
  const env: Record<string, string> = {
    OPENAI_BASE_URL: llm.baseUrl,
    OPENAI_API_KEY: 'test-key',
    HERMES_MODEL_WORKER: MODEL,
    // No retries, so one call is one attempt.
    LLM_MAX_RETRIES: '0',
    LLM_TIMEOUT_MS: '5000',
    RUNTIME_MAX_ATTEMPTS: String(opts.maxAttempts ?? 3),
    AGENT_MAX_STEPS: String(opts.maxSteps ?? 10),
    AGENT_MAX_REPEATS: String(opts.maxRepeats ?? 2),
    APPROVAL_POLL_MS: String(opts.approvalPollMs ?? 10_000),
    ...(opts.contextTokens ? { MODEL_CONTEXT_TOKENS: String(opts.contextTokens) } : {}),
  };
  const toolTimeoutMs = opts.toolRequestTimeoutMs ?? 3_000;
  // A test's own bound below the setting's floor (1 s) is passed to the ToolCaller directly.
  if (toolTimeoutMs >= 1_000) env.TOOL_CALL_TIMEOUT_MS = String(toolTimeoutMs);
  const config = runtimeConfig(env);
  // The real client without the cluster semaphore: these tests run one job at a time and count its requests.
  const client = new LlmClient({
    roles: roleEndpoints(config),
    maxRetries: config.LLM_MAX_RETRIES,
    timeoutMs: config.LLM_TIMEOUT_MS,
    keepReasoning: opts.keepReasoning ?? false,
    pools: new PoolResolver(opts.pools ?? [], { capacity: 8 }),
  });
  const { runner, cancellations } = await assembleRuntime({
    bus,
    config,
    llm: client,
    logger: silentLogger,
    overrides: {
      // These tests see an absent stand-in fail at once, take no session locks (memory's own tests cover
      // them), and only the ones that ask for it get cancellations.
      outage: undefined,
      sessions: undefined,
      ...(opts.cancellable ? {} : { cancellations: undefined }),
      ...(opts.checkpointDelayMs ? { checkpoints: new DelayedCheckpointStore({ kv, bucket: bus.subjects.buckets.checkpoints }, opts.checkpointDelayMs) } : {}),
      ...(toolTimeoutMs < 1_000 ? { tools: new ToolCaller({ bus, requestTimeoutMs: toolTimeoutMs, approvalPollMs: config.APPROVAL_POLL_MS }) } : {}),
    },
  });
  const consumer = await natsHandles(bus).js.consumers.get(bus.subjects.streams.runtimeJobs, bus.subjects.consumers.runtimeJobs);
  const consumers: WorkConsumer[] = [];

  const nextDelivery = async (): Promise<JsMsg> => {
    const msg = await consumer.next({ expires: 2_000 });
    if (!msg) throw new Error('the job was not delivered');
    return msg;
  };

  return {
    bus,
    runner,
    reads,
    appends,
    /** memoryRecall requests the onRecall stand-in received. */
    recalls,
    toolLists,
    arrivals,
    /** toolCall requests the toolbus stand-in received, in arrival order. */
    toolCalls,
    /** Most toolCall requests the stand-in held at once. */
    get maxToolCallsInFlight() {
      return inFlight.max;
    },
    /** A checkpoint store of "another runtime" on the same bucket. */
    otherRuntime: async () => anotherRuntime(new CheckpointStore({ kv: await bus.kv('checkpoints'), bucket: bus.subjects.buckets.checkpoints })),
    /** Publishes the job and returns its `delivery`-th delivery (earlier ones are nak'ed, as a failed handler would). */
    async deliver(j: RuntimeJob, delivery = 1): Promise<JsMsg> {
      await bus.publish(contracts.runtimeJobs, j, { msgId: j.job_id });
      for (;;) {
        const msg = await nextDelivery();
        if (msg.info.deliveryCount >= delivery) return msg;
        msg.nak();
      }
    },
    /** Naks a delivery, as the consumer does when the handler threw, and returns the next one. */
    async redeliver(msg: JsMsg): Promise<JsMsg> {
      msg.nak();
      return nextDelivery();
    },
    /** Runs the JobRunner as the runtime's consumer does, redelivering quickly after a failure. */
    async consume(): Promise<void> {
      consumers.push(
        await consumeContract(
          bus,
          contracts.runtimeJobs,
          { stream: bus.subjects.streams.runtimeJobs, durable: bus.subjects.consumers.runtimeJobs, retryDelayMs: 50, heartbeatMs: 500 },
          (j, msg) => runner.run(j, msg),
        ),
      );
    },
    results: async () => (await storedPayloads(bus, bus.subjects.streams.runtimeResults)) as RuntimeResult[],
    events: (taskId: string) => taskEvents(bus, taskId),
    /** The data of the step events of a task, oldest first. */
    steps: async (taskId: string) => stepData(await taskEvents(bus, taskId)),
    pendingJobs: async () => (await natsHandles(bus).jsm.streams.info(bus.subjects.streams.runtimeJobs)).state.messages,
    async close(): Promise<void> {
      await Promise.all(consumers.map((c) => c.stop(1_000)));
      cancellations.stop();
      await bus.drain();
    },
  };
}

export type RuntimeFixture = Awaited<ReturnType<typeof runtimeFixture>>;

type StoreOptions = ConstructorParameters<typeof CheckpointStore>[0];

/** The real store, whose writes are sent only after a delay. */
export class DelayedCheckpointStore extends CheckpointStore {
  constructor(
    private readonly options: StoreOptions,
    private readonly delayMs: number,
  ) {
    super(options);
  }

  override open(jobId: string): JobCheckpoint {
    return new DelayedJobCheckpoint({ ...this.options, jobId }, this.delayMs);
  }
}

class DelayedJobCheckpoint extends JobCheckpoint {
  constructor(
    options: StoreOptions & { jobId: string },
    private readonly delayMs: number,
  ) {
    super(options);
  }

  override async save(cp: Checkpoint): Promise<void> {
    // The loop goes on changing its checkpoint object once saved: write what it was when handed over.
    const copy = structuredClone(cp);
    await sleep(this.delayMs);
    return super.save(copy);
  }
}

/** Checkpoint reads and writes as another runtime's deliveries of the same jobs make them (one fence per job). */
function anotherRuntime(store: CheckpointStore) {
  const handles = new Map<string, JobCheckpoint>();
  const of = (jobId: string) => {
    let h = handles.get(jobId);
    if (!h) handles.set(jobId, (h = store.open(jobId)));
    return h;
  };
  return { load: (jobId: string) => of(jobId).load(), save: (cp: Checkpoint) => of(cp.job_id).save(cp) };
}

/** The data of the step events among `events`, oldest first. */
export function stepData(events: readonly TaskEvent[]): TaskEventDataByKind['step'][] {
  return events.flatMap((e) => {
    const d = taskEventData(e, 'step');
    return d ? [d] : [];
  });
}

/** What a promise rejected with (throws when it resolved). */
export async function rejectionOf(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => {
      throw new Error('expected the promise to reject');
    },
    (err: unknown) => err,
  );
}
